"""Compiled one-hop lookup (numba, cached on disk after the first compilation): a
building block of :class:`~ark.graph.Graph` and of :mod:`ark.index`'s segmented graph.

A neighborhood of a few dozen edges costs a fraction here of the dozen numpy operations
the same filtering and grouping would take (``docs/decisions/index-kernels.md``).

One kernel, :func:`merged_neighborhood`, filters and groups a node's entries, whether
they are a row of the CSR as built (:func:`neighborhood`) or a row that an update
edited (:mod:`ark.index._seg_graph`: removed positions, added entries). Both lookups
share it so that an edited node's neighbors come out in the very order and grouping
an unedited one's do. Both kernels stay in this one file: numba's on-disk cache does
not notice a change to a jitted function defined in another file.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def merged_neighborhood(  # type: ignore[no-untyped-def]
    adj_node, adj_code, s, e, removed, rs, re_, d_other, d_code, ds, de, node_type, type_ok, rel_ok
):
    """Entries ``s..e`` of the base (skipping positions ``removed[rs:re_]``, sorted)
    merged with entries ``ds..de`` of the delta (sorted the same way: by neighbor, then
    relation code), in one linear pass with no sort, kept where ``type_ok[type of
    neighbor]`` and ``rel_ok[relation]`` allow (an empty mask keeps all), grouped by
    neighbor.

    Returns (neighbors, group starts, relation code and direction of each entry),
    as :class:`ark.graph.Neighborhood` holds them.
    """
    n_max = (e - s) + (de - ds)
    others = np.empty(n_max, np.int64)
    codes = np.empty(n_max, np.int64)
    by_type = len(type_ok) > 0
    by_rel = len(rel_ok) > 0
    n = 0
    i, j, r = s, ds, rs
    while i < e or j < de:
        take_base = False
        if i < e:
            if r < re_ and removed[r] == i:
                r += 1
                i += 1
                continue
            if j >= de:
                take_base = True
            else:
                bo, bc = adj_node[i], adj_code[i]
                take_base = bo < d_other[j] or (bo == d_other[j] and bc <= d_code[j])
        if take_base:
            o, c = np.int64(adj_node[i]), np.int64(adj_code[i])
            i += 1
        else:
            o, c = np.int64(d_other[j]), np.int64(d_code[j])
            j += 1
        if by_rel and not rel_ok[c >> 1]:
            continue
        if by_type and not type_ok[node_type[o]]:
            continue
        others[n] = o
        codes[n] = c
        n += 1
    neighbors = np.empty(n, np.int64)
    starts = np.empty(n + 1, np.int64)
    rels = np.empty(n, np.int64)
    dirs = np.empty(n, np.int64)
    g = 0
    prev = -1
    for k in range(n):
        if others[k] != prev:
            neighbors[g] = others[k]
            starts[g] = k
            g += 1
            prev = others[k]
        rels[k] = codes[k] >> 1
        dirs[k] = codes[k] & 1
    starts[g] = n
    return neighbors[:g], starts[: g + 1], rels, dirs


@njit(cache=True, nogil=True)
def neighborhood(indptr, adj_node, adj_code, node_type, index, type_ok, rel_ok):  # type: ignore[no-untyped-def]
    """Row ``index`` of the CSR, kept where ``type_ok``/``rel_ok`` allow, grouped by
    neighbor: :func:`merged_neighborhood` with nothing removed and nothing added."""
    none = np.empty(0, np.int64)
    return merged_neighborhood(
        adj_node,
        adj_code,
        indptr[index],
        indptr[index + 1],
        none,
        0,
        0,
        none,
        none,
        0,
        0,
        node_type,
        type_ok,
        rel_ok,
    )
