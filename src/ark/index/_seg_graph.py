"""The graph of a base index plus delta segments, seen as one :class:`Graph`.

Node indices ``0..n_base-1`` are the base's; each segment appends its new nodes. A
neighborhood is the base's CSR row minus the adjacency entries removed since (a
sorted array of positions: deletions as a bitmap, Lucene-style) plus the entries of
the edges added since (a small in-memory CSR). A row no update touched is answered by
the same compiled kernel as an unsegmented index, at the same cost.

Code that reads the raw CSR arrays (``indptr``, ``adj_node``, ``adj_code``: linking,
distillation) gets them merged on first access — a full pass, as ``compact`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from ark.graph import IN, OUT, Graph, Neighborhood, Schema
from ark.graph.columns import StringColumn, adjacency_order, code_dtype

_NO_FILTER = np.zeros(0, dtype=bool)


def delta_entries(
    src: np.ndarray, rel: np.ndarray, dst: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Adjacency entries (center, other, code) of edges, both directions, sorted by
    (center, other, code) as the base's CSR rows are."""
    center = np.concatenate([src, dst]).astype(np.int64)
    other = np.concatenate([dst, src]).astype(np.int64)
    code = np.concatenate([rel * 2 + OUT, rel * 2 + IN]).astype(np.int64)
    if len(center) == 0:
        return center, other, code
    n = int(max(center.max(), other.max())) + 1
    order = adjacency_order(center, other, code, n, int(code.max()) + 1)
    return center[order], other[order], code[order]


