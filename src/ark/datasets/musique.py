"""MuSiQue (Trivedi et al., TACL 2022): multi-hop questions over Wikipedia paragraphs,
in its own record format, scored against a graph built from documents.

A record is ``{"id", "question", "answer", "answer_aliases"?, "paragraphs": [{"title",
"paragraph_text", "is_supporting"}]}`` (a JSONL file, as MuSiQue ships it, or a JSON
array, as HippoRAG's copy is). The supporting paragraphs are found among the index's
passage nodes by title and text (:class:`~ark.datasets._passages.PassageMatcher`); they
are the question's gold nodes, so Hit@k and MRR ask for a supporting passage and passage
recall for all of them. ``answer`` and ``answer_aliases`` are the gold strings of exact
match and F1. The query type is the id's prefix (``2hop``, ``3hop1``, ``4hop3``...),
which is how MuSiQue names a question's shape. The optional ``question_decomposition``
(``[{"paragraph_support_idx", ...}]``, one step per hop, in order) names the paragraph
each hop reads: the last step's is the passage that states the answer
(``Query.answer_passage``, scored by ``answer@k``). A question of MuSiQue-Full marked
``"answerable": false`` may have no supporting paragraph: it is kept with no gold node
(the run reports it among the questions with no answer in the graph).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ark.datasets._passages import PassageMatcher, field_of, read_records
from ark.datasets._queries import Query
from ark.errors import ArkError

if TYPE_CHECKING:
    from ark.index import Index


def load_musique(path: str | Path, index: Index) -> list[Query]:
    """MuSiQue's records in ``path`` as queries over ``index`` (a document graph).

    A supporting paragraph the index lacks is kept in ``Query.missing`` (by title) with
    an empty group in ``Query.supporting``: recall counts it as not retrieved.
    """
    path = Path(path)
    matcher = PassageMatcher(index.graph, f"--dataset musique:{path}")
    queries = []
    for where, record in read_records(path):
        qid = str(field_of(record, "id", (str, int), where))
        question = field_of(record, "question", str, where)
        answer = field_of(record, "answer", str, where)
        aliases = record.get("answer_aliases") or []
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise ArkError(f"{where}: 'answer_aliases' must be a list of strings")
        paragraphs = field_of(record, "paragraphs", list, where)
        supporting: list[frozenset[int]] = []
        groups: dict[int, frozenset[int]] = {}  # paragraph position -> its group
        missing: list[str] = []
        for i, paragraph in enumerate(paragraphs):
            at = f"{where}, paragraph {i}"
            if not isinstance(paragraph, dict):
                raise ArkError(f"{at}: a paragraph must be a JSON object")
            if not field_of(paragraph, "is_supporting", bool, at):
                continue
            title = field_of(paragraph, "title", str, at)
            group = matcher.match(title, field_of(paragraph, "paragraph_text", str, at))
            supporting.append(group)
            groups[i] = group
            if not group:
                missing.append(title)
        if not supporting and record.get("answerable") is not False:
            # MuSiQue-Full's unanswerable questions have none: kept, with no gold
            raise ArkError(f"{where}: no paragraph has is_supporting true")
        queries.append(
            Query(
                id=qid,
                text=question,
                gold=frozenset().union(*supporting),
                qtype=qid.split("__", 1)[0] if "__" in qid else None,
                missing=tuple(missing),
                answers=(answer, *aliases),
                supporting=tuple(supporting),
                answer_passage=_answer_passage(record, groups, where),
            )
        )
    return queries


def _answer_passage(
    record: dict[str, Any], groups: dict[int, frozenset[int]], where: str
) -> frozenset[int] | None:
    """The group of the paragraph the last step of ``question_decomposition`` reads
    (``paragraph_support_idx``): the one that states the answer. None when the record
    has no decomposition (it is optional), the step names no paragraph, or the question
    is one of MuSiQue-Full's unanswerable ones (its steps may read paragraphs that were
    taken out); in an answerable question, a step that names a paragraph that is not a
    supporting one is an error in the file."""
    steps = record.get("question_decomposition")
    if steps is None or steps == [] or record.get("answerable") is False:
        return None
    if not isinstance(steps, list) or not all(isinstance(s, dict) for s in steps):
        raise ArkError(f"{where}: 'question_decomposition' must be a list of objects")
    last = steps[-1].get("paragraph_support_idx")
    if last is None:
        return None
    if isinstance(last, bool) or not isinstance(last, int) or last not in groups:
        raise ArkError(
            f"{where}: the last step of 'question_decomposition' reads paragraph "
            f"{last!r}, which is not a supporting paragraph"
        )
    return groups[last]
