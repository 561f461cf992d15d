"""Questions over your own documents, in a plain format: what a user who ingested a
corpus of their own (``ark ingest``) writes to measure it, with no benchmark's record
layout to imitate.

A record (a JSON array or JSONL, one per question)::

    {"id"?, "question", "answer" | "answers", "answer_aliases"?, "supporting"?, "type"?}

- ``answer`` (a string) and ``answer_aliases``, or ``answers`` (a list of strings): the
  gold strings of exact match and F1;
- ``supporting``: the passages that hold the evidence, each either an object
  ``{"title"?, "text"}`` (a paragraph as the corpus has it; found among the index's
  passage nodes by title and text, as MuSiQue's are, so an index ``ark ingest`` cut
  into chunks is matched by its chunks) or a string, a document's title (every
  passage of that document: for a folder of ``.txt`` files, the file name without its
  extension);
- ``id``: default, the record's number; ``type``: the query type of the breakdown.

With ``supporting``, a question is scored as MuSiQue's are (passage recall, Hit@k of
the passage list, and EM/F1 with ``--answer``). Without it, only the answer can be
scored: the run needs ``--answer``. A file gives supporting passages for every
question or for none, so that every row of its summary averages the same questions.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ark.datasets._passages import PassageMatcher, field_of, read_records
from ark.datasets._queries import Query
from ark.errors import ArkError

if TYPE_CHECKING:
    from ark.index import Index


def load_docqa(path: str | Path, index: Index) -> list[Query]:
    """The records of ``path`` as queries over ``index`` (a graph built from documents).

    A supporting passage the index lacks is kept in ``Query.missing`` with an empty
    group in ``Query.supporting``, as for MuSiQue; a question with no ``supporting``
    is a :attr:`Query.by_answer` one.
    """
    path = Path(path)
    matcher = PassageMatcher(index.graph, f"--dataset docqa:{path}")
    queries: list[Query] = []
    seen: dict[str, str] = {}
    first_by_answer: bool | None = None
    for n, (where, record) in enumerate(read_records(path)):
        qid = str(field_of(record, "id", (str, int), where)) if "id" in record else str(n)
        if qid in seen:
            raise ArkError(f"{where}: id {qid!r} repeats the id of {seen[qid]}")
        seen[qid] = where
        question = field_of(record, "question", str, where)
        answers = _answers(record, where)
        qtype = field_of(record, "type", str, where) if record.get("type") is not None else None
        given = record.get("supporting")
        by_answer = given is None or given == []
        if first_by_answer is None:
            first_by_answer = by_answer
        elif by_answer != first_by_answer:
            raise ArkError(
                f"{where}: "
                + (
                    "gives no supporting passages while the records before it do"
                    if by_answer
                    else "gives supporting passages while the records before it do not"
                )
                + "; give them for every question or for none"
            )
        supporting: list[frozenset[int]] = []
        missing: list[str] = []
        if not by_answer:
            if not isinstance(given, list):
                raise ArkError(f"{where}: 'supporting' must be a list, got {type(given).__name__}")
            for i, item in enumerate(given):
                group, label = _supporting(matcher, item, f"{where}, supporting {i}")
                supporting.append(group)
                if not group:
                    missing.append(label)
        queries.append(
            Query(
                id=qid,
                text=question,
                gold=frozenset().union(*supporting),
                qtype=qtype,
                missing=tuple(missing),
                answers=answers,
                supporting=tuple(supporting),
                by_answer=by_answer,
            )
        )
    if not queries:
        raise ArkError(f"{path}: no questions")
    return queries


def _answers(record: dict[str, Any], where: str) -> tuple[str, ...]:
    """The gold strings: ``answers``, or ``answer`` with its ``answer_aliases``."""
    if "answers" in record:
        if "answer" in record:
            raise ArkError(f"{where}: give 'answer' or 'answers', not both")
        found = field_of(record, "answers", list, where)
        aliases: list[Any] = []
    else:
        found = [field_of(record, "answer", str, where)]
        aliases = record.get("answer_aliases") or []
        if not isinstance(aliases, list):
            raise ArkError(f"{where}: 'answer_aliases' must be a list of strings")
    strings = [*found, *aliases]
    if not all(isinstance(a, str) for a in strings):
        raise ArkError(f"{where}: answers must be strings")
    if not any(a.strip() for a in strings):
        raise ArkError(f"{where}: no non-empty answer")
    return tuple(a for a in strings if a.strip())


def _supporting(matcher: PassageMatcher, item: Any, where: str) -> tuple[frozenset[int], str]:
    """The passage nodes of one supporting entry, and how a miss is reported."""
    if isinstance(item, str):
        if not item.strip():
            raise ArkError(f"{where}: an empty title")
        return matcher.match_title(item), item
    if isinstance(item, dict):
        text = field_of(item, "text", str, where)
        title = item.get("title")
        if title is not None and not isinstance(title, str):
            raise ArkError(f"{where}: 'title' must be a string, got {type(title).__name__}")
        return matcher.match(title or None, text), title or text[:60]
    raise ArkError(
        f'{where}: a supporting passage is a document title or {{"title"?, "text"}}, '
        f"got {type(item).__name__}"
    )
