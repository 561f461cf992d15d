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

from ark._coerce import as_int
from ark.tools._errors import ErrorCode
from ark.tools._results import (
    NodeHit,
    Relation,
    SearchResult,
    ToolError,
    _count,
    _filters,
    _names,
)

#: Most centers one call explores (the schema bounds the list, so decoding cannot loop).
MAX_CENTERS = 50
#: Neighbors fetched per center before merging (all of them, below this).
PER_CENTER_K = 5000


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

    def render(self) -> str:
        n = len(self.centers)
        head = (
            f"Neighbors of {n} node{'s' if n != 1 else ''} "
            f"({', '.join(f'[{c.index}]' for c in self.centers)}){_filters(self.arguments)}: "
            f"{_count(len(self.merged), self.total, 'distinct neighbor')}."
        )
        lines = [head]
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
        for m in self.merged:
            h = m.hit
            line = f"[{h.index}] {h.name} ({h.type})"
            if ranked:
                line += f" score={h.score:.2f}"
            if h.relations:
                line += " via " + ", ".join(f"{r.type}({r.direction})" for r in h.relations)
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
    reached: dict[
        int, tuple[NodeHit, list[int], dict[Relation, None], list[tuple[Relation, ...]]]
    ] = {}
    center_hits: list[NodeHit] = []
    for c in centers:
        # Every neighbor (up to PER_CENTER_K), not the first k: a node reached from all
        # centers must be counted as such even when a center has hundreds of neighbors.
        if (err := tools._check_node(tool, c)) is not None:
            return err
        args_c = {"node_index": c, **filters, "k": PER_CENTER_K}
        result = tools._neighborhood(tool, args_c, c, k=PER_CENTER_K, **filters)
        if isinstance(result, ToolError):
            return result
        assert result.center is not None
        center_hits.append(result.center)
        for h in result.hits:
            entry = reached.get(h.index)
            if entry is None:
                entry = reached[h.index] = (h, [], {}, [])
            entry[1].append(c)
            entry[2].update(dict.fromkeys(h.relations))
            entry[3].append(h.relations)
    order = sorted(reached.values(), key=lambda e: (-len(e[1]), -e[0].score, e[0].index))
    merged = tuple(
        MergedHit(
            NodeHit(h.index, h.type, h.name, h.score, h.snippet, tuple(rels)), tuple(cs), tuple(via)
        )
        for h, cs, rels, via in order[:k]
    )
    args = {"node_index": centers, **filters, "k": int(k)}
    available: tuple[tuple[str, str, str, int], ...] = ()
    if not reached and (node_type is not None or edge_type is not None):
        counts: dict[tuple[str, str, str], int] = {}
        for c in centers:
            for t, r, d, n in tools.links(c):
                counts[(t, r, d)] = counts.get((t, r, d), 0) + n
        available = tuple(
            (t, r, d, n) for (t, r, d), n in sorted(counts.items(), key=lambda x: -x[1])
        )
    return MultiNeighborhoodResult(
        tool, args, merged, len(reached), tuple(center_hits), available=available
    )