class SegmentedGraph(Graph):
    """Base graph + appended nodes + added edges − removed entries and nodes."""

    def __init__(
        self,
        base: Graph,
        *,
        names: pa.Array,
        texts: pa.Array,
        node_type: np.ndarray,
        node_type_names: list[str],
        relation_names: list[str],
        edges: np.ndarray,
        edge_ids: np.ndarray,
        removed_entries: np.ndarray,
        removed_nodes: np.ndarray,
        schema: Schema,
        n_edges: int,
    ) -> None:
        # Graph.__init__ is not called: indptr/adj_node/adj_code are properties here.
        self.base = base
        self.n_base = base.n_nodes
        self.node_type = np.ascontiguousarray(
            np.concatenate([np.asarray(base.node_type), node_type]),
            dtype=code_dtype(len(node_type_names)),
        )
        self.node_type.flags.writeable = False
        self.node_type_names = list(node_type_names)
        self.names = StringColumn(pa.chunked_array([*base.names.arrow.chunks, names]))
        self.texts = StringColumn(pa.chunked_array([*base.texts.arrow.chunks, texts]))
        self.relation_names = list(relation_names)
        self.schema = schema
        self.n_edges = n_edges
        self._type_ids = {n: i for i, n in enumerate(self.node_type_names)}
        self._rel_ids = {n: i for i, n in enumerate(self.relation_names)}
        self._masks: dict[tuple[int, ...], np.ndarray] = {}
        self._kernel: Any = None
        #: The live delta edges (src, relation, dst) and their ids (row in the
        #: concatenation of every segment's edges), for updates and compact.
        self.delta_edges = edges
        self.delta_edge_ids = edge_ids
        src, rel, dst = (edges[:, i].astype(np.int64) for i in range(3))
        self.d_center, self.d_other, self.d_code = delta_entries(src, rel, dst)
        self.removed_entries = np.unique(np.asarray(removed_entries, dtype=np.int64))
        self.removed = np.zeros(self.n_nodes, dtype=bool)
        self.removed[np.asarray(removed_nodes, dtype=np.int64)] = True
        touched = np.zeros(self.n_nodes, dtype=np.uint8)
        touched[self.d_center] = 1
        if len(self.removed_entries):
            rows = np.searchsorted(np.asarray(base.indptr), self.removed_entries, "right") - 1
            touched[rows] = 1
        #: Whether an update changed a node's row: one byte lookup decides between the
        #: base's kernel (untouched) and the merge below.
        self._touched = touched.tobytes()
        self._base_arrays: tuple[np.ndarray, ...] | None = None
        self._merged: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @property
    def n_nodes(self) -> int:
        return len(self.node_type)

    def is_removed(self, index: int) -> bool:
        """Whether node ``index`` was removed (its index stays taken until compact)."""
        return bool(self.removed[index])

    # -- one-hop exploration -----------------------------------------------------------

    def _row(self, index: int) -> tuple[int, int, int, int, int, int]:
        """Base row bounds, removed-entry bounds within them, delta row bounds."""
        s = e = 0
        if index < self.n_base:
            s, e = int(self.base.indptr[index]), int(self.base.indptr[index + 1])
        rs, re_ = np.searchsorted(self.removed_entries, (s, e))
        ds, de = np.searchsorted(self.d_center, (index, index + 1))
        return s, e, int(rs), int(re_), int(ds), int(de)

    def neighborhood(
        self,
        index: int,
        node_types: Sequence[int] | None = None,
        relations: Sequence[int] | None = None,
    ) -> Neighborhood:
        index = int(index)
        if not 0 <= index < self.n_nodes:
            raise IndexError(f"node {index} out of range [0, {self.n_nodes})")
        type_ok = self._mask(node_types, len(self.node_type_names))
        rel_ok = self._mask(relations, len(self.relation_names))
        if not self._touched[index]:  # untouched: the base's kernel, as unsegmented
            if index >= self.n_base:
                return _empty()
            if self._kernel is None:
                from ark.graph import kernels

                self._kernel = kernels.neighborhood
            indptr, adj_node, adj_code = self._base()
            out = self._kernel(indptr, adj_node, adj_code, self.node_type, index, type_ok, rel_ok)
            return Neighborhood(*out)
        s, e, rs, re_, ds, de = self._row(index)
        from ark.graph.kernels import merged_neighborhood

        _, adj_node, adj_code = self._base()
        out = merged_neighborhood(
            adj_node,
            adj_code,
            s,
            e,
            self.removed_entries,
            rs,
            re_,
            self.d_other,
            self.d_code,
            ds,
            de,
            self.node_type,
            type_ok,
            rel_ok,
        )
        return Neighborhood(*out)

    def degree(self, index: int) -> int:
        index = int(index)
        if not self._touched[index] and index < self.n_base:
            return int(self.base.indptr[index + 1] - self.base.indptr[index])
        s, e, rs, re_, ds, de = self._row(index)
        return (e - s) - (re_ - rs) + (de - ds)

    def _base(self) -> tuple[np.ndarray, ...]:
        if self._base_arrays is None:
            self._base_arrays = tuple(
                _read_only(a) for a in (self.base.indptr, self.base.adj_node, self.base.adj_code)
            )
        return self._base_arrays

    # -- the merged CSR, for code that reads the arrays --------------------------------

    def _merge(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._merged is None:
            indptr, adj_node, adj_code = (np.asarray(a) for a in self._base())
            keep = np.ones(len(adj_node), dtype=bool)
            keep[self.removed_entries] = False
            center = np.repeat(np.arange(self.n_base, dtype=np.int64), np.diff(indptr))[keep]
            other = np.concatenate([adj_node[keep].astype(np.int64), self.d_other])
            code = np.concatenate([adj_code[keep].astype(np.int64), self.d_code])
            center = np.concatenate([center, self.d_center])
            order = np.lexsort((code, other, center))
            counts = np.bincount(center, minlength=self.n_nodes)
            ptr = np.zeros(self.n_nodes + 1, dtype=np.int64)
            np.cumsum(counts, out=ptr[1:])
            n_codes = max(2 * len(self.relation_names), 1)
            self._merged = (
                ptr,
                other[order].astype(np.int32),
                code[order].astype(code_dtype(n_codes)),
            )
        return self._merged

    @property  # type: ignore[override]
    def indptr(self) -> np.ndarray:
        return self._merge()[0]

    @property  # type: ignore[override]
    def adj_node(self) -> np.ndarray:
        return self._merge()[1]

    @property  # type: ignore[override]
    def adj_code(self) -> np.ndarray:
        return self._merge()[2]

    def live_edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every live edge once (src, rel, dst), as its outgoing entries give it."""
        indptr, adj_node, adj_code = self._merge()
        center = np.repeat(np.arange(self.n_nodes, dtype=np.int64), np.diff(indptr))
        code = np.asarray(adj_code, dtype=np.int64)
        out = (code & 1) == OUT
        return center[out], code[out] >> 1, np.asarray(adj_node, dtype=np.int64)[out]


def _empty() -> Neighborhood:
    z = np.zeros(0, np.int64)
    return Neighborhood(z, np.zeros(1, np.int64), z, z)


def _read_only(array: Any) -> np.ndarray:
    out = np.ascontiguousarray(array).view(np.ndarray)
    out.flags.writeable = False
    return out
