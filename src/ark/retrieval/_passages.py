"""Evidence passages: the passages that support a retrieval's answers, ranked.

On a graph built from documents (:mod:`ark.graph._documents`) an answer is often an
entity at the end of a chain — ``Lena Marsh -born in-> Port Avel -mayor-> Tomas
Reed`` — while a reader (a person, or a model writing the answer) needs the passages
that state each link. They are read off the evidence paths (:mod:`ark.retrieval._evidence`),
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

**Linked passages** (with ``relevance``, the question's BM25 over passages, which
:class:`~ark.retrieval.Retriever` passes): a multi-hop question's next fact is usually in
a passage that shares a *specific* entity with one the agents found — ``Maiden Japan
… a live EP by Iron Maiden`` and ``Iron Maiden … formed in Leyton`` share the bridge
``Iron Maiden`` — and a small model often stops before the hop that would reach it.
So the passages an agent added to its answer and the reached passage (above) most
relevant to the question (the *lead*) come first, best relevance first, then
up to ``max_linked`` passages that share with the lead an entity named by at most
``link_max_mentions`` passages (a bridge; an entity most passages name, a country or a
year, links everything and nothing), ranked by the question's relevance
(``via="linked"``, supporting nothing: no agent followed that link), then the other
reached passages in the order above. Why these bounds: ``docs/decisions/documents.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ark.graph import LINK_MAX_MENTIONS, MENTIONS, PASSAGE_TYPE, Graph, Mentions
from ark.index import score_nodes
from ark.retrieval._evidence import EvidencePath, NodeEvidence

__all__ = [
    "MAX_LINKED",
    "MAX_PER_HOP",
    "EvidencePassage",
    "evidence_passages",
    "linked_passages",
    "question_relevance",
]

#: Most passages one hop contributes when many mention both of its ends (a hub pair).
MAX_PER_HOP = 3
#: Most linked passages listed after the lead passage.
MAX_LINKED = 3

Via = Literal["answer", "path", "hop", "seen", "linked"]
#: Scores of passage node indices against the question (higher: more relevant).
Relevance = Callable[[np.ndarray], np.ndarray]


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


def _path_nodes(path: EvidencePath) -> set[int]:
    nodes = {path.anchor} | {x for h in path.hops for x in (h.center, h.neighbor)}
    return {n for n in nodes if n is not None}


def _hop_passages(m: Mentions, u: int, v: int, on_path: set[int], max_per_hop: int) -> list[int]:
    """The passages mentioning both ``u`` and ``v``: those naming more of the path's
    nodes first, then by index; at most ``max_per_hop``."""
    both = np.intersect1d(m.passages_naming(u), m.passages_naming(v), assume_unique=True)
    if not len(both):
        return []
    ranked = sorted(both.tolist(), key=lambda p: (-len(m.named_by(p) & on_path), p))
    return ranked[:max_per_hop]


def _along(m: Mentions, path: EvidencePath, max_per_hop: int) -> list[tuple[int, Via]]:
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


def question_relevance(index: Any, question: str) -> Relevance:
    """The question's BM25 score of passage nodes, by the index's global statistics
    (what a global search for the question would score them)."""
    bm25 = index.bm25
    terms = bm25.query_terms(question)

    def score(nodes: np.ndarray) -> np.ndarray:
        return score_nodes(bm25, terms, nodes)

    return score


def linked_passages(
    graph: Graph,
    lead: int,
    relevance: Relevance,
    *,
    max_mentions: int = LINK_MAX_MENTIONS,
    limit: int = MAX_LINKED,
    exclude: set[int] | frozenset[int] = frozenset(),
) -> list[int]:
    """The passages sharing with ``lead`` an entity that at most ``max_mentions``
    passages name, best ``relevance`` first (ties by index), at most ``limit``, none
    of ``exclude``; empty on a graph without passages or ``mentions`` edges."""
    passage_type = graph.type_id(PASSAGE_TYPE)
    mentions = graph.relation_id(MENTIONS)
    if passage_type is None or mentions is None or limit < 1:
        return []
    m = Mentions(graph, passage_type, mentions)
    found: set[int] = set()
    for entity in sorted(m.named_by(lead)):
        naming = m.passages_naming(entity)
        if len(naming) <= max_mentions:
            found.update(int(p) for p in naming)
    found -= {lead, *exclude}
    if not found:
        return []
    nodes = np.array(sorted(found), dtype=np.int64)
    order = np.argsort(-np.asarray(relevance(nodes), dtype=np.float64), kind="stable")
    return [int(p) for p in nodes[order[:limit]]]


def evidence_passages(
    graph: Graph,
    evidence: Sequence[NodeEvidence],
    *,
    max_per_hop: int = MAX_PER_HOP,
    seen: Sequence[int] = (),
    relevance: Relevance | None = None,
    max_linked: int = MAX_LINKED,
    link_max_mentions: int = LINK_MAX_MENTIONS,
) -> list[EvidencePassage]:
    """The passages supporting the nodes of ``evidence`` (a fused ranking's evidence,
    in ranking order), then those of ``seen`` (nodes shown to the agents, in order)
    that are passages and not yet listed; empty on a graph without passages.

    With ``relevance`` (:func:`question_relevance`), the most relevant of them leads
    and its linked passages follow it (module docstring); ``max_linked=0`` keeps the
    order above and adds none."""
    passage_type = graph.type_id(PASSAGE_TYPE)
    if passage_type is None:
        return []
    m = Mentions(graph, passage_type, graph.relation_id(MENTIONS))
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
    if relevance is not None and found and max_linked > 0:
        reached = np.fromiter(found, dtype=np.int64, count=len(found))
        scores = np.asarray(relevance(reached), dtype=np.float64)
        lead = int(reached[int(np.argmax(scores))])  # the first of equal scores
        # A reached passage linked to the lead moves up beside it; a new one joins.
        links = linked_passages(
            graph, lead, relevance, max_mentions=link_max_mentions, limit=max_linked
        )
        # The agents' own adds and the lead, best first: an add is a judgement of
        # what was read, not of which passage answers the question's first words.
        score_of = dict(zip(reached.tolist(), scores.tolist(), strict=True))
        chosen = [p for p, f in found.items() if f.via == "answer"]  # added by an agent
        heads = sorted(dict.fromkeys([*chosen, lead]), key=lambda p: -score_of[p])
        order = [*heads, *links, *found]
        found = {p: found.get(p) or _Found("linked") for p in dict.fromkeys(order)}
    return [
        EvidencePassage(p, graph.name(p), tuple(f.supports), f.via, tuple(f.paths))
        for p, f in found.items()
    ]
