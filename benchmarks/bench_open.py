"""What opening an index costs with and without the sampled-digest check, next to the
full sha256 of ``ark index verify``.

    python benchmarks/bench_open.py [--scale 0.05] [--workdir .bench-open] [--repeat 5]

Generates a synthetic MAG-shaped graph (synthetic_graph.py), builds its index, then
times ``open_index`` warm (files in the page cache) and cold (each index file's pages
dropped with ``posix_fadvise(DONTNEED)`` first, so only this index is evicted), with
``check_samples`` on and off, and one ``verify_index``. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synthetic_graph import generate  # noqa: E402


def evict(directory: Path) -> None:
    """Drop ``directory``'s files from the page cache (Linux; a no-op elsewhere)."""
    for p in directory.rglob("*"):
        if p.is_file() and hasattr(os, "posix_fadvise"):
            fd = os.open(p, os.O_RDONLY)
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def time_open(index_dir: Path, check: bool, cold: bool, repeat: int) -> list[float]:
    from ark.index import open_index

    out = []
    for _ in range(repeat):
        if cold:
            evict(index_dir)
        t0 = time.perf_counter()
        open_index(index_dir, check_samples=check)
        out.append(time.perf_counter() - t0)
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--scale", type=float, default=0.05)
    p.add_argument("--workdir", type=Path, default=Path(".bench-open"))
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--keep", action="store_true")
    args = p.parse_args(argv)

    from ark.index import build_index, verify_index
    from ark.probes import sample_problems

    data, index_dir = args.workdir / "graph", args.workdir / "index"
    if not (index_dir / "meta.json").is_file():
        shutil.rmtree(args.workdir, ignore_errors=True)
        generate(data, args.scale)
        build_index(data, index_dir)
    meta = json.loads((index_dir / "meta.json").read_text())
    size = sum(p.stat().st_size for p in index_dir.rglob("*") if p.is_file())
    res: dict[str, object] = {
        "scale": args.scale,
        "nodes": meta["counts"]["nodes"],
        "adjacency_entries": meta["counts"]["adjacency_entries"],
        "index_bytes": size,
        "files": len(meta["samples"]["digests"]),
    }
    time_open(index_dir, True, False, 1)  # imports, numba, warm cache
    for cold in (False, True):
        for check in (False, True):
            runs = time_open(index_dir, check, cold, args.repeat)
            key = f"open_{'cold' if cold else 'warm'}_{'sampled' if check else 'nocheck'}_ms"
            res[key] = round(statistics.median(runs) * 1000, 2)
    for cold in (False, True):
        runs = []
        for _ in range(args.repeat):
            if cold:
                evict(index_dir)
            t0 = time.perf_counter()
            assert not sample_problems(index_dir, meta["samples"])
            runs.append(time.perf_counter() - t0)
        res[f"sample_check_only_{'cold' if cold else 'warm'}_ms"] = round(
            statistics.median(runs) * 1000, 2
        )
    evict(index_dir)
    t0 = time.perf_counter()
    report = verify_index(index_dir)
    res["verify_cold_s"] = round(time.perf_counter() - t0, 2)
    res["verify_ok"] = report["ok"]
    print(json.dumps(res, indent=2))
    if not args.keep:
        shutil.rmtree(args.workdir)


if __name__ == "__main__":
    main()
