"""Question sets as ARK scores them: a :class:`Query` holds node indices of the index
being evaluated, and the generic JSONL format.

Answers given by name that the graph does not contain are kept in ``missing`` (a
query with no answer in the graph is reported separately by the runner), never
silently dropped.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ark._safe import JSON_ERRORS
from ark.errors import ArkError

if TYPE_CHECKING:  # only the type: ark.graph may import this package lazily
    from ark.index import Index

T = TypeVar("T")


@dataclass(frozen=True)
class Query:
    """A question, its gold answers as node indices, and its type (for the breakdown).

    A question over documents (MuSiQue, HotpotQA) also has ``answers``, its gold
    answer strings (exact match and F1 of a written answer read them), and
    ``supporting``, one group of passage nodes per supporting paragraph (its node, or
    its chunks; empty when the index lacks it), which passage recall reads; ``gold`` is
    then the union of the groups. ``answer_passage`` is the group of the paragraph that
    states the answer — the one the question's last decomposition step reads — where
    the file says which (MuSiQue's ``question_decomposition``; an empty group when the
    index lacks that paragraph, as in ``supporting``); ``None`` where it does not.
    ``by_answer``: no gold node is known, only the answer strings (a ``docqa:`` file
    that names no supporting passages): the question is scored by its written answer
    alone (EM, F1), not by a ranking.
    """

    id: str
    text: str
    gold: frozenset[int]
    qtype: str | None = None
    missing: tuple[str, ...] = field(default=())
    answers: tuple[str, ...] = field(default=())
    supporting: tuple[frozenset[int], ...] = field(default=())
    answer_passage: frozenset[int] | None = None
    by_answer: bool = False


def name_lookup(index: Index) -> dict[str, list[int]]:
    """Node indices by exact name (a name may belong to several nodes)."""
    lookup: dict[str, list[int]] = {}
    for i, name in enumerate(index.graph.names.to_pylist()):
        lookup.setdefault(name, []).append(i)
    return lookup


def load_jsonl(path: str | Path, index: Index) -> list[Query]:
    """``{"id", "query", "answer_ids" | "answer_names", "qtype"?}`` per line."""
    path = Path(path)
    if not path.exists():
        raise ArkError(f"query file {path} not found")
    lookup: dict[str, list[int]] | None = None
    n = index.graph.n_nodes
    queries = []
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                qid, text = str(obj["id"]), obj["query"]
            except (*JSON_ERRORS, KeyError, TypeError) as exc:
                raise ArkError(
                    f"{path}:{lineno}: need a JSON object with id and query ({exc})"
                ) from exc
            gold: set[int] = set()
            missing: list[str] = []
            if "answer_ids" in obj:
                for a in obj["answer_ids"]:
                    if not isinstance(a, int) or not 0 <= a < n:
                        raise ArkError(
                            f"{path}:{lineno}: answer id {a!r} is not a node of the index"
                        )
                    gold.add(a)
            elif "answer_names" in obj:
                lookup = lookup or name_lookup(index)
                for name in obj["answer_names"]:
                    if name in lookup:
                        gold.update(lookup[name])
                    else:
                        missing.append(name)
            else:
                raise ArkError(f"{path}:{lineno}: needs answer_ids or answer_names")
            queries.append(Query(qid, text, frozenset(gold), obj.get("qtype"), tuple(missing)))
    return queries


def sample(queries: Sequence[T], limit: int, seed: int = 0) -> list[T]:
    """A deterministic sample of ``limit`` queries, kept in their original order."""
    if limit >= len(queries):
        return list(queries)
    chosen = sorted(random.Random(seed).sample(range(len(queries)), limit))
    return [queries[i] for i in chosen]
