"""``compact``: merge the base and every update segment into one new base.

The live graph (removed nodes and edges left out, survivors in index order, added
nodes after them in the order they were added) is indexed from scratch — the same
code as ``ark index build`` — and swapped in for the old directory in one atomic
step. Node indices change here and only here: ``remap.npy`` in the new index maps
each old index to its new one (-1: removed), so trajectories and run stores that
name old indices stay interpretable.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from ark.graph import OUT, Graph
from ark.index._seg_graph import SegmentedGraph
from ark.index._store import open_index, write_index
from ark.index._tokenize import TokenizerConfig
from ark.index._update import _step, update_lock

REMAP_FILE = "remap.npy"


def live_edges(g: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every live edge of a snapshot's graph as (source, relation, target) index
    arrays: the base's outgoing entries an update did not remove, then the delta's."""
    base = g.base if isinstance(g, SegmentedGraph) else g
    indptr = np.asarray(base.indptr)
    code = np.asarray(base.adj_code, dtype=np.int64)
    live = (code & 1) == OUT
    if isinstance(g, SegmentedGraph) and len(g.removed_entries):
        live[g.removed_entries] = False
    center = np.repeat(np.arange(base.n_nodes, dtype=np.int64), np.diff(indptr))[live]
    other = np.asarray(base.adj_node, dtype=np.int64)[live]
    rel = code[live] >> 1
    if isinstance(g, SegmentedGraph) and len(g.delta_edges):
        d = np.asarray(g.delta_edges, dtype=np.int64)
        center = np.concatenate([center, d[:, 0]])
        rel = np.concatenate([rel, d[:, 1]])
        other = np.concatenate([other, d[:, 2]])
    return center, rel, other


def live_graph(index: Any) -> tuple[Graph, np.ndarray]:
    """The snapshot's live graph as a plain :class:`Graph`, and the old -> new map."""
    g = index.graph
    removed = g.removed if isinstance(g, SegmentedGraph) else np.zeros(g.n_nodes, dtype=bool)
    keep = ~removed
    remap = np.full(g.n_nodes, -1, dtype=np.int64)
    remap[keep] = np.arange(int(keep.sum()), dtype=np.int64)
    center, rel, other = live_edges(g)
    kept = np.flatnonzero(keep)
    graph = Graph.from_edges(
        names=g.names.arrow.take(kept).combine_chunks(),
        node_type=np.asarray(g.node_type)[kept],
        node_type_names=list(g.node_type_names),
        texts=g.texts.arrow.take(kept).combine_chunks(),
        src=remap[center],
        dst=remap[other],
        rel=rel,
        relation_names=list(g.relation_names),
    )
    return graph, remap


def compact_index(path: str | Path) -> dict[str, Any]:
    """Rebuild ``path`` as one base from its live graph (``remap.npy`` maps old node
    indices to new); a kill at any point leaves the old index or the new one."""
    root = Path(path)
    started = time.perf_counter()
    with update_lock(root):
        _step("locked")
        index = open_index(root)
        graph, remap = live_graph(index)
        meta = index.meta
        segments = meta.get("segments") or {}
        _step("planned")
        out = write_index(
            graph,
            index.described,
            root,
            source_info=meta["source"],
            tokenizer=TokenizerConfig.from_dict(meta["tokenizer"]),
            params=index.bm25.params,
            extra={
                "compacted": {
                    # when the base it replaced was built: a run started after that
                    # and before this compact names nodes by the indices remap maps
                    "base_created": meta.get("created"),
                    "from_generation": segments.get("generation", 0),
                    "segments": segments.get("live", 0),
                    "node_slots": len(remap),
                    "remap": REMAP_FILE,
                },
                **({"stark": meta["stark"]} if "stark" in meta else {}),
            },
            files={REMAP_FILE: remap},
            started=started,
        )
        _step("committed")
    return {
        "index": str(root),
        "nodes": graph.n_nodes,
        "edges": graph.n_edges,
        "segments_merged": segments.get("live", 0),
        "removed_nodes": int((remap < 0).sum()),
        "remap": str(root / REMAP_FILE),
        "seconds": round(time.perf_counter() - started, 3),
        "meta": out.meta,
    }


def read_remap(path: str | Path) -> np.ndarray | None:
    """The old -> new node index map the last compact wrote (None: never compacted)."""
    file = Path(path) / REMAP_FILE
    return np.load(file) if file.is_file() else None
