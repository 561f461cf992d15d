"""``search_in_graph`` (k = 5) on an updated index against the same graph compacted, in
CPU time, so that a loaded machine still compares the two fairly.

    python benchmarks/bench_updates.py --scale 0.05 --additions 100 --workdir /tmp/upd --keep
    python benchmarks/bench_update_queries.py /tmp/upd [--label NAME] [--out FILE.json]

Reads ``WORKDIR/index-segmented`` (base plus the additions' segments) and
``WORKDIR/index`` (compacted) as ``bench_updates.py --keep`` leaves them, with 200
short and 200 long queries from ``bench_tools.make_queries``. First call: each short
query's first call on the freshly opened snapshots (its terms resolved on first use);
steady: the best of 7 calls per query, updated and compacted alternating; p50 over the
queries. ``--out`` keeps the per-query times and every answer (``to_dict()``), so two
code versions (``PYTHONPATH=`` a worktree's ``src``) can be checked to answer alike.
The target (issue 43): steady short queries on the updated index <= 1.2x compacted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ark
from ark.index import open_index
from ark.tools import GraphTools
from bench_tools import make_queries


def best(fn: Callable[[], object], n: int = 7) -> float:
    """The least CPU time of ``n`` calls (the call's own cost, without the machine's)."""
    least = float("inf")
    for _ in range(n):
        t0 = time.process_time()
        fn()
        least = min(least, time.process_time() - t0)
    return least


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("workdir", type=Path, help="a bench_updates.py --keep workdir")
    p.add_argument("--label", default="current")
    p.add_argument("--out", type=Path, default=None, help="per-query times and answers (JSON)")
    args = p.parse_args(argv)
    updated = open_index(args.workdir / "index-segmented")
    compacted = open_index(args.workdir / "index")
    short, long = make_queries(SimpleNamespace(graph=updated.graph.base), 200, seed=1)
    tu, tc = GraphTools(updated), GraphTools(compacted)
    for q in long[:10]:  # warm the compiled kernels on both
        tu.search_in_graph(q)
        tc.search_in_graph(q)
    first_u, first_c = [], []
    for q in short[10:]:
        for tools, times in ((tu, first_u), (tc, first_c)):
            t0 = time.process_time()
            tools.search_in_graph(q)
            times.append(time.process_time() - t0)
    res: dict[str, object] = {
        "label": args.label,
        "ark": ark.__file__,
        "first_short": [float(np.median(first_u)) * 1e6, float(np.median(first_c)) * 1e6],
    }
    for name, queries in (("short", short), ("long", long)):
        xu, xc = [], []
        for q in queries:
            xu.append(best(lambda q=q: tu.search_in_graph(q)))
            xc.append(best(lambda q=q: tc.search_in_graph(q)))
        res[name] = [float(np.median(xu)) * 1e6, float(np.median(xc)) * 1e6]
        res[f"{name}_per_query"] = [xu, xc]
    if args.out:
        answers = {
            q: [tu.search_in_graph(q).to_dict(), tc.search_in_graph(q).to_dict()]
            for q in short + long
        }
        args.out.write_text(json.dumps({"res": res, "answers": answers}), encoding="utf-8")
    cells = []
    for key in ("first_short", "short", "long"):
        u, c = res[key]  # type: ignore[misc]
        cells.append(f"{key} {u:.1f} / {c:.1f} µs ({u / c:.2f}x)")
    print(f"{args.label}: " + "  ".join(cells) + f"  load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
