"""Finding damage in an index directory: checksums and structural checks.

A file damaged without changing its size (a flipped byte, a bad sector, a partial
copy over an old file, an array shifted by one) passes the size check of
:func:`open_index` but can make a neighborhood return wrong neighbors or node ``-1``.
So a build records, for every file it wrote (whatever files the layout has):

* its sha256, which :func:`verify_index` recomputes (``ark index verify``: reads all);
* a *sampled digest* (:func:`sampled_digest`): a BLAKE2b of the file's size and of
  evenly spaced blocks always including the first and the last (the whole file when
  small), which opening recomputes. It reads 256 KiB per large file (64 blocks of
  4 KiB), so its cost does not grow with the index, and catches what changes many
  blocks or any sampled one (a roll, a shift, a replaced or zeroed file, a stale copy
  of another build) but not a single damaged byte between samples: that is
  ``verify``'s job.

Opening also checks what costs no full read: index arrays in range and row pointers
monotone (sampled on very large arrays). See ``docs/index-integrity.md``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import numpy as np

from ark.errors import IndexFormatError

#: Arrays longer than this are range-checked on a strided sample when opening.
OPEN_CHECK_ENTRIES = 1 << 24


def file_checksums(directory: Path) -> dict[str, str]:
    """sha256 of every file under ``directory``, by relative path."""
    return {
        str(p.relative_to(directory)): sha256_of(p)
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


#: The sampled digest's parameters, recorded in ``meta.json`` so that an index is
#: always checked the way it was built: block size, blocks per file, and the size up
#: to which a file is hashed whole.
SAMPLE_BLOCK = 4096
SAMPLE_BLOCKS = 64
SAMPLE_WHOLE_UPTO = 1 << 20


def sample_params() -> dict[str, int]:
    return {"block": SAMPLE_BLOCK, "blocks": SAMPLE_BLOCKS, "whole_upto": SAMPLE_WHOLE_UPTO}


def sampled_digest(path: Path, params: dict[str, int]) -> str:
    """BLAKE2b of ``path``'s size and sampled blocks (see the module docstring)."""
    block, blocks, whole = int(params["block"]), int(params["blocks"]), int(params["whole_upto"])
    digest = hashlib.blake2b(digest_size=16)
    with path.open("rb") as f:
        size = os.fstat(f.fileno()).st_size
        digest.update(size.to_bytes(8, "little"))
        if size <= max(whole, block * blocks):
            while chunk := f.read(1 << 20):
                digest.update(chunk)
        else:
            last = size - block
            for i in range(blocks):  # evenly spaced, the first and the last included
                digest.update(os.pread(f.fileno(), block, i * last // (blocks - 1)))
    return digest.hexdigest()


def sampled_digests(directory: Path, params: dict[str, int]) -> dict[str, str]:
    """:func:`sampled_digest` of every file under ``directory``, by relative path."""
    return {
        str(p.relative_to(directory)): sampled_digest(p, params)
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def sample_problems(root: Path, samples: dict[str, Any]) -> list[str]:
    """The files whose sampled digest differs from the one recorded at build time."""
    params, recorded = samples.get("params"), samples.get("digests")
    if not isinstance(params, dict) or not isinstance(recorded, dict):
        return [f"{root / 'meta.json'} has a malformed 'samples' entry"]
    problems = []
    for name, expected in sorted(recorded.items()):
        file = root / name
        try:
            actual = sampled_digest(file, params)
        except (OSError, KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
            problems.append(f"{name} could not be checked ({exc})")
            continue
        if actual != expected:
            problems.append(f"{name} does not match its sampled checksum (damaged or replaced)")
    return problems


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _sample(a: np.ndarray, full: bool) -> np.ndarray:
    if full or len(a) <= OPEN_CHECK_ENTRIES:
        return np.asarray(a)
    step = len(a) // OPEN_CHECK_ENTRIES + 1
    return np.asarray(a[::step])


def structure_problems(graph: Any, bm25: Any, *, full: bool = False) -> list[str]:
    """What is structurally wrong with an opened graph and BM25 index (empty: nothing).

    ``full=False`` (on open) samples very large arrays; ``full=True`` reads all."""
    problems: list[str] = []
    n = graph.n_nodes
    entries = len(graph.adj_node)

    def pointers(name: str, ptr: np.ndarray, end: int) -> None:
        if len(ptr) == 0 or int(ptr[0]) != 0 or int(ptr[-1]) != end:
            problems.append(f"{name} does not run from 0 to {end}")
        elif len(ptr) > 1 and bool(np.any(np.diff(_sample(ptr, full)) < 0)):
            problems.append(f"{name} is not monotone")

    def in_range(name: str, a: np.ndarray, hi: int) -> None:
        if len(a) == 0:
            return
        s = _sample(a, full)
        lo_v, hi_v = int(s.min()), int(s.max())
        if lo_v < 0 or hi_v >= hi:
            problems.append(f"{name} holds {lo_v if lo_v < 0 else hi_v}, outside 0..{hi - 1}")

    pointers("indptr.npy", graph.indptr, entries)
    in_range("adj_node.npy", graph.adj_node, n)
    in_range("adj_code.npy", graph.adj_code, 2 * len(graph.relation_names))
    in_range("node_type.npy", graph.node_type, len(graph.node_type_names))
    ptr, idx = getattr(bm25, "indptr", None), getattr(bm25, "indices", None)
    if ptr is not None and idx is not None:
        pointers("BM25 indptr", ptr, len(idx))
        in_range("BM25 indices", idx, n)
    data = getattr(bm25, "data", None)
    if full and data is not None and len(data) and not bool(np.all(np.isfinite(data))):
        problems.append("BM25 weights hold NaN or infinity")
    return problems


def check_structure(root: Path, graph: Any, bm25: Any, hint: str) -> None:
    """The cheap checks of :func:`open_index`; raises with what is wrong."""
    problems = structure_problems(graph, bm25)
    if problems:
        raise IndexFormatError(f"{root} is corrupted: {'; '.join(problems)}; {hint}")
