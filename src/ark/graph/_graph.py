"""The graph as columnar arrays.

Nodes are integer indices ``0..N-1`` with a type code, a name and a text. Edges are
directed and typed. The adjacency is one CSR over *both* directions: row ``v`` lists
every edge touching ``v`` as ``(neighbor, relation code, direction)``, sorted by
neighbor, so that one-hop exploration with type filters is a few vectorised numpy
operations and all edges to the same neighbor are contiguous.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import pyarrow as pa

from ark.errors import ArkError
from ark.graph._schema import Schema, summarize
from ark.graph.columns import StringColumn, adjacency_order, code_dtype

#: Direction of an adjacency entry relative to the row's node.
OUT = 0  # the row's node is the edge's source
IN = 1  # the row's node is the edge's target
DIRECTION_NAMES = ("out", "in")


#: Node indices are int32 in the adjacency and the BM25 postings.
MAX_NODES = 2**31 - 1
#: Relation codes are stored as ``relation * 2 + direction`` in (at most) int32.
MAX_RELATIONS = 2**30 - 1
#: Node type codes are (at most) int32.
MAX_NODE_TYPES = 2**31 - 1


def check_limits(n_nodes: int, n_types: int, n_relations: int) -> None:
    """Refuse, at build, a graph whose indices or codes the stored arrays cannot hold
    (rather than wrapping them silently when cast)."""
    for what, count, limit, why in (
        ("nodes", n_nodes, MAX_NODES, "node indices are int32"),
        ("node types", n_types, MAX_NODE_TYPES, "type codes are at most int32"),
        ("relations", n_relations, MAX_RELATIONS, "relation * 2 + direction is int32"),
    ):
        if count > limit:
            raise ArkError(f"the graph has {count:,} {what}; ARK indexes at most {limit:,} ({why})")


def _check_codes(what: str, codes: np.ndarray, n_names: int) -> None:
    if len(codes) and (int(codes.min()) < 0 or int(codes.max()) >= n_names):
        bad = int(codes.min()) if int(codes.min()) < 0 else int(codes.max())
        raise ValueError(f"{what} code {bad} out of range [0, {n_names})")


@dataclass(frozen=True, slots=True)
class Neighborhood:
    """Filtered one-hop neighbors of one node, grouped per distinct neighbor.

    ``neighbors[i]`` is linked to the center by the adjacency entries
    ``entry_relations[group_starts[i]:group_starts[i+1]]`` (relation codes) and
    ``entry_directions[...]`` (``OUT``/``IN``).
    """

    neighbors: np.ndarray
    group_starts: np.ndarray
    entry_relations: np.ndarray
    entry_directions: np.ndarray


class Graph:
    """A typed, directed multigraph stored as arrays (in memory or memory-mapped)."""

    #: What the loader noted about its source that the arrays cannot say (a document
    #: store's layout, its skipped triples): a build records it in the index's
    #: ``meta.json``. A loader assigns its own mapping; the shared default is read-only.
    notes: Mapping[str, Any] = MappingProxyType({})

    def __init__(
        self,
        *,
        node_type: np.ndarray,
        node_type_names: list[str],
        names: pa.Array | pa.ChunkedArray,
        texts: pa.Array | pa.ChunkedArray,
        relation_names: list[str],
        indptr: np.ndarray,
        adj_node: np.ndarray,
        adj_code: np.ndarray,
        schema: Schema,
        n_edges: int,
    ) -> None:
        self.node_type = node_type
        self.node_type_names = list(node_type_names)
        self.names = StringColumn(names)
        self.texts = StringColumn(texts)
        self.relation_names = list(relation_names)
        self.indptr = indptr
        self.adj_node = adj_node
        self.adj_code = adj_code  # relation code * 2 + direction
        self.schema = schema
        self.n_edges = n_edges
        self._type_ids = {n: i for i, n in enumerate(self.node_type_names)}
        self._frozen: tuple[np.ndarray, ...] | None = None
        self._kernel: Any = None
        self._masks: dict[tuple[int, ...], np.ndarray] = {}
        self._rel_ids = {n: i for i, n in enumerate(self.relation_names)}

    # -- construction -------------------------------------------------------------

    @classmethod
    def from_edges(
        cls,
        *,
        names: Sequence[str] | pa.Array,
        node_type: np.ndarray,
        node_type_names: list[str],
        texts: Sequence[str] | pa.Array,
        src: np.ndarray,
        dst: np.ndarray,
        rel: np.ndarray,
        relation_names: list[str],
    ) -> Graph:
        """Build the CSR adjacency (both directions) from an edge list.

        ``node_type``/``rel`` are integer codes into ``node_type_names``/``relation_names``.
        """
        n = len(node_type)
        check_limits(n, len(node_type_names), len(relation_names))
        node_type = np.asarray(node_type)
        _check_codes("node type", node_type, len(node_type_names))
        node_type = np.ascontiguousarray(node_type, dtype=code_dtype(len(node_type_names)))
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        rel = np.asarray(rel, dtype=np.int64)
        _check_codes("relation", rel, len(relation_names))
        if len(src):
            lo = min(int(src.min()), int(dst.min()))
            hi = max(int(src.max()), int(dst.max()))
            if lo < 0 or hi >= n:
                raise ValueError(f"edge endpoint out of range [0, {n}): {lo if lo < 0 else hi}")
        center = np.concatenate([src, dst])
        other = np.concatenate([dst, src])
        code = np.concatenate([rel * 2 + OUT, rel * 2 + IN])
        n_codes = max(2 * len(relation_names), 1)
        order = adjacency_order(center, other, code, n, n_codes)
        counts = np.bincount(center, minlength=n)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        adj_node = other[order].astype(np.int32)
        adj_code = code[order].astype(code_dtype(n_codes))
        schema = summarize(node_type, node_type_names, src, dst, rel, relation_names)
        return cls(
            node_type=node_type,
            node_type_names=node_type_names,
            names=_as_string_array(names),
            texts=_as_string_array(texts),
            relation_names=relation_names,
            indptr=indptr,
            adj_node=adj_node,
            adj_code=adj_code,
            schema=schema,
            n_edges=len(src),
        )

    # -- lookups ------------------------------------------------------------------

    @property
    def n_nodes(self) -> int:
        return len(self.node_type)

    def name(self, index: int) -> str:
        return self.names[index]

    def text(self, index: int) -> str:
        return self.texts[index]

    def type_name(self, index: int) -> str:
        return self.node_type_names[int(self.node_type[index])]

    def type_id(self, name: str) -> int | None:
        return self._type_ids.get(name)

    def relation_id(self, name: str) -> int | None:
        return self._rel_ids.get(name)

    def degree(self, index: int) -> int:
        return int(self.indptr[index + 1] - self.indptr[index])

    def descriptor(self, index: int) -> str:
        """The text BM25 indexes for a node: name, type and text fields."""
        return descriptor_text(self.name(index), self.type_name(index), self.text(index))

    # -- one-hop exploration --------------------------------------------------------

    def neighborhood(
        self,
        index: int,
        node_types: Sequence[int] | None = None,
        relations: Sequence[int] | None = None,
    ) -> Neighborhood:
        """Neighbors of ``index`` in either direction, kept when their type code is in
        ``node_types`` and the edge's relation code in ``relations`` (``None``: no filter).

        One compiled pass over the node's slice of the CSR (see :mod:`ark.graph.kernels`).
        """
        index = int(index)
        if not 0 <= index < self.n_nodes:  # the kernel does not check bounds
            raise IndexError(f"node {index} out of range [0, {self.n_nodes})")
        if self._frozen is None:
            from ark.graph import kernels  # numba, imported on first use

            self._kernel = kernels.neighborhood
            # Read-only plain views, so that arrays built in memory and memory-mapped
            # ones share one compiled specialisation (and np.memmap's Python-level
            # slicing hooks stay out of the way).
            self._frozen = tuple(
                _read_only(a) for a in (self.indptr, self.adj_node, self.adj_code, self.node_type)
            )
        neighbors, starts, rels, dirs = self._kernel(
            *self._frozen,
            index,
            self._mask(node_types, len(self.node_type_names)),
            self._mask(relations, len(self.relation_names)),
        )
        return Neighborhood(neighbors, starts, rels, dirs)

    def _mask(self, ids: Sequence[int] | None, size: int) -> np.ndarray:
        if ids is None:
            return _NO_FILTER
        key = (size, *ids)
        mask = self._masks.get(key)
        if mask is None:
            mask = np.zeros(size, dtype=bool)
            mask[list(ids)] = True
            if len(self._masks) < 1024:
                self._masks[key] = mask
        return mask


_NO_FILTER = np.zeros(0, dtype=bool)


def _read_only(array: np.ndarray) -> np.ndarray:
    out = np.ascontiguousarray(array).view(np.ndarray)
    out.flags.writeable = False
    return out


def descriptor_text(name: str, type_name: str, text: str) -> str:
    return f"{name}\n{type_name}\n{text}" if text else f"{name}\n{type_name}"


def _as_string_array(values: Sequence[str] | pa.Array) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array):
        return values.cast(pa.large_string())
    return pa.array(list(values), type=pa.large_string())
