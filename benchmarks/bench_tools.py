"""Index build and tool latency at STaRK-MAG scale, next to what a user would call instead.

    python benchmarks/bench_tools.py [--scale 1.0] [--workdir .bench] [--queries 200]

Generates a synthetic MAG-shaped graph (see synthetic_graph.py), builds ARK's index
from its parquet files (the real ``ark index build`` path), then, in a fresh process
that only opens the index, measures open time, memory and p50/p95 latencies of:

* global search (``search_in_graph``, k = 5) for short entity-like queries (2-4 words)
  and long question-like queries (~15 words), against bm25s's own ``retrieve`` on the
  same index files (numpy backend, and numba when installed), with a top-k parity
  check;
* neighborhood exploration by degree bucket (no query, with a query, with a type
  filter), against a plain Python loop over the node's edges that a bm25s user would
  write (score every node with ``get_scores``, then filter and rank in Python);
* and, on a 50k-node subsample, ARK's global search against rank_bm25.

It also times the first global search and neighborhood of a fresh process, with
the compiled kernels in numba's on-disk cache and with an empty cache (the first use
after installing: the kernels are compiled then).

Prints a Markdown table with the issue's targets and writes results.md / results.json
into the work directory.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synthetic_graph import VOCAB, ZIPF, generate, make_vocab, zipf_p  # noqa: E402

TARGETS = {
    "build_s": ("build", "<= 900 s"),
    "open_s": ("open", "<= 5 s"),
    "rss_gb": ("memory after queries", "<= 10 GB"),
    "global_short_p50": ("global search, short queries, p50", "<= 2 ms"),
    "global_long_p50": ("global search, long queries, p50", "<= 20 ms"),
}


def percentile_ms(samples: list[float]) -> tuple[float, float]:
    a = np.asarray(samples) * 1000
    return float(np.percentile(a, 50)), float(np.percentile(a, 95))


def timed(fn, *args, **kwargs) -> tuple[float, Any]:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t0, out


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# -- the measuring process ------------------------------------------------------------


def make_queries(index: Any, n: int, seed: int) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(seed)
    nodes = rng.integers(0, index.graph.n_nodes, size=n)
    short = []
    for i in nodes.tolist():
        words = index.graph.name(i).split() + index.graph.text(i).split()[1:40]
        extra = rng.integers(0, 3)
        short.append(
            " ".join(words[:2] + list(rng.choice(words[2:], size=extra)) if extra else words[:2])
        )
    vocab = make_vocab(VOCAB, np.random.default_rng(0))  # same words as the generator
    p = zipf_p(VOCAB, ZIPF)
    long = [" ".join(rng.choice(vocab, size=15, p=p)) for _ in range(n)]
    return short, long


def measure(index_dir: Path, n_queries: int) -> dict[str, Any]:
    import psutil

    from ark.index import open_index
    from ark.tools import GraphTools

    proc = psutil.Process()
    rss0 = proc.memory_info().rss
    open_s, index = timed(open_index, index_dir)
    rss_open = proc.memory_info().rss - rss0
    tools = GraphTools(index)
    short, long = make_queries(index, n_queries, seed=1)
    out: dict[str, Any] = {"open_s": open_s, "rss_open_gb": rss_open / 1e9}
    # The first calls of a fresh process load the compiled kernels (numba's on-disk
    # cache; compiling them when there is none is measured by first_calls()).
    out["first_global_s"], _ = timed(tools.search_in_graph, long[0])
    out["first_neighbors_s"], _ = timed(tools.search_in_neighborhood, 0, short[0])

    # Global search: ARK vs bm25s on the same files.
    import bm25s

    ref = bm25s.BM25.load(index_dir / "bm25", mmap=True)
    tok = index.bm25.tokenizer.tokens
    backends = ["numpy"]
    try:
        import numba  # noqa: F401

        backends.append("numba")
    except ImportError:
        pass
    for label, queries in (("short", short), ("long", long)):
        for q in queries[:5]:
            tools.search_in_graph(q)  # warm the page cache like a long-running service
        ark = [timed(tools.search_in_graph, q, 5)[0] for q in queries]
        raw = [timed(index.bm25.top_k, index.bm25.query_terms(q), 5)[0] for q in queries]
        out[f"global_{label}_p50"], out[f"global_{label}_p95"] = percentile_ms(ark)
        out[f"global_{label}_raw_p50"], _ = percentile_ms(raw)
        agree = 0
        for backend in backends:
            kw = {"backend_selection": backend, "show_progress": False}
            sample = queries[: max(20, len(queries) // 4)]
            ref.retrieve([tok(sample[0])], k=5, **kw)  # JIT warm-up
            times = []
            for q in sample:
                t, (docs, scores) = timed(ref.retrieve, [tok(q)], k=5, **kw)
                times.append(t)
                if backend == "numpy":
                    mine, my_scores = index.bm25.top_k(index.bm25.query_terms(q), 5)
                    kth = my_scores[-1] if len(my_scores) else 0
                    strict = {
                        int(d) for d, s in zip(mine, my_scores, strict=True) if s > kth + 1e-4
                    }
                    theirs = {
                        int(d) for d, s in zip(docs[0], scores[0], strict=True) if s > kth + 1e-4
                    }
                    agree += strict == theirs and np.allclose(
                        my_scores, scores[0][: len(my_scores)], rtol=1e-4
                    )
            out[f"bm25s_{backend}_{label}_p50"], _ = percentile_ms(times)
            if backend == "numpy":
                out[f"parity_{label}"] = agree / len(sample)

    # Neighborhoods by degree bucket, vs a plain Python loop over edges.
    degree = np.diff(np.asarray(index.graph.indptr))
    rng = np.random.default_rng(2)
    buckets = [
        ("<=10", 1, 10),
        ("<=100", 11, 100),
        ("<=1k", 101, 1000),
        ("<=10k", 1001, 10_000),
        (">=50k", 50_000, None),
    ]
    paper = index.graph.type_id("paper")
    names = index.graph.node_type_names
    for label, lo, hi in buckets:
        pool = np.flatnonzero((degree >= lo) & (degree <= (hi or degree.max())))
        if len(pool) == 0:
            continue
        nodes = rng.choice(pool, size=min(20, len(pool)), replace=False).tolist()
        row: dict[str, Any] = {"nodes": len(nodes), "mean_degree": float(degree[nodes].mean())}
        for variant, kwargs in (
            ("plain", {}),
            ("query", {"query": "kelomar data"}),
            ("typed", {"node_type": "paper", "query": short[0]}),
        ):
            row[variant] = percentile_ms(
                [timed(tools.search_in_neighborhood, v, **kwargs)[0] for v in nodes]
            )[0]
        loop_nodes = nodes[:3] if lo >= 1000 else nodes[:10]
        row["python_loop"] = percentile_ms(
            [timed(python_neighborhood, index, ref, tok, v, short[0], paper)[0] for v in loop_nodes]
        )[0]
        out[f"neighbors_{label}"] = row
    del names
    out["rss_gb"] = (proc.memory_info().rss - rss0) / 1e9
    return out


def first_calls(index_dir: Path) -> dict[str, float]:
    """A fresh process's first global search and first neighborhood, all included."""
    t0 = time.perf_counter()
    from ark.index import open_index
    from ark.tools import GraphTools

    tools = GraphTools(open_index(index_dir))
    opened = time.perf_counter() - t0
    first_global, _ = timed(tools.search_in_graph, "kelomar data analysis of bodanu")
    first_neighbors, _ = timed(tools.search_in_neighborhood, 0, "kelomar data")
    return {"open_s": opened, "global_s": first_global, "neighbors_s": first_neighbors}


