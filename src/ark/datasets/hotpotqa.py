"""HotpotQA (Yang et al., EMNLP 2018): two-hop questions over Wikipedia paragraphs, in
its own record format, scored against a graph built from documents.

A record is ``{"_id", "question", "answer", "supporting_facts": [[title, sent_id]],
"context": [[title, [sentence, ...]]], "type"?}`` (HotpotQA ships a JSON array; JSONL
is read too). A supporting paragraph is a context paragraph whose title a supporting
fact names; its text is its sentences joined. It is found among the index's passage
nodes by title and text as for MuSiQue (:mod:`ark.datasets.musique`); ``answer`` is the
one gold string (HotpotQA has no aliases) and ``type`` (``bridge`` / ``comparison``)
the query type.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ark.datasets._passages import PassageMatcher, field_of, read_records
from ark.datasets._queries import Query
from ark.errors import ArkError

if TYPE_CHECKING:
    from ark.index import Index


def load_hotpotqa(path: str | Path, index: Index) -> list[Query]:
    """HotpotQA's records in ``path`` as queries over ``index`` (a document graph).

    A supporting title with no context paragraph is an error in the record; a
    supporting paragraph the index lacks is kept in ``Query.missing`` with an empty
    group in ``Query.supporting``.
    """
    path = Path(path)
    matcher = PassageMatcher(index.graph, f"--dataset hotpotqa:{path}")
    queries = []
    for where, record in read_records(path):
        qid = str(field_of(record, "_id", (str, int), where))
        question = field_of(record, "question", str, where)
        answer = field_of(record, "answer", str, where)
        context: dict[str, str] = {}
        for i, item in enumerate(field_of(record, "context", list, where)):
            if (
                not isinstance(item, list)
                or len(item) != 2
                or not isinstance(item[0], str)
                or not isinstance(item[1], list)
                or not all(isinstance(s, str) for s in item[1])
            ):
                raise ArkError(f"{where}: context {i} must be [title, [sentence, ...]]")
            context.setdefault(item[0], " ".join(s.strip() for s in item[1]))
        titles: list[str] = []
        for i, fact in enumerate(field_of(record, "supporting_facts", list, where)):
            if not isinstance(fact, list) or len(fact) != 2 or not isinstance(fact[0], str):
                raise ArkError(f"{where}: supporting fact {i} must be [title, sentence id]")
            if fact[0] not in context:
                raise ArkError(
                    f"{where}: supporting fact {i} names {fact[0]!r}, not a context title"
                )
            if fact[0] not in titles:
                titles.append(fact[0])
        if not titles:
            raise ArkError(f"{where}: no supporting_facts")
        supporting = [matcher.match(t, context[t]) for t in titles]
        qtype = record.get("type")
        queries.append(
            Query(
                id=qid,
                text=question,
                gold=frozenset().union(*supporting),
                qtype=qtype if isinstance(qtype, str) else None,
                missing=tuple(t for t, g in zip(titles, supporting, strict=True) if not g),
                answers=(answer,),
                supporting=tuple(supporting),
            )
        )
    return queries
