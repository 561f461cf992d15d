"""Evidence passages: the passages that support a retrieval's answers, ranked.

On a graph built from documents (:mod:`ark.graph._documents`) an answer is often an
entity at the end of a chain — ``Lena Marsh -born in-> Port Avel -mayor-> Tomas
Reed`` — while a reader (a person, or a model writing the answer) needs the passages
that state each link. They are read off the evidence paths (:mod:`ark.agent._evidence`),
so they are the passages of the chain the agents actually followed:

- a passage node on a path (the search returned it, or a hop reached it) supports
  the path's answer (``via="path"``);
- for a hop ``u -r-> v`` between two non-passage nodes, the passages that mention
  both ``u`` and ``v`` (``passage -[mentions]-> u`` and ``-> v``) support it
  (``via="hop"``): the edge was extracted from text naming both ends. When several
  do, those naming more of the path's nodes come first, at most ``max_per_hop``;
- a passage in the ranking supports itself (``via="answer"``);
- last, the passages the agents were shown in their tool results but built on no
  path to an answer (``via="seen"``, supporting nothing), in the order they were
  shown: what the agents read on the way, which a reader may still need (a chain's
  first passage is often found by a search whose passage node is never added).

Passages are ranked by the answers they support, in ranking order: the first
answer's passages (itself when it is one, then along each path from its anchor),
then the next answer's that are new, and so on; the seen ones after all of them. A
curated graph (no ``passage`` type) has none, and nothing else changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ark.agent._evidence import EvidencePath, NodeEvidence
from ark.graph import MENTIONS, PASSAGE_TYPE, Graph

__all__ = ["MAX_PER_HOP", "EvidencePassage", "evidence_passages"]

#: Most passages one hop contributes when many mention both of its ends (a hub pair).
MAX_PER_HOP = 3

Via = Literal["answer", "path", "hop", "seen"]


@dataclass(frozen=True)
class EvidencePassage:
    """A passage that supports answers of the ranking.

    ``supports``: the ranked nodes it supports, in ranking order; ``via``: how it was
    first found (``"answer"``: it is in the ranking; ``"path"``: it lies on an
    evidence path; ``"hop"``: it mentions both ends of a hop of a path; ``"seen"``:
    only shown to an agent, ``supports`` empty); ``paths``:
    the evidence paths it lies on or supports a hop of."""

    node: int
    name: str
    supports: tuple[int, ...]
    via: Via
    paths: tuple[EvidencePath, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.node,
            "name": self.name,
            "supports": list(self.supports),
            "via": self.via,
            "paths": [p.to_dict() for p in self.paths],
        }


@dataclass
class _Found:
    via: Via
    supports: list[int] = field(default_factory=list)
    paths: list[EvidencePath] = field(default_factory=list)


class _Mentions:
    """Who mentions whom, read from the graph on demand and kept for one call."""

    def __init__(self, graph: Graph, passage_type: int, mentions: int | None) -> None:
        self.graph = graph
        self.passage_type = passage_type
        self.mentions = mentions
        self._by: dict[int, np.ndarray] = {}
        self._of: dict[int, set[int]] = {}

    def is_passage(self, node: int | None) -> bool:
        g = self.graph
        return node is not None and 0 <= node < g.n_nodes and g.node_type[node] == self.passage_type

    def passages_naming(self, node: int) -> np.ndarray:
        """The passages with a ``mentions`` edge to ``node`` (ascending)."""
        if self.mentions is None:
            return np.zeros(0, dtype=np.int64)
        if node not in self._by:
            hood = self.graph.neighborhood(node, [self.passage_type], [self.mentions])
            self._by[node] = np.sort(np.asarray(hood.neighbors, dtype=np.int64))
        return self._by[node]

    def named_by(self, passage: int) -> set[int]:
        """The nodes ``passage`` mentions."""
        if self.mentions is None:
            return set()
        if passage not in self._of:
            hood = self.graph.neighborhood(passage, None, [self.mentions])
            self._of[passage] = {int(n) for n in hood.neighbors}
        return self._of[passage]


def _path_nodes(path: EvidencePath) -> set[int]:
    nodes = {path.anchor} | {x for h in path.hops for x in (h.center, h.neighbor)}
    return {n for n in nodes if n is not None}


def _hop_passages(m: _Mentions, u: int, v: int, on_path: set[int], max_per_hop: int) -> list[int]:
    """The passages mentioning both ``u`` and ``v``: those naming more of the path's
    nodes first, then by index; at most ``max_per_hop``."""
    both = np.intersect1d(m.passages_naming(u), m.passages_naming(v), assume_unique=True)
    if not len(both):
        return []
    ranked = sorted(both.tolist(), key=lambda p: (-len(m.named_by(p) & on_path), p))
    return ranked[:max_per_hop]


def _along(m: _Mentions, path: EvidencePath, max_per_hop: int) -> list[tuple[int, Via]]:
    """The passages of one path, from its anchor to its end."""
    out: list[tuple[int, Via]] = []
    if m.is_passage(path.anchor):
        assert path.anchor is not None
        out.append((path.anchor, "path"))
    on_path = _path_nodes(path)
    for hop in path.hops:
        ends = (hop.center, hop.neighbor)
        if hop.center is not None and not any(m.is_passage(n) for n in ends):
            out += [(p, "hop") for p in _hop_passages(m, hop.center, hop.neighbor, on_path,
                                                        max_per_hop)]  # fmt: skip
        if m.is_passage(hop.neighbor):
            out.append((hop.neighbor, "path"))
    return out


def evidence_passages(
    graph: Graph,
    evidence: Sequence[NodeEvidence],
    *,
    max_per_hop: int = MAX_PER_HOP,
    seen: Sequence[int] = (),
) -> list[EvidencePassage]:
    """The passages supporting the nodes of ``evidence`` (a fused ranking's evidence,
    in ranking order), then those of ``seen`` (nodes shown to the agents, in order)
    that are passages and not yet listed; empty on a graph without passages."""
    passage_type = graph.type_id(PASSAGE_TYPE)
    if passage_type is None:
        return []
    m = _Mentions(graph, passage_type, graph.relation_id(MENTIONS))
    found: dict[int, _Found] = {}

    def note(passage: int, via: Via, answer: int, path: EvidencePath | None) -> None:
        entry = found.setdefault(passage, _Found(via))
        if answer not in entry.supports:
            entry.supports.append(answer)
        if path is not None and path not in entry.paths:
            entry.paths.append(path)

    for ev in evidence:
        if m.is_passage(ev.node):
            note(ev.node, "answer", ev.node, None)
        for path in ev.paths:
            for passage, via in _along(m, path, max_per_hop):
                note(passage, via, ev.node, path)
    for node in seen:
        if m.is_passage(node) and node not in found:
            found[node] = _Found("seen")
    return [
        EvidencePassage(p, graph.name(p), tuple(f.supports), f.via, tuple(f.paths))
        for p, f in found.items()
    ]
