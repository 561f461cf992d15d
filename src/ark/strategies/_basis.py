"""What a strategy's answer in words is to be written from: its answer basis.

Answering sits above retrieval (``ark.answer``, the pipeline retrieve -> answer for
every strategy), so a strategy never writes an answer itself. Most strategies leave
that to the answer step's reading of the fused retrieval; one whose workflow ends with
an answer over evidence of its own (GraphSearch: its drafted nodes, the nodes each
step kept, the edges it followed) records that evidence here instead, under
``trajectory.extra[name]["answer_basis"]``, and the pipeline writes the answer from
it. The record is plain JSON, so a stored trajectory keeps it and a later run of the
answer step (``benchmarks/bench_answers.py``) reads it back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ark.trajectory import Trajectory

#: ``(head, relation, tail)``: an edge the retrieval followed, shown to the answer
#: step as a fact (``ark.answer`` re-exports it).
Edge = tuple[int, str, int]

#: The key of a strategy's ``trajectory.extra`` entry that holds its basis.
BASIS_KEY = "answer_basis"


@dataclass(frozen=True)
class AnswerBasis:
    """The nodes (best first) and followed edges a strategy's answer is written from,
    and the seed of that one model call (written greedily, at temperature 0)."""

    nodes: list[int]
    edges: list[Edge]
    seed: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodes": list(self.nodes),
            "edges": [list(e) for e in self.edges],
            "seed": self.seed,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AnswerBasis:
        """The basis :meth:`to_dict` wrote (JSON turned its edges into lists)."""
        edges = [(int(h), str(r), int(t)) for h, r, t in data.get("edges", [])]
        return cls([int(n) for n in data.get("nodes", [])], edges, int(data.get("seed", 0)))


def recorded_basis(trajectory: Trajectory) -> tuple[str, AnswerBasis] | None:
    """The ``trajectory.extra`` key whose entry holds an answer basis, and the basis
    (``None`` when the strategy recorded none: the answer step reads the retrieval)."""
    for key, extra in trajectory.extra.items():
        if isinstance(extra, dict) and isinstance(extra.get(BASIS_KEY), dict):
            return key, AnswerBasis.from_dict(extra[BASIS_KEY])
    return None
