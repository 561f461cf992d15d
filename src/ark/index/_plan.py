"""Working out one update against an opened snapshot: which adjacency entries,
delta edges and nodes it removes, which nodes and edges it adds (names resolved to
indices), the new segment and the manifest that will commit it."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ark.errors import ArkError, GraphFormatError
from ark.graph import OUT, Graph, descriptor_text
from ark.index._bm25 import build_bm25
from ark.index._seg_graph import SegmentedGraph
from ark.index._segments import (
    MANIFEST_FORMAT,
    MANIFEST_VERSION,
    Segment,
    read_manifest,
)

#: Where a name came from, for errors: (file, line) or None.
Where = tuple[str, int] | None


@dataclass
class Removal:
    """Names to remove, each with where it was read (for errors)."""

    nodes: Sequence[tuple[str, Where]] = ()
    edges: Sequence[tuple[tuple[str, str, str], Where]] = ()


class Plan:
    """One update being worked out against an opened snapshot."""

    def __init__(self, snap: Any) -> None:
        self.snap = snap
        g = snap.graph
        self.g = g
        self.seg = isinstance(g, SegmentedGraph)
        self.base = g.base if self.seg else g
        self.type_names = list(g.node_type_names)
        self.rel_names = list(g.relation_names)
        self.n = g.n_nodes
        self.removed_entries: list[np.ndarray] = []
        self.removed_delta: list[np.ndarray] = []
        self.removed_nodes: list[int] = []
        self.new_names: list[str] = []
        self.new_texts: list[str] = []
        self.new_types: list[int] = []
        self.new_edges: list[np.ndarray] = []
        self.removed_edge_count = 0
        self._counts = _snapshot_counts(snap)

    # -- names --------------------------------------------------------------------------

    def lookup(self, names: Sequence[str]) -> dict[str, list[int]]:
        """Live node indices of each of ``names`` (one scan of the name column)."""
        if not names:
            return {}
        column = self.g.names.arrow
        hit = np.flatnonzero(
            pc.is_in(column, value_set=pa.array(list(set(names)))).to_numpy(zero_copy_only=False)
        )
        out: dict[str, list[int]] = {}
        removed = self.g.removed if self.seg else None
        for i, name in zip(hit.tolist(), self.g.names.take(hit.tolist()), strict=True):
            if removed is None or not removed[i]:
                out.setdefault(name, []).append(i)
        return out

    def _one(self, found: dict[str, list[int]], name: str, where: Where, what: str) -> int:
        ids = found.get(name, [])
        if len(ids) == 1:
            return ids[0]
        problem = (
            f"no node named {name!r}"
            if not ids
            else (
                f"{len(ids)} nodes are named {name!r} ({', '.join(map(str, ids[:5]))}); "
                "the name is ambiguous"
            )
        )
        raise _error(where, f"{what}: {problem}")

    # -- removal ------------------------------------------------------------------------

    def remove(self, removal: Removal) -> None:
        found = self.lookup(
            [n for n, _ in removal.nodes] + [x for e, _ in removal.edges for x in (e[0], e[2])]
        )
        for name, where in removal.nodes:
            node = self._one(found, name, where, "cannot remove the node")
            self.removed_nodes.append(node)
            self._remove_entries(node, None, None)
        rel_ids = {r: i for i, r in enumerate(self.rel_names)}
        for (h, r, t), where in removal.edges:
            src = self._one(found, h, where, "cannot remove the edge")
            dst = self._one(found, t, where, "cannot remove the edge")
            if r not in rel_ids:
                raise _error(where, f"cannot remove the edge: no relation named {r!r}")
            if not self._remove_entries(src, dst, rel_ids[r]):
                raise _error(where, f"cannot remove the edge: no edge {h}|{r}|{t}")

    def _remove_entries(self, node: int, other: int | None, rel: int | None) -> bool:
        """Mark the live entries of ``node``'s edges removed (only those to ``other``
        by ``rel`` outgoing, when given), both directions. Whether any matched."""
        found = False
        base = self.base
        if node < base.n_nodes:
            s, e = int(base.indptr[node]), int(base.indptr[node + 1])
            nb = np.asarray(base.adj_node[s:e], dtype=np.int64)
            code = np.asarray(base.adj_code[s:e], dtype=np.int64)
            keep = np.ones(e - s, dtype=bool)
            if other is not None:
                keep &= (nb == other) & (code == 2 * rel + OUT)
            pos = np.arange(s, e)[keep]
            if self.seg:
                pos = pos[~np.isin(pos, self.g.removed_entries)]
            if len(pos):
                found = True
                mirrors = [pos]
                for p in pos.tolist():
                    u, c = int(base.adj_node[p]), int(base.adj_code[p])
                    us, ue = int(base.indptr[u]), int(base.indptr[u + 1])
                    row = np.asarray(base.adj_node[us:ue])
                    lo, hi = np.searchsorted(row, (node, node + 1))
                    cand = np.arange(us + lo, us + hi)
                    mirrors.append(cand[np.asarray(base.adj_code[us + lo : us + hi]) == (c ^ 1)])
                self.removed_entries.append(np.unique(np.concatenate(mirrors)))
        if self.seg and len(self.g.delta_edges):
            d = self.g.delta_edges
            if other is None:
                hit = (d[:, 0] == node) | (d[:, 2] == node)
            else:
                hit = (d[:, 0] == node) & (d[:, 2] == other) & (d[:, 1] == rel)
            if hit.any():
                found = True
                self.removed_delta.append(self.g.delta_edge_ids[hit])
        return found

    # -- addition -----------------------------------------------------------------------

    def add(self, delta: Graph, source: str, explicit: bool, infer: bool) -> None:
        names = delta.names.to_pylist()
        removed_now = set(self.removed_nodes)
        found = {k: [i for i in v if i not in removed_now] for k, v in self.lookup(names).items()}
        type_ids = {t: i for i, t in enumerate(self.type_names)}
        delta_types = [delta.node_type_names[c] for c in np.asarray(delta.node_type).tolist()]
        if infer:
            delta_types = self._infer_types(delta, delta_types, found)
        texts = delta.texts.to_pylist()
        index = np.empty(len(names), np.int64)
        for i, name in enumerate(names):
            ids = found.get(name, [])
            if len(ids) > 1:
                raise _node_error(
                    source, i, explicit, f"{len(ids)} nodes are named {name!r}; it is ambiguous"
                )
            if ids:
                old = ids[0]
                # A table links to an existing node by listing its name and type with
                # no properties (or the same ones); other properties would be a change.
                if explicit and (
                    self.g.type_name(old) != delta_types[i]
                    or (texts[i] and self.g.text(old) != texts[i])
                ):
                    raise _node_error(
                        source,
                        i,
                        explicit,
                        f"node {name!r} exists (index {old}) with another type or text; "
                        "remove it first to replace it",
                    )
                index[i] = old
                continue
            index[i] = self.n + len(self.new_names)
            self.new_names.append(name)
            self.new_texts.append(texts[i])
            self.new_types.append(type_ids.setdefault(delta_types[i], len(type_ids)))
        self.type_names = list(type_ids)
        rel_ids = {r: i for i, r in enumerate(self.rel_names)}
        rel_map = np.asarray(
            [rel_ids.setdefault(r, len(rel_ids)) for r in delta.relation_names], np.int64
        )
        self.rel_names = list(rel_ids)
        ptr = np.asarray(delta.indptr)
        center = np.repeat(np.arange(delta.n_nodes), np.diff(ptr))
        code = np.asarray(delta.adj_code, dtype=np.int64)
        out = (code & 1) == OUT
        src = index[center[out]]
        dst = index[np.asarray(delta.adj_node, dtype=np.int64)[out]]
        self.new_edges.append(np.stack([src, rel_map[code[out] >> 1], dst], axis=1))

    def _infer_types(
        self, delta: Graph, given: list[str], found: dict[str, list[int]]
    ) -> list[str]:
        """Types of new triples' nodes from the index's schema: each relation's most
        common (head type, tail type), voted over the node's roles as a build votes."""
        main: dict[str, tuple[str, str, int]] = {}
        for r in self.g.schema.relations:
            if r.count and (r.name not in main or r.count > main[r.name][2]):
                main[r.name] = (r.source_type, r.target_type, r.count)
        if not all(r in main for r in delta.relation_names):
            return given
        votes: list[dict[str, int]] = [{} for _ in range(delta.n_nodes)]
        ptr = np.asarray(delta.indptr)
        for v in range(delta.n_nodes):
            for c in np.asarray(delta.adj_code[ptr[v] : ptr[v + 1]]).tolist():
                head, tail, _ = main[delta.relation_names[c >> 1]]
                t = head if (c & 1) == OUT else tail
                votes[v][t] = votes[v].get(t, 0) + 1
        order = {t: i for i, t in enumerate(self.type_names)}
        return [
            min(v.items(), key=lambda kv: (-kv[1], order.get(kv[0], 1 << 30)))[0] if v else g
            for v, g in zip(votes, given, strict=True)
        ]

    # -- the segment and the manifest ----------------------------------------------------

    def is_empty(self) -> bool:
        """Whether the plan changes nothing (no node or edge added or removed)."""
        return not (
            self.removed_nodes
            or self.new_names
            or any(len(e) for e in self.removed_entries)
            or any(len(e) for e in self.removed_delta)
            or any(len(e) for e in self.new_edges)
        )

    def segment(self) -> Segment:
        seg = Segment(
            names=self.new_names,
            texts=self.new_texts,
            node_type=np.asarray(self.new_types, np.int32),
            edges=np.concatenate(self.new_edges) if self.new_edges else np.zeros((0, 3), np.int64),
            removed_entries=_cat(self.removed_entries),
            removed_edges=_cat(self.removed_delta),
            removed_nodes=np.unique(np.asarray(self.removed_nodes, np.int64)),
        )
        tok = self.snap.bm25.tokenizer
        texts = [
            descriptor_text(n, self.type_names[t], x)
            for n, t, x in zip(self.new_names, self.new_types, self.new_texts, strict=True)
        ]
        mini = build_bm25(texts, len(texts), tok, self.snap.bm25.params)
        seg.vocab = dict(mini.vocab)
        seg.postings = {
            "indptr": mini.indptr,
            "indices": mini.indices,
            "tf": mini.tf,
            "doc_len": mini.doc_len,
        }
        self._segment = seg
        return seg

    def manifest(self) -> dict[str, Any]:
        seg, snap = self._segment, self.snap
        types, edges = self._counts
        types = types + [0] * (len(self.type_names) - len(types))
        node_type = np.asarray(self.g.node_type)
        for t in seg.node_type.tolist():
            types[t] += 1
        for v in seg.removed_nodes.tolist():
            types[int(node_type[v])] -= 1
        all_types = np.concatenate([node_type.astype(np.int64), seg.node_type.astype(np.int64)])
        removed = self._removed_edges()
        self.removed_edge_count = len(removed)
        for sign, rows in ((1, seg.edges), (-1, removed)):
            for s, r, d in np.asarray(rows, np.int64).reshape(-1, 3).tolist():
                key = (r, int(all_types[s]), int(all_types[d]))
                edges[key] = edges.get(key, 0) + sign
        # the manifest the snapshot was opened from (the writer holds the lock: it
        # is the current one); read again only for a snapshot opened otherwise
        previous = (
            snap.__dict__["_manifest"] if "_manifest" in snap.__dict__ else read_manifest(snap.path)
        )
        n_live = snap.meta["counts"]["nodes"] + len(seg.names) - len(seg.removed_nodes)
        n_edges = snap.meta["counts"]["edges"] + len(seg.edges) - len(removed)
        return {
            "format": MANIFEST_FORMAT,
            "version": MANIFEST_VERSION,
            "base": snap.base_digest,
            "generation": (int(previous["generation"]) if previous else 0) + 1,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "segments": list(previous["segments"]) if previous else [],
            **(
                {"described": previous["described"]} if previous and "described" in previous else {}
            ),
            "node_type_names": self.type_names,
            "relation_names": self.rel_names,
            "type_counts": types,
            "edge_counts": [[*k, c] for k, c in sorted(edges.items()) if c],
            "counts": {
                "nodes": n_live,
                "edges": n_edges,
                "node_slots": self.n + len(seg.names),
                "node_types": len(self.type_names),
                "relations": len(self.rel_names),
            },
        }

    def _removed_edges(self) -> np.ndarray:
        """(src, rel, dst) of every edge this update removes, once each."""
        seg, rows = self._segment, []
        if len(seg.removed_entries):
            pos = seg.removed_entries
            code = np.asarray(self.base.adj_code, dtype=np.int64)[pos]
            out = (code & 1) == OUT
            center = np.searchsorted(np.asarray(self.base.indptr), pos, side="right") - 1
            other = np.asarray(self.base.adj_node, dtype=np.int64)[pos]
            rows.append(np.stack([center[out], code[out] >> 1, other[out]], axis=1))
        if len(seg.removed_edges):
            ids = np.searchsorted(self.g.delta_edge_ids, seg.removed_edges)
            rows.append(self.g.delta_edges[ids])
        return np.concatenate(rows) if rows else np.zeros((0, 3), np.int64)


