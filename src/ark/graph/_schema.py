"""The schema summary of a graph: what the agent's prompt is built from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


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

    def describe(self, min_share: float = 0.01) -> str:
        """A compact plain-text rendering, used in prompts and by ``ark info``.

        Type pairs carrying less than ``min_share`` of a relation's edges (strays from
        nodes that play several roles) are counted but not listed, to keep prompts short.
        """
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
        from ark.graph._graph import unique_rows

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