def python_neighborhood(
    index: Any, ref: Any, tok: Any, v: int, query: str, want_type: int
) -> list[int]:
    """What a user without ARK would write: dense bm25s scores, then a Python edge loop."""
    scores = ref.get_scores(tok(query))
    g = index.graph
    start, end = int(g.indptr[v]), int(g.indptr[v + 1])
    found: dict[int, float] = {}
    for j in range(start, end):
        u = int(g.adj_node[j])
        if int(g.node_type[u]) == want_type:
            found[u] = float(scores[u])
    return sorted(found, key=lambda u: -found[u])[:20]


def rank_bm25_comparison(workdir: Path, n_docs: int, n_queries: int) -> dict[str, float]:
    """ARK's BM25 vs rank_bm25.BM25Okapi on a subsample both can hold."""
    import pyarrow.parquet as pq
    from rank_bm25 import BM25Okapi

    from ark.index import BM25Params, Tokenizer, build_bm25

    table = pq.read_table(workdir / "nodes.parquet", columns=["properties"]).slice(0, n_docs)
    texts = [json.loads(p)["text"] for p in table.column("properties").to_pylist()]
    tok = Tokenizer()
    ark = build_bm25(texts, len(texts), tok, BM25Params())
    okapi = BM25Okapi([tok.tokens(t) for t in texts])
    rng = np.random.default_rng(3)
    queries = [
        " ".join(rng.choice(texts[i].split(), size=3)) for i in rng.integers(0, n_docs, n_queries)
    ]
    a = [timed(ark.top_k, ark.query_terms(q), 5)[0] for q in queries]
    b = [
        timed(okapi.get_top_n, tok.tokens(q), texts, 5)[0]
        for q in queries[: max(10, n_queries // 10)]
    ]
    return {"docs": n_docs, "ark_p50": percentile_ms(a)[0], "rank_bm25_p50": percentile_ms(b)[0]}


# -- driver ---------------------------------------------------------------------------


def child(command: list[str], **env: str) -> dict[str, Any]:
    """Run ``command`` in a fresh process and parse the JSON line it prints last."""
    done = subprocess.run(
        command,
        check=True,
        capture_output=True,
        text=True,
        # The child imports the same ark as this process (a source checkout's too).
        env={
            **os.environ,
            **env,
            "PYTHONPATH": os.pathsep.join(
                p for p in (str(HERE), os.environ.get("PYTHONPATH", "")) if p
            ),
        },
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(res: dict[str, Any]) -> str:
    def ratio(a: float, b: float) -> str:
        return f"{b / a:,.1f}x" if a > 0 else "n/a"

    lines = [
        f"# ARK tools at scale {res['scale']} ({res['nodes']:,} nodes, {res['edges']:,} edges)",
        "",
        "| measure | ARK | target | alternative | ARK speed-up |",
        "|---|---:|---|---:|---:|",
        f"| generate data | {res['generate_s']:.0f} s | | | |",
        f"| build index | {res['build_s']:.0f} s | <= 900 s | | |",
        f"| index size on disk | {res['index_gb']:.2f} GB | | | |",
        f"| open (fresh process) | {res['open_s']:.2f} s | <= 5 s | | |",
    ]
    for key, label in (
        ("first_calls_cached", "kernels cached"),
        ("first_calls_compiling", "kernels compiled (first use after install)"),
    ):
        if key in res:
            first = res[key]
            lines.append(
                f"| first global search / neighborhood of a fresh process, {label} "
                f"| {first['global_s']:.2f} / {first['neighbors_s']:.2f} s | | | |"
            )
    lines += [
        f"| memory after open / after queries | {res['rss_open_gb']:.2f} / "
        f"{res['rss_gb']:.2f} GB | <= 10 GB | | |",
    ]
    for label in ("short", "long"):
        target = "<= 2 ms, >= 1x bm25s" if label == "short" else "<= 20 ms, >= 3x bm25s"
        p50, p95 = res[f"global_{label}_p50"], res[f"global_{label}_p95"]
        lines.append(
            f"| global search, {label} queries, p50 / p95 | {p50:.2f} / {p95:.2f} ms "
            f"| {target} p50 "
            f"| bm25s numpy {res[f'bm25s_numpy_{label}_p50']:.1f} ms | "
            f"{ratio(p50, res[f'bm25s_numpy_{label}_p50'])} |"
        )
        if f"bm25s_numba_{label}_p50" in res:
            lines.append(
                f"| | | | bm25s numba {res[f'bm25s_numba_{label}_p50']:.1f} ms | "
                f"{ratio(p50, res[f'bm25s_numba_{label}_p50'])} |"
            )
        lines.append(
            f"| top-5 parity with bm25s, {label} | {100 * res[f'parity_{label}']:.0f} % "
            "| 100 % | | |"
        )
    for key, row in res.items():
        if not key.startswith("neighbors_"):
            continue
        bucket = key.removeprefix("neighbors_")
        target = (
            "<= 1 ms"
            if bucket in ("<=10", "<=100", "<=1k")
            else ("<= 20 ms" if bucket == ">=50k" else "")
        )
        target += ", >= 1x loop" if target else ">= 1x loop"
        lines.append(
            f"| neighbors, degree {bucket} (mean {row['mean_degree']:,.0f}), "
            f"p50 plain / query / typed "
            f"| {row['plain']:.2f} / {row['query']:.2f} / {row['typed']:.2f} ms | {target} "
            f"| Python loop {row['python_loop']:.2f} ms "
            f"| {ratio(row['typed'], row['python_loop'])} |"
        )
    rb = res["rank_bm25"]
    lines.append(
        f"| global search on a {rb['docs']:,}-doc subsample, p50 | {rb['ark_p50']:.2f} ms | "
        f"| rank_bm25 {rb['rank_bm25_p50']:.0f} ms | {ratio(rb['ark_p50'], rb['rank_bm25_p50'])} |"
    )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--scale", type=float, default=1.0, help="1.0 = STaRK-MAG size")
    p.add_argument("--workdir", type=Path, default=Path(".bench"))
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--rank-bm25-docs", type=int, default=50_000)
    p.add_argument("--keep", action="store_true", help="keep the generated data and index")
    p.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # internal: child process
    p.add_argument("--first-calls", type=Path, help=argparse.SUPPRESS)  # internal: child
    args = p.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.measure, args.queries)))
        return
    if args.first_calls:
        print(json.dumps(first_calls(args.first_calls)))
        return

    from ark.index import build_index

    data, index_dir = args.workdir / "graph", args.workdir / "index"
    shutil.rmtree(args.workdir, ignore_errors=True)
    print(f"generating scale {args.scale} …", file=sys.stderr)
    gen_s, syn = timed(generate, data, args.scale)
    print(f"building the index ({syn.n_nodes:,} nodes, {syn.n_edges:,} edges) …", file=sys.stderr)
    build_s, _ = timed(build_index, data, index_dir)
    print("measuring in a fresh process …", file=sys.stderr)
    res = child(
        [sys.executable, __file__, "--measure", str(index_dir), "--queries", str(args.queries)]
    )
    # A fresh process's first calls: with the kernels compiled and cached on disk (as
    # after any earlier use), and with an empty cache (the first use after install).
    res["first_calls_cached"] = child([sys.executable, __file__, "--first-calls", str(index_dir)])
    with tempfile.TemporaryDirectory() as cache:
        res["first_calls_compiling"] = child(
            [sys.executable, __file__, "--first-calls", str(index_dir)],
            NUMBA_CACHE_DIR=cache,
        )
    res.update(
        scale=args.scale,
        nodes=syn.n_nodes,
        edges=syn.n_edges,
        generate_s=gen_s,
        build_s=build_s,
        index_gb=dir_size(index_dir) / 1e9,
        rank_bm25=rank_bm25_comparison(data, min(args.rank_bm25_docs, syn.n_nodes), args.queries),
        cpu_count=os.cpu_count(),
    )
    table = report(res)
    print(table)
    (args.workdir / "results.md").write_text(table)
    (args.workdir / "results.json").write_text(json.dumps(res, indent=2))
    if not args.keep:
        shutil.rmtree(data)
        shutil.rmtree(index_dir)


if __name__ == "__main__":
    main()
