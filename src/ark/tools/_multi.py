"""A hop over a set: the neighborhoods of several nodes at once, merged.

"The genres of the films directed by X" needs one neighborhood per film with the
paper's tool; a small model with a step budget rarely gets there. Offered as an
option (``ToolConfig(multi_neighborhood=True)``): ``search_in_neighborhood`` then
also takes a list of node indices, and the result merges their neighborhoods, each
neighbor naming the centers it was reached from, ranked by how many centers reach it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ark._coerce import as_int
from ark.tools._errors import ErrorCode
from ark.tools._results import (
    NodeHit,
    Relation,
    SearchResult,
    ToolError,
    _count,
    _filters,
    _member,
    _names,
    _via,
    grouped_lines,
    relations_text,
)
from ark.tools._tools import cap_query, with_relation_share

#: Most centers one call explores (the schema bounds the list, so decoding cannot loop).
MAX_CENTERS = 50


@dataclass(frozen=True, slots=True)
class MergedHit:
    """A neighbor reached from one or more of the centers."""

    hit: NodeHit
    centers: tuple[int, ...]
    #: Per center in ``centers``, the relations linking it to the neighbor (``hit``'s
    #: relations are their union): which edge each center reached it by, for evidence.
    via: tuple[tuple[Relation, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class MultiNeighborhoodResult:
    """The merged neighborhoods of ``centers``; ``total`` distinct neighbors before the cut."""

    tool: str
    arguments: dict[str, Any]
    merged: tuple[MergedHit, ...]
    total: int
    centers: tuple[NodeHit, ...]
    ok: Literal[True] = True
    center: None = None
    available: tuple[tuple[str, str, str, int], ...] = ()
    #: Lines shown after the heading: what an ``edge_type`` phrase matched.
    notes: tuple[str, ...] = ()

    @property
    def hits(self) -> tuple[NodeHit, ...]:
        return tuple(m.hit for m in self.merged)

    def to_dict(self) -> dict[str, Any]:
        return {
            "centers": [c.index for c in self.centers],
            "results": [
                {**m.hit.to_dict(with_relations=True), "centers": list(m.centers)}
                for m in self.merged
            ],
            "total": self.total,
        }

    def render(self, grouped: bool = False) -> str:
        """One line per neighbor, or (``grouped``) per relations and type, each member
        with its centers."""
        n = len(self.centers)
        head = (
            f"Neighbors of {n} node{'s' if n != 1 else ''} "
            f"({', '.join(f'[{c.index}]' for c in self.centers)}){_filters(self.arguments)}: "
            f"{_count(len(self.merged), self.total, 'distinct neighbor')}."
        )
        lines = [head, *self.notes]
        if self.available:
            lines.append(
                "No neighbor matches these filters. These nodes' neighbors are: "
                + "; ".join(f"{c} {t} via {r}({d})" for t, r, d, c in self.available[:8])
                + "."
            )
            fix = self._suggested_filters()
            if fix is not None:
                ids = [c.index for c in self.centers]
                lines.append(
                    f'Try search_in_neighborhood(node_index={ids}, edge_type="{fix[0]}", '
                    f'node_type="{fix[1]}").'
                )
        ranked = bool(self.arguments.get("query"))
        if grouped and not any(m.hit.snippet for m in self.merged):
            # Centers differ from neighbor to neighbor: said per member, after a "; ".
            lines += grouped_lines(
                (
                    (
                        _via(m.hit.relations, m.hit.type),
                        f"{_member(m.hit, ranked)} from {_from(m.centers, n)}",
                    )
                    for m in self.merged
                ),
                sep="; ",
            )
            return "\n".join(lines)
        for m in self.merged:
            h = m.hit
            line = f"[{h.index}] {h.name} ({h.type})"
            if ranked:
                line += f" score={h.score:.2f}"
            if h.relations:
                line += " via " + relations_text(h.relations)
            line += f" from {_from(m.centers, n)}"
            lines.append(line)
        return "\n".join(lines)

    def _suggested_filters(self) -> tuple[str, str] | None:
        """Keep one of the two filters and fix the other, preferring to keep node_type:
        after a hop, the type asked for is what a model most often gets right (a 1.5B
        model asked for genres with has_tags; has_genre is the fix, not tags)."""
        wanted_edges = _names(self.arguments.get("edge_type"))
        wanted_types = _names(self.arguments.get("node_type"))
        for keep_type in (True, False):
            for t, r, _, _ in self.available:  # most common first
                if (t.casefold() in wanted_types) == keep_type and (
                    r.casefold() in wanted_edges
                ) != keep_type:
                    return r, t
        return None


def _from(centers: Sequence[int], n: int) -> str:
    if len(centers) <= 3:
        return ", ".join(f"[{c}]" for c in centers)
    return f"{len(centers)} of {n}"


def neighborhood_over_set(
    tools: Any,
    node_indices: Sequence[Any],
    *,
    query: str | None = None,
    node_type: Any = None,
    edge_type: Any = None,
    k: int = 20,
) -> MultiNeighborhoodResult | ToolError | SearchResult:
    """Merge ``tools.search_in_neighborhood`` over ``node_indices`` (a ``GraphTools``).

    A single index is the paper's tool unchanged. Neighbors are ranked by the number of
    centers reaching them, then by BM25 score of ``query``, then by index; the first
    bad index, type name or ``k`` is reported as the single-node tool reports it.
    """
    tool = "search_in_neighborhood"
    centers: list[int] = []
    for value in node_indices:
        node = as_int(value)
        if node is None:
            return ToolError(
                tool, ErrorCode.BAD_ARGUMENT, f"node index {value!r} is not an integer."
            )
        if node not in centers:
            centers.append(node)
    if not centers:
        return ToolError(tool, ErrorCode.BAD_ARGUMENT, "node_index is an empty list.")
    if len(centers) > MAX_CENTERS:
        return ToolError(
            tool,
            ErrorCode.BAD_ARGUMENT,
            f"{len(centers)} node indices given, at most {MAX_CENTERS} per call.",
        )
    filters = {"query": query, "node_type": node_type, "edge_type": edge_type}
    if (err := tools._check_k(tool, k)) is not None:
        return err
    if len(centers) == 1:
        return tools.search_in_neighborhood(centers[0], k=k, **filters)
    for c in centers:
        if (err := tools._check_node(tool, c)) is not None:
            return err
    if query is not None and not isinstance(query, str):
        return ToolError(tool, ErrorCode.BAD_ARGUMENT, "query must be a string or omitted.")
    graph = tools.graph
    type_ids = tools._resolve(tool, "node_type", node_type, graph.node_type_names)
    if isinstance(type_ids, ToolError):
        return type_ids
    matched: list[Any] = []
    rel_ids = tools._resolve(tool, "edge_type", edge_type, graph.relation_names, matched=matched)
    if isinstance(rel_ids, ToolError):
        return rel_ids
    # Every neighbor of every center, however many (a hub's included): the count of
    # centers reaching a node and the total are exact, and only the k shown are built.
    hoods = [graph.neighborhood(c, type_ids, rel_ids) for c in centers]
    every = np.concatenate([h.neighbors for h in hoods])
    if len(every) * 8 > graph.n_nodes:  # hubs: counting beats sorting millions
        per_node = np.bincount(every)
        reached = np.flatnonzero(per_node)
        counts = per_node[reached]
    else:
        reached, counts = np.unique(every, return_counts=True)
    if query is not None:
        query = cap_query(query)
    terms = tools.bm25.query_terms(query) if query and query.strip() else None
    if terms is not None and len(terms) and len(reached):
        scores = np.asarray(tools.bm25.score_docs(terms, reached), dtype=np.float64)
    else:
        scores = np.zeros(len(reached), dtype=np.float64)
    share = _relation_share(tools, hoods, reached, query)
    if share is not None:  # free-text relations: the phrase linking counts too
        scores = with_relation_share(scores, share).astype(np.float64)
    order = np.lexsort((reached, -scores, -counts))[:k]
    chosen = reached[order]
    from_centers: dict[int, list[int]] = {int(n): [] for n in chosen.tolist()}
    relations: dict[int, dict[Relation, None]] = {int(n): {} for n in chosen.tolist()}
    via: dict[int, list[tuple[Relation, ...]]] = {int(n): [] for n in chosen.tolist()}
    for c, hood in zip(centers, hoods, strict=True):
        at = np.searchsorted(hood.neighbors, chosen)  # neighbors are sorted ascending
        inside = at < len(hood.neighbors)
        found = inside.copy()
        found[inside] = hood.neighbors[at[inside]] == chosen[inside]
        nodes, positions = chosen[found].tolist(), at[found].tolist()
        for n, rels in zip(nodes, tools._relations(hood, positions), strict=True):
            from_centers[n].append(c)
            relations[n].update(dict.fromkeys(rels))
            via[n].append(tuple(rels))
    ids = chosen.tolist()
    hits = tools._hits(chosen, scores[order], [tuple(relations[n]) for n in ids])
    merged = tuple(
        MergedHit(h, tuple(from_centers[n]), tuple(via[n])) for h, n in zip(hits, ids, strict=True)
    )
    center_hits = [tools._hit(c) for c in centers]
    args = {"node_index": centers, **filters, "k": int(k)}
    available: tuple[tuple[str, str, str, int], ...] = ()
    if not len(reached) and (node_type is not None or edge_type is not None):
        counts: dict[tuple[str, str, str], int] = {}
        for c in centers:
            for t, r, d, n in tools.links(c):
                counts[(t, r, d)] = counts.get((t, r, d), 0) + n
        available = tuple(
            (t, r, d, n) for (t, r, d), n in sorted(counts.items(), key=lambda x: -x[1])
        )
    return MultiNeighborhoodResult(
        tool,
        args,
        merged,
        len(reached),
        tuple(center_hits),
        available=available,
        notes=tuple(m.note() for m in matched),
    )


def _relation_share(
    tools: Any, hoods: Sequence[Any], reached: np.ndarray, query: str | None
) -> np.ndarray | None:
    """Per node of ``reached`` (ascending), the best relation share over the centers'
    neighborhoods (``GraphTools._relation_share``); ``None`` where the single-node tool
    would not rank by relation phrases."""
    if not len(reached):
        return None
    out = np.zeros(len(reached), dtype=np.float32)
    found = False
    for hood in hoods:
        if not len(hood.neighbors):
            continue
        share = tools._relation_share(hood, query)
        if share is None:
            continue
        found = True
        np.maximum.at(out, np.searchsorted(reached, hood.neighbors), share)
    return out if found else None
