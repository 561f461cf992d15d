"""The schema summary of a graph: what the agent's prompt is built from.

A curated graph has a handful of relations and its prompt lists every one. A graph
built from documents has thousands of free-text relation phrases, and a listing of all
of them is a prompt far beyond a 16k-context model (``docs/decisions/answer-and-tools.md``). Past
:data:`LISTING_LIMIT` names, :meth:`Schema.render` therefore summarises: the most
frequent relations with their end types and counts, the node types with counts, and
how many relations there are in all; the tool specs then take any phrase for a
relation instead of enumerating the names (``ark.tools.tool_specs``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ark._safe import cut

#: Most relation names (and, separately, node type names) that a schema lists in full
#: and that the tool specs enumerate: the prompt stays small enough to leave a 16k
#: context room for a dozen steps (why 50: docs/decisions/answer-and-tools.md).
LISTING_LIMIT = 50
#: Relations a summarised schema lists (the most frequent), node types likewise.
LISTED_RELATIONS = 40
LISTED_NODE_TYPES = 30
#: Longest relation or type name shown in a summary (free-text phrases can be long).
LISTED_NAME_CHARS = 60
#: Type pairs shown per relation in a summary (the most frequent).
LISTED_PAIRS = 2


@dataclass(frozen=True, slots=True)
class NodeTypeSummary:
    name: str
    count: int


@dataclass(frozen=True, slots=True)
class RelationSummary:
    """One relation between one pair of node types (a relation joining several pairs
    appears once per pair)."""

    name: str
    source_type: str
    target_type: str
    count: int


@dataclass(frozen=True, slots=True)
class Schema:
    node_types: tuple[NodeTypeSummary, ...]
    relations: tuple[RelationSummary, ...]

    @property
    def node_type_names(self) -> list[str]:
        return [t.name for t in self.node_types]

    @property
    def relation_names(self) -> list[str]:
        seen: dict[str, None] = {}
        for r in self.relations:
            seen.setdefault(r.name, None)
        return list(seen)

    @property
    def lists_relations(self) -> bool:
        """Whether the relations are few enough to list and enumerate in full
        (:data:`LISTING_LIMIT`); otherwise prompts summarise them and ``edge_type``
        takes any phrase."""
        return len(self.relation_names) <= LISTING_LIMIT

    @property
    def lists_node_types(self) -> bool:
        """Whether the node types are few enough to list and enumerate in full."""
        return len(self.node_types) <= LISTING_LIMIT

    def relation_totals(self) -> list[tuple[str, int]]:
        """Every relation name with its number of edges (over all type pairs), most
        frequent first, ties by name."""
        totals: dict[str, int] = {}
        for r in self.relations:
            totals[r.name] = totals.get(r.name, 0) + r.count
        return sorted(totals.items(), key=lambda x: (-x[1], x[0]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "node_types": [{"name": t.name, "count": t.count} for t in self.node_types],
            "relations": [
                {
                    "name": r.name,
                    "source_type": r.source_type,
                    "target_type": r.target_type,
                    "count": r.count,
                }
                for r in self.relations
            ],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Schema:
        return cls(
            node_types=tuple(
                NodeTypeSummary(t["name"], int(t["count"])) for t in data["node_types"]
            ),
            relations=tuple(
                RelationSummary(r["name"], r["source_type"], r["target_type"], int(r["count"]))
                for r in data["relations"]
            ),
        )

    def render(self, min_share: float = 0.01) -> str:
        """The schema as compact plain text, for prompts and MCP's schema resource.

        Type pairs carrying less than ``min_share`` of a relation's edges (strays from
        nodes that play several roles) are counted but not listed, to keep prompts short.
        Past :data:`LISTING_LIMIT` relations or node types, a bounded summary instead
        (:meth:`summary`): its length does not grow with the number of names.
        """
        if not (self.lists_relations and self.lists_node_types):
            return self.summary(min_share)
        lines = ["Node types (count):"]
        lines += [f"- {t.name} ({t.count:,})" for t in self.node_types]
        lines.append("Relations (source type -> target type, count):")
        totals: dict[str, int] = {}
        for r in self.relations:
            totals[r.name] = totals.get(r.name, 0) + r.count
        hidden: dict[str, int] = {}
        for r in self.relations:
            if r.count and r.count < min_share * totals[r.name]:
                hidden[r.name] = hidden.get(r.name, 0) + r.count
                continue
            lines.append(f"- {r.name}: {r.source_type} -> {r.target_type} ({r.count:,})")
        if hidden:
            rare = ", ".join(f"{name} {count:,}" for name, count in hidden.items())
            lines.append(f"(rarer type pairs not listed: {rare} edges)")
        return "\n".join(lines)

    def summary(self, min_share: float = 0.01) -> str:
        """The schema in a bounded number of lines, whatever the number of names: the
        node types with counts (the :data:`LISTED_NODE_TYPES` most frequent when there
        are more), the :data:`LISTED_RELATIONS` most frequent relations with their end
        types and counts, and the total number of relations and of the edges not listed.

        Why the most frequent: they are the ones a question is most likely to follow,
        and a relation not listed is still reachable by name or by phrase through the
        neighborhood tool's ``edge_type``.
        """
        types = sorted(self.node_types, key=lambda t: (-t.count, t.name))
        shown_types = types if self.lists_node_types else types[:LISTED_NODE_TYPES]
        lines = ["Node types (count):"]
        lines += [f"- {cut(t.name, LISTED_NAME_CHARS)} ({t.count:,})" for t in shown_types]
        if len(shown_types) < len(types):
            rest = types[len(shown_types) :]
            lines.append(
                f"({len(rest):,} more node types, {sum(t.count for t in rest):,} nodes, not listed)"
            )
        totals = self.relation_totals()
        top = totals[:LISTED_RELATIONS]
        pairs: dict[str, list[RelationSummary]] = {name: [] for name, _ in top}
        for r in self.relations:
            if r.name in pairs:
                pairs[r.name].append(r)
        edges = sum(count for _, count in totals)
        lines.append(
            f"Relations: {len(totals):,} in all, on {edges:,} edges; the {len(top):,} most "
            "frequent (source type -> target type, count):"
        )
        for name, total in top:
            kept = sorted(
                (r for r in pairs[name] if r.count >= min_share * total),
                key=lambda r: (-r.count, r.source_type, r.target_type),
            )[:LISTED_PAIRS]
            ends = "; ".join(f"{r.source_type} -> {r.target_type} ({r.count:,})" for r in kept)
            lines.append(f"- {cut(name, LISTED_NAME_CHARS)}: {ends or f'({total:,})'}")
        if len(totals) > len(top):
            rest = totals[len(top) :]
            lines.append(
                f"({len(rest):,} more relations, {sum(c for _, c in rest):,} edges, not "
                "listed; ask for any of them by name or by a phrase of its words)"
            )
        return "\n".join(lines)


def summarize(
    node_type: np.ndarray,
    node_type_names: list[str],
    src: np.ndarray,
    dst: np.ndarray,
    rel: np.ndarray,
    relation_names: list[str],
) -> Schema:
    """Count nodes per type and edges per (relation, source type, target type), vectorised."""
    n_types = len(node_type_names)
    type_counts = np.bincount(node_type, minlength=n_types)
    node_types = tuple(
        NodeTypeSummary(name, int(type_counts[i])) for i, name in enumerate(node_type_names)
    )
    relations: list[RelationSummary] = []
    if len(rel):
        from ark.graph.columns import unique_rows

        n_rel = len(relation_names)
        rels, sources, targets, counts = unique_rows(
            (rel, node_type[src], node_type[dst]), (n_rel, n_types, n_types)
        )
        for r, s, t, c in zip(
            rels.tolist(), sources.tolist(), targets.tolist(), counts.tolist(), strict=True
        ):
            relations.append(
                RelationSummary(relation_names[r], node_type_names[s], node_type_names[t], int(c))
            )
    # Relations with no edges still exist in the vocabulary of edge types.
    present = {r.name for r in relations}
    for name in relation_names:
        if name not in present:
            relations.append(RelationSummary(name, "?", "?", 0))
    return Schema(node_types, tuple(relations))
