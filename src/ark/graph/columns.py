"""Building blocks of the graph's columnar layout, for :mod:`ark.index` to build on.

:class:`~ark.graph.Graph` lays its arrays out with these; the segmented index (an
update's added nodes and edges beside the base's arrays) and the distillation's path
oracle lay out theirs with the same ones, so that both read what a fresh build would:
the same code dtypes, the same adjacency order, the same distinct rows. They are
public so that the index needs no graph internals; they are not part of the user-facing
API that ``ark.graph`` exports.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

#: Past this, a packed int64 key overflows: the slower, exact path is taken instead.
INT64_LIMIT = 2**63


def code_dtype(n_codes: int) -> type[np.signedinteger[Any]]:
    """int16 while every code 0..n_codes-1 fits (half the bytes), int32 past it: a graph
    with more than 32,768 node types or 16,384 relations is widened, not wrapped."""
    return np.int16 if n_codes <= np.iinfo(np.int16).max + 1 else np.int32


def adjacency_order(
    center: np.ndarray, other: np.ndarray, code: np.ndarray, n: int, n_codes: int
) -> np.ndarray:
    """The stable order by (center, neighbor, code). One packed int64 key (a single
    argsort) while ``n * n * n_codes`` fits in int64, else a three-key lexsort: the key
    would overflow past ~3 billion nodes, or fewer with many relations."""
    if n * n * n_codes <= INT64_LIMIT:  # Python ints: the check itself cannot overflow
        key = (center * n + other) * n_codes + code
        return np.argsort(key, kind="stable")
    return np.lexsort((code, other, center))


def unique_rows(columns: Sequence[np.ndarray], bases: Sequence[int]) -> tuple[np.ndarray, ...]:
    """The distinct rows of integer ``columns`` (column ``i`` in ``0..bases[i]-1``), sorted,
    and how often each occurs: ``(*columns, counts)``. Packed into one int64 key when the
    product of the bases fits, else ``np.unique(axis=0)`` (slower, never overflows)."""
    total = 1
    for b in bases:
        total *= max(int(b), 1)
    if total <= INT64_LIMIT:
        key = np.zeros(len(columns[0]), dtype=np.int64)
        for col, b in zip(columns, bases, strict=True):
            key = key * max(int(b), 1) + np.asarray(col, dtype=np.int64)
        keys, counts = np.unique(key, return_counts=True)
        out = []
        for b in reversed(bases):
            keys, rest = np.divmod(keys, max(int(b), 1))
            out.append(rest)
        return (*reversed(out), counts)
    stacked = np.stack([np.asarray(c, dtype=np.int64) for c in columns], axis=1)
    rows, counts = np.unique(stacked, axis=0, return_counts=True)
    return (*(rows[:, i] for i in range(len(columns))), counts)


class StringColumn:
    """One string of a (memory-mapped) Arrow string column in about a microsecond.

    ``ChunkedArray[i].as_py()`` and ``take`` cost tens of microseconds each; tools look
    up a few dozen names per call, so Arrow's offsets and data buffers are read directly
    (zero-copy views) and sliced."""

    def __init__(self, column: pa.Array | pa.ChunkedArray) -> None:
        chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
        chunks = [c.cast(pa.large_string()) for c in chunks if len(c)] or [
            pa.array([], pa.large_string())
        ]
        self.arrow = pa.chunked_array(chunks, type=pa.large_string())
        self._offsets: list[memoryview] = []
        self._data: list[memoryview] = []
        for c in chunks:
            _, off_buf, data_buf = c.buffers()
            offsets = np.frombuffer(off_buf, dtype=np.int64)[c.offset : c.offset + len(c) + 1]
            # A memoryview indexes to Python ints directly: no numpy scalar per lookup.
            self._offsets.append(memoryview(offsets))
            self._data.append(memoryview(data_buf) if data_buf is not None else memoryview(b""))
        self._starts = np.cumsum([0] + [len(c) for c in chunks])
        #: The same starts as Python ints, for ``bisect`` (a numpy search costs more
        #: than the string it finds).
        self._start_list = self._starts.tolist()
        self._single = len(chunks) == 1
        self._off0 = self._offsets[0]
        self._data0 = self._data[0]
        # An updated index has its base's chunk first and one for the added nodes
        # (a quarter of the hits, when they are a quarter of the nodes): indices in
        # the first chunk take the single-chunk path, those in the last chunk a
        # second direct path.
        self._n0 = len(chunks[0])
        self._last = self._start_list[-2]
        self._off_last = self._offsets[-1]
        self._data_last = self._data[-1]

    def __len__(self) -> int:
        return int(self._starts[-1])

    def __getitem__(self, i: int) -> str:
        if 0 <= i < self._n0:
            off = self._off0
            return str(self._data0[off[i] : off[i + 1]], "utf-8")
        n = self._start_list[-1]
        if i < 0:  # from the end, as a list reads it
            i += n
        if not 0 <= i < n:
            raise IndexError(f"string index {i} out of range for {n} strings")
        if i >= self._last:
            j = i - self._last
            off = self._off_last
            return str(self._data_last[off[j] : off[j + 1]], "utf-8")
        c = bisect_right(self._start_list, i) - 1
        j = i - self._start_list[c]
        off = self._offsets[c]
        return str(self._data[c][off[j] : off[j + 1]], "utf-8")

    def take(self, indices: Iterable[int]) -> list[str]:
        if self._single:
            off, data = self._off0, self._data0
            return [str(data[off[i] : off[i + 1]], "utf-8") for i in indices]
        off, data, n0 = self._off0, self._data0, self._n0
        last, off_l, data_l, n = self._last, self._off_last, self._data_last, self._start_list[-1]
        return [
            str(data[off[i] : off[i + 1]], "utf-8")
            if 0 <= i < n0
            else str(data_l[off_l[i - last] : off_l[i - last + 1]], "utf-8")
            if last <= i < n
            else self[int(i)]
            for i in indices
        ]

    def to_pylist(self) -> list[str]:
        return self.arrow.to_pylist()

    def slice_pylist(self, start: int, stop: int) -> list[str]:
        return self.arrow.slice(start, stop - start).to_pylist()
