"""Relation paths sampled from the graph's arrays: chains of 1–3 hops along the
schema's main type pairs, and intersections of two anchors' one-hop sets."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ark.distill._questions import RelationStep, chain_question, intersection_question
from ark.graph import DIRECTION_NAMES
from ark.graph.columns import unique_rows
from ark.index import Index

MAX_ANSWERS = 50  # paths with more target nodes are skipped (the bound)
MAX_FRONTIER = 6  # intermediate nodes explored per hop (keeps trajectories < max_steps)
MAX_K = 100  # the tools' own bound on k


@dataclass
class Path_:
    """A sampled question: anchors, hops per anchor, the frontier sets, the answers."""

    kind: str  # "chain" | "intersection"
    anchors: list[int]
    hops: list[list[RelationStep]]
    frontiers: list[list[list[int]]]  # per anchor: the node sets after each hop
    #: Ranked: reached by more paths first, then by index. The anchor and the
    #: intermediate nodes are never answers (the question asks for the last hop).
    answers: list[int]
    question: str = ""

    def key(self) -> tuple[Any, ...]:
        """What makes two sampled paths the same question: anchors and hops."""
        return (tuple(self.anchors), tuple(tuple(h) for h in self.hops))


class PathSampler:
    """Samples relation paths over the graph's arrays (no Python loop over edges)."""

    def __init__(self, index: Index, rng: random.Random, max_frontier: int = MAX_FRONTIER) -> None:
        self.g = index.graph
        self.rng = rng
        self.max_frontier = max_frontier
        degree = np.diff(np.asarray(self.g.indptr))
        self.anchors = np.flatnonzero(degree > 0)
        # Hops along type pairs carrying < 1 % of a relation's edges are strays (a
        # string playing several roles); questions over them would be nonsense.
        totals = Counter[str]()
        for r in index.schema.relations:
            totals[r.name] += r.count
        self.allowed = set()
        for r in index.schema.relations:
            if r.count >= 0.01 * totals[r.name]:
                self.allowed.add((r.name, "out", r.source_type, r.target_type))
                self.allowed.add((r.name, "in", r.target_type, r.source_type))

    def _steps(self, node: int) -> list[tuple[int, int]]:
        """The distinct (adjacency code, neighbor type) pairs leaving ``node`` along
        the schema's main type pairs."""
        g = self.g
        source = g.type_name(node)
        start, end = int(g.indptr[node]), int(g.indptr[node + 1])
        codes = np.asarray(g.adj_code[start:end])
        types = np.asarray(g.node_type)[np.asarray(g.adj_node[start:end])]
        # Packed by the real counts (a fixed 4096 mixed up graphs with more types).
        code_col, type_col, _ = unique_rows(
            (codes, types), (2 * len(g.relation_names), len(g.node_type_names))
        )
        steps = list(zip(code_col.tolist(), type_col.tolist(), strict=True))
        return [
            (c, t)
            for c, t in steps
            if (g.relation_names[c >> 1], DIRECTION_NAMES[c & 1], source, g.node_type_names[t])
            in self.allowed
        ]

    def follow(self, nodes: Sequence[int], hop: RelationStep) -> dict[int, list[int]]:
        return follow(self.g, nodes, hop)

    def _hop(self, code: int, ntype: int) -> RelationStep:
        return RelationStep(
            self.g.relation_names[code >> 1],
            DIRECTION_NAMES[code & 1],
            self.g.node_type_names[ntype],
        )

    def chain(self, n_hops: int) -> Path_ | None:
        rng = self.rng
        anchor = int(self.anchors[rng.randrange(len(self.anchors))])
        frontier = [anchor]
        hops: list[RelationStep] = []
        sets: list[list[int]] = []
        reach: Counter[int] = Counter()
        for depth in range(n_hops):
            steps = self._steps(frontier[rng.randrange(len(frontier))])
            if not steps:
                return None
            hop = self._hop(*steps[rng.randrange(len(steps))])
            reached = self.follow(frontier, hop)
            visited = {anchor}.union(*map(set, sets))
            nxt = sorted({n for ns in reached.values() for n in ns} - visited)
            if not nxt or any(len(ns) > MAX_K for ns in reached.values()):
                return None
            last = depth == n_hops - 1
            if (last and len(nxt) > MAX_ANSWERS) or (not last and len(nxt) > self.max_frontier):
                return None
            if last:
                reach = Counter(n for ns in reached.values() for n in ns if n not in visited)
            hops.append(hop)
            sets.append(nxt)
            frontier = nxt
        answers = sorted(reach, key=lambda n: (-reach[n], n))
        return Path_("chain", [anchor], [hops], [sets], answers)

    def draw(self, n_hops: int, intersection_share: float) -> Path_ | None:
        """A chain of ``n_hops``, or, for one hop and with ``intersection_share``
        chance, an intersection (meeting paths are rarer: a few anchors are tried
        before settling for none)."""
        if n_hops == 1 and self.rng.random() < intersection_share:
            return next((p for _ in range(20) if (p := self.intersection())), None)
        return self.chain(n_hops)

    def intersection(self) -> Path_ | None:
        """Two anchors whose one-hop sets of the same type meet at some targets."""
        base = self.chain(1)
        if base is None:
            return None
        rng, g = self.rng, self.g
        anchor = base.anchors[0]
        (targets,) = base.frontiers[0]
        target = targets[rng.randrange(len(targets))]
        start, end = int(g.indptr[target]), int(g.indptr[target + 1])
        entries = list(range(start, end))
        rng.shuffle(entries)
        want = base.hops[0][0].target_type
        for i in entries[:8]:
            other, code = int(g.adj_node[i]), int(g.adj_code[i])
            if other == anchor:
                continue
            # The entry is target -> other; from the other anchor it is the reverse.
            hop2 = RelationStep(g.relation_names[code >> 1], DIRECTION_NAMES[(code & 1) ^ 1], want)
            reached = self.follow([other], hop2)[other]
            if not reached or len(reached) > MAX_K:
                continue
            both = sorted((set(targets) & set(reached)) - {anchor, other})
            if both and len(both) <= MAX_ANSWERS and len(both) < len(targets):
                return Path_(
                    "intersection",
                    [anchor, other],
                    [base.hops[0], [hop2]],
                    [base.frontiers[0], [reached]],
                    both,
                )
        return None


def follow(g: Any, nodes: Sequence[int], hop: RelationStep) -> dict[int, list[int]]:
    """Per node, its neighbors along ``hop`` (relation, direction and target type)."""
    rel = g.relation_id(hop.relation)
    typ = g.type_id(hop.target_type)
    code = rel * 2 + DIRECTION_NAMES.index(hop.direction)
    out = {}
    for v in nodes:
        start, end = int(g.indptr[v]), int(g.indptr[v + 1])
        nb = np.asarray(g.adj_node[start:end])
        keep = (np.asarray(g.adj_code[start:end]) == code) & (np.asarray(g.node_type)[nb] == typ)
        out[int(v)] = sorted(set(nb[keep].tolist()))
    return out


def path_question(index: Index, path: Path_, rng: random.Random, templates: dict[str, Any]) -> str:
    """``path`` put in words with ``index``'s described schema and ``templates``."""
    g = index.graph
    if path.kind == "chain":
        return chain_question(
            g.name(path.anchors[0]),
            g.type_name(path.anchors[0]),
            path.hops[0],
            rng,
            templates,
            index.described,
        )
    return intersection_question(
        [g.name(a) for a in path.anchors],
        [hops[0] for hops in path.hops],
        rng,
        templates,
        index.described,
    )
