"""Fast access to one string of a (memory-mapped) Arrow string column.

``ChunkedArray[i].as_py()`` and ``take`` cost tens of microseconds each; tools look
up a few dozen names per call, so we read Arrow's offsets and data buffers directly
(zero-copy views) and slice: about a microsecond per string.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyarrow as pa


class StringColumn:
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
        self._single = len(chunks) == 1
        self._off0 = self._offsets[0]
        self._data0 = self._data[0]
        # An updated index has its base's chunk first and a small one for added nodes:
        # indices in the first chunk take the single-chunk path.
        self._n0 = len(chunks[0])

    def __len__(self) -> int:
        return int(self._starts[-1])

    def __getitem__(self, i: int) -> str:
        if self._single or 0 <= i < self._n0:
            off = self._off0
            return str(self._data0[off[i] : off[i + 1]], "utf-8")
        c = int(np.searchsorted(self._starts, i, "right") - 1)
        j = i - int(self._starts[c])
        off = self._offsets[c]
        return str(self._data[c][off[j] : off[j + 1]], "utf-8")

    def take(self, indices: Iterable[int]) -> list[str]:
        if self._single:
            off, data = self._off0, self._data0
            return [str(data[off[i] : off[i + 1]], "utf-8") for i in indices]
        off, data, n0 = self._off0, self._data0, self._n0
        return [
            str(data[off[i] : off[i + 1]], "utf-8") if 0 <= i < n0 else self[int(i)]
            for i in indices
        ]

    def to_pylist(self) -> list[str]:
        return self.arrow.to_pylist()

    def slice_pylist(self, start: int, stop: int) -> list[str]:
        return self.arrow.slice(start, stop - start).to_pylist()
