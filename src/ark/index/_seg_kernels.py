"""The compiled one-hop lookup of a node an update touched (numba, cached on disk).

Its base row (sorted by neighbor, then relation code) minus the removed positions,
merged with its added entries (sorted the same way) in one linear pass: the same
grouping as :func:`ark.graph._neighborhood_kernel.neighborhood`, no sort.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def merged_neighborhood(  # type: ignore[no-untyped-def]
    adj_node, adj_code, s, e, removed, rs, re_, d_other, d_code, ds, de, node_type, type_ok, rel_ok
):
    """Entries ``s..e`` of the base (skipping positions ``removed[rs:re_]``, sorted)
    and ``ds..de`` of the delta, kept where ``type_ok``/``rel_ok`` allow (an empty
    mask keeps all), grouped by neighbor: (neighbors, group starts, relations,
    directions) as :class:`ark.graph.Neighborhood` holds them."""
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
            o, c = d_other[j], d_code[j]
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
