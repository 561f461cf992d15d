"""``sync``: bring an index in step with its source — a database that changed, or a
file exported again — as one update.

The difference is worked out against the index itself, not against a record of the
last sync: a node is its name, type and text, an edge its two nodes and relation.
Rows the source no longer has, or has changed, are removed; new and changed rows are
added; the rest is left alone, node indices included. So there is no state to lose:
a sync killed at any point leaves the index as it was (the update commits at once
or not at all), and running it again finds the same difference; a sync of an
unchanged source commits nothing. The result holds what a rebuild from the source
holds (every node, edge and search result); only node indices differ, as after any
update, until ``compact``.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from ark.graph import Graph, SourceFormat, TableLayout, load_graph
from ark.index._compact import live_edges
from ark.index._plan import Plan
from ark.index._update import update_index


def sync_index(
    path: str | Path,
    source: str | Path,
    *,
    fmt: SourceFormat = "auto",
    schema_file: str | Path | None = None,
    types_file: str | Path | None = None,
    layout: TableLayout | None = None,
) -> dict[str, Any]:
    """Make the index at ``path`` hold what ``source`` (anything ``ark index build``
    reads, a database included) holds now, by one update. Returns its report, with
    how many nodes were changed in place of removed and added (``changed_nodes``)."""
    started = time.perf_counter()
    graph = load_graph(source, fmt, schema_file=schema_file, types_file=types_file, layout=layout)
    loaded = time.perf_counter() - started
    found: dict[str, int] = {}
    report = update_index(
        path,
        change=lambda plan: found.update(plan_difference(plan, graph)),
        started=started,
        phases={"load source": loaded},
    )
    report.update(found)
    report["source"] = str(source)
    return report


def plan_difference(plan: Plan, source: Graph) -> dict[str, int]:
    """Add to ``plan`` what turns its snapshot's live graph into ``source``: nodes by
    (name, type, text), edges by (source node, relation, target node), each counted
    as a multiset (a graph may hold two equal nodes or edges)."""
    g = plan.g
    removed = getattr(g, "removed", None)
    live = np.arange(g.n_nodes) if removed is None else np.flatnonzero(~removed)
    # -- nodes ------------------------------------------------------------------------
    waiting: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for v, name, text, t in zip(
        live.tolist(),
        g.names.take(live.tolist()),
        g.texts.take(live.tolist()),
        np.asarray(g.node_type)[live].tolist(),
        strict=True,
    ):
        waiting[(name, g.node_type_names[t], text)].append(v)
    for ids in waiting.values():
        ids.reverse()  # popped from the end: the first index first
    type_ids = {t: i for i, t in enumerate(plan.type_names)}
    src_types = np.asarray(source.node_type).tolist()
    at = np.empty(source.n_nodes, np.int64)  # source node -> index node
    added_names: list[str] = []
    for i, (name, text, t) in enumerate(
        zip(source.names.to_pylist(), source.texts.to_pylist(), src_types, strict=True)
    ):
        kind = source.node_type_names[t]
        same = waiting.get((name, kind, text))
        if same:
            at[i] = same.pop()
            continue
        at[i] = plan.n + len(plan.new_names)
        plan.new_names.append(name)
        plan.new_texts.append(text)
        plan.new_types.append(type_ids.setdefault(kind, len(type_ids)))
        added_names.append(name)
    plan.type_names = list(type_ids)
    gone = sorted(v for ids in waiting.values() for v in ids)
    for v in gone:
        plan.removed_nodes.append(v)
        plan._remove_entries(v, None, None)
    changed = len(set(added_names) & set(g.names.take(gone)))
    # -- edges ------------------------------------------------------------------------
    center, rel, other = live_edges(g)
    keep = ~(np.isin(center, gone) | np.isin(other, gone))
    have = Counter(
        zip(center[keep].tolist(), rel[keep].tolist(), other[keep].tolist(), strict=True)
    )
    rel_ids = {r: i for i, r in enumerate(plan.rel_names)}
    rel_map = [rel_ids.setdefault(r, len(rel_ids)) for r in source.relation_names]
    plan.rel_names = list(rel_ids)
    src, src_rel, dst = live_edges(source)  # in the source's own indices and codes
    s, d, r = at[src], at[dst], np.asarray(rel_map, np.int64)[src_rel]
    want = Counter(zip(s.tolist(), r.tolist(), d.tolist(), strict=True))
    new_edges: list[tuple[int, int, int]] = []
    for edge, n in have.items():
        if want.get(edge, 0) < n:  # fewer copies (or none) wanted: remove all, add back
            plan._remove_entries(edge[0], edge[2], edge[1])
            new_edges.extend([edge] * want.get(edge, 0))
    for edge, n in want.items():
        if n > have.get(edge, 0):
            new_edges.extend([edge] * (n - have.get(edge, 0)))
    if new_edges:
        plan.new_edges.append(np.asarray(new_edges, np.int64).reshape(-1, 3))
    return {
        "changed_nodes": changed,
        "source_nodes": source.n_nodes,
        "source_edges": source.n_edges,
    }