def _snapshot_counts(snap: Any) -> tuple[list[int], dict[tuple[int, int, int], int]]:
    """Node counts per type code and edge counts per (relation, source type, target
    type) codes, read from the snapshot's schema."""
    g = snap.graph
    type_ids = {t: i for i, t in enumerate(g.node_type_names)}
    rel_ids = {r: i for i, r in enumerate(g.relation_names)}
    types = [0] * len(g.node_type_names)
    for t in g.schema.node_types:
        types[type_ids[t.name]] = t.count
    edges: dict[tuple[int, int, int], int] = {}
    for r in g.schema.relations:
        if r.count:
            key = (rel_ids[r.name], type_ids[r.source_type], type_ids[r.target_type])
            edges[key] = edges.get(key, 0) + r.count
    return types, edges


def _cat(parts: list[np.ndarray]) -> np.ndarray:
    return np.unique(np.concatenate(parts)).astype(np.int64) if parts else np.zeros(0, np.int64)


def _node_error(source: str, row: int, explicit: bool, message: str) -> ArkError:
    """An error naming the nodes table's line (CSV) or row (parquet) when the source
    is a table; a triple file's node has no one line, so only the file is named."""
    if not explicit:
        return GraphFormatError(source, message)
    for name, offset, unit in (("nodes.csv", 2, "line"), ("nodes.parquet", 0, "row")):
        if (Path(source) / name).exists():
            return GraphFormatError(Path(source) / name, message, row + offset, unit)
    return GraphFormatError(source, message)


def _error(where: Where, message: str, unit: str = "line") -> ArkError:
    if where is None:
        return ArkError(message)
    return GraphFormatError(where[0], message, where[1], unit)
