"""The one neighborhood kernel: a CSR row as built and a row an update edited (removed
positions, added entries) are filtered and grouped alike, and as a plain reference
grouping says."""

import numpy as np
import pytest

from ark.graph.kernels import merged_neighborhood, neighborhood

N_NODES, N_TYPES, N_RELATIONS = 60, 4, 5


def _csr(center, other, code):
    """Rows sorted by (neighbor, code), as the graph's adjacency is."""
    order = np.lexsort((code, other, center))
    indptr = np.zeros(N_NODES + 1, np.int64)
    np.cumsum(np.bincount(center, minlength=N_NODES), out=indptr[1:])
    return indptr, other[order].astype(np.int32), code[order].astype(np.int16)


def _edges(rng, n):
    src, dst = rng.integers(0, N_NODES, n), rng.integers(0, N_NODES, n)
    rel = rng.integers(0, N_RELATIONS, n)
    center = np.concatenate([src, dst])
    other = np.concatenate([dst, src])
    code = np.concatenate([rel * 2, rel * 2 + 1])
    return center, other, code


def _reference(entries, node_type, type_ok, rel_ok):
    """Group sorted (neighbor, code) entries by neighbor, in plain Python."""
    kept = [
        (o, c)
        for o, c in sorted(entries)
        if (not len(rel_ok) or rel_ok[c >> 1]) and (not len(type_ok) or type_ok[node_type[o]])
    ]
    neighbors, starts = [], []
    for k, (o, _) in enumerate(kept):
        if not neighbors or neighbors[-1] != o:
            neighbors.append(o)
            starts.append(k)
    starts.append(len(kept))
    return neighbors, starts, [c >> 1 for _, c in kept], [c & 1 for _, c in kept]


def _masks(rng):
    yield np.zeros(0, np.bool_), np.zeros(0, np.bool_)  # empty masks keep all
    for _ in range(3):
        yield rng.random(N_TYPES) < 0.6, rng.random(N_RELATIONS) < 0.6


def _as_lists(out):
    return [list(map(int, a)) for a in out]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_built_row_groups_as_the_reference(seed):
    rng = np.random.default_rng(seed)
    center, other, code = _edges(rng, 300)
    indptr, adj_node, adj_code = _csr(center, other, code)
    node_type = rng.integers(0, N_TYPES, N_NODES).astype(np.int16)
    for type_ok, rel_ok in _masks(rng):
        for v in range(N_NODES):
            row = list(zip(other[center == v].tolist(), code[center == v].tolist(), strict=True))
            got = _as_lists(neighborhood(indptr, adj_node, adj_code, node_type, v, type_ok, rel_ok))
            assert got == list(_reference(row, node_type, type_ok, rel_ok)), v


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_edited_row_groups_as_the_row_built_with_the_edits(seed):
    """Removed positions skipped and added entries merged in give what building the
    edited graph afresh gives: the parity the updated index relies on."""
    rng = np.random.default_rng(seed)
    center, other, code = _edges(rng, 300)
    indptr, adj_node, adj_code = _csr(center, other, code)
    node_type = rng.integers(0, N_TYPES, N_NODES).astype(np.int16)
    removed = np.flatnonzero(rng.random(len(adj_node)) < 0.2).astype(np.int64)
    keep = np.ones(len(adj_node), bool)
    keep[removed] = False
    row_of = np.repeat(np.arange(N_NODES), np.diff(indptr))
    d_center, d_other, d_code = _edges(rng, 80)
    order = np.lexsort((d_code, d_other, d_center))
    d_center, d_other, d_code = d_center[order], d_other[order], d_code[order]
    edited = _csr(
        np.concatenate([row_of[keep], d_center]),
        np.concatenate([adj_node[keep].astype(np.int64), d_other]),
        np.concatenate([adj_code[keep].astype(np.int64), d_code]),
    )
    for type_ok, rel_ok in _masks(rng):
        for v in range(N_NODES):
            s, e = int(indptr[v]), int(indptr[v + 1])
            rs, re_ = np.searchsorted(removed, (s, e))
            ds, de = np.searchsorted(d_center, (v, v + 1))
            merged = merged_neighborhood(
                adj_node, adj_code, s, e, removed, rs, re_, d_other, d_code, ds, de,
                node_type, type_ok, rel_ok,
            )  # fmt: skip
            rebuilt = neighborhood(*edited, node_type, v, type_ok, rel_ok)
            assert _as_lists(merged) == _as_lists(rebuilt), v
