"""Updates without a rebuild: the cost of adding 1,000 triples, and query latency
after 1, 10 and 100 such additions, beside a full rebuild and the compacted index.

    python benchmarks/bench_updates.py [--scale 0.25] [--additions 100] [--workdir .bench-updates]

Generates the synthetic MAG-shaped graph (``synthetic_graph.py``), builds its index
(timed: the full rebuild an update saves), then adds ``--additions`` batches, each a
nodes/edges parquet pair with 300 new papers (~110 tokens of text each) and 1,000
edges: every new paper cites an existing paper, has an existing field of study and
an existing author, and 100 cite another new paper. After 1, 10 and 100 additions it
opens the index (base + segments) and measures p50/p95 of global search (short and
long queries) and of neighborhoods (no query, with a query) over the same queries and
nodes; then compacts and measures the same on the one-segment index. Prints a
Markdown table (targets: an add <= 1 s at scale 1.0; p50 after 100 additions <=
1.2x the compacted index) with the load average beside it, since timings on a shared
machine move with its load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_tools import make_queries, percentile_ms, timed  # noqa: E402
from synthetic_graph import VOCAB, ZIPF, make_vocab, zipf_p  # noqa: E402

NEW_PER_ADD = 300
CHECKPOINTS = (1, 10, 100)


def generate_apart(data: Path, scale: float) -> Any:
    """The synthetic graph, generated in a child process so that its peak memory is
    not added to the build's (at scale 1.0 together they reach ~16 GB)."""
    import subprocess
    from types import SimpleNamespace

    code = (
        f"import sys; sys.path.insert(0, {str(HERE)!r}); from synthetic_graph import generate; "
        f"s = generate(__import__('pathlib').Path({str(data)!r}), {scale!r}); "
        "print(s.n_nodes, s.n_edges)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    n_nodes, n_edges = map(int, out.stdout.split())
    vocab = make_vocab(VOCAB, np.random.default_rng(0))  # the generator's words (seed 0)
    return SimpleNamespace(
        n_nodes=n_nodes, n_edges=n_edges, vocab=vocab, word_p=zipf_p(VOCAB, ZIPF)
    )


def write_addition(
    out: Path, index: Any, rng: np.random.Generator, syn: Any, gen: int, triples: int
) -> None:
    """One addition: new papers with text, edges to existing nodes listed by name and
    type (no properties: a reference), as an ``ark index add`` source."""
    g = index.graph
    by_type = _unique_named(index)
    n_new = min(NEW_PER_ADD, triples)
    lengths = rng.integers(80, 141, size=n_new)
    texts = [" ".join(rng.choice(syn.vocab, size=int(k), p=syn.word_p)) for k in lengths]
    new_names = [
        f"Newpaper {gen}-{j} {syn.vocab[rng.integers(2000, 60000)].capitalize()}"
        for j in range(n_new)
    ]
    refs: dict[int, None] = {}
    edges: list[tuple[int, int, str]] = []  # (from id, to id, relation); new ids are -1-j
    plan = [
        ("paper___cites___paper", "paper", True),
        ("paper___has_topic___field_of_study", "field_of_study", True),
        ("author___writes___paper", "author", False),
    ]
    per = (triples - n_new // 3) // len(plan)
    for rel, other_type, new_is_source in plan:
        pool = by_type[other_type]
        for j in range(per):
            other = int(pool[rng.integers(0, len(pool))])
            refs[other] = None
            new = -1 - (j % n_new)
            edges.append((new, other, rel) if new_is_source else (other, new, rel))
    while len(edges) < triples:
        a, b = rng.integers(0, n_new, size=2)
        edges.append((-1 - int(a), -1 - int(b), "paper___cites___paper"))
    ref_ids = list(refs)
    ref_names = g.names.take(ref_ids)
    node_id = lambda x: x if x >= 0 else 10**12 - x  # noqa: E731 - ids of new nodes
    nodes = pa.table(
        {
            "id": pa.array([node_id(-1 - j) for j in range(n_new)] + ref_ids, pa.int64()),
            "name": new_names + ref_names,
            "type": ["paper"] * n_new + [g.type_name(i) for i in ref_ids],
            "properties": [json.dumps({"text": t}) for t in texts] + ["{}"] * len(ref_ids),
        }
    )
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(nodes, out / "nodes.parquet")
    src, dst, rel = zip(*edges, strict=True)
    pq.write_table(
        pa.table(
            {"from": [node_id(s) for s in src], "to": [node_id(d) for d in dst], "type": list(rel)}
        ),
        out / "edges.parquet",
    )


def _unique_named(index: Any) -> dict[str, np.ndarray]:
    """Existing nodes per type whose name no other node has (synthetic names repeat;
    an addition naming a shared name is refused as ambiguous). Computed once."""
    cached = index.__dict__.get("_bench_unique")
    if cached is None:
        import pyarrow.compute as pc

        g = index.graph
        names = g.names.arrow
        counts = pc.value_counts(names)
        dup = counts.filter(pc.greater(counts.field("counts"), 1)).field("values")
        shared = np.asarray(pc.is_in(names, value_set=dup).to_numpy(zero_copy_only=False))
        types = np.asarray(g.node_type)
        cached = {
            t: np.flatnonzero((types == g.type_id(t)) & ~shared)
            for t in ("paper", "field_of_study", "author")
        }
        index.__dict__["_bench_unique"] = cached
    return cached  # type: ignore[no-any-return]


def latencies(
    index_dir: Path, short: list[str], long: list[str], nodes: list[int]
) -> dict[str, float]:
    from ark.index import open_index
    from ark.tools import GraphTools

    load0 = os.getloadavg()[0]
    open_s, index = timed(open_index, index_dir)
    tools = GraphTools(index)
    for q in short[:10] + long[:10]:
        tools.search_in_graph(q)  # warm the page cache and the kernels
    for v in nodes[:10]:
        tools.search_in_neighborhood(v, short[0])
    out: dict[str, float] = {"open_s": open_s}
    for label, queries in (("short", short), ("long", long)):
        out[f"global_{label}_p50"], out[f"global_{label}_p95"] = percentile_ms(
            [timed(tools.search_in_graph, q, 5)[0] for q in queries]
        )
    words = [q.split()[0] for q in short]
    out["hood_plain_p50"], out["hood_plain_p95"] = percentile_ms(
        [timed(tools.search_in_neighborhood, v)[0] for v in nodes]
    )
    out["hood_query_p50"], out["hood_query_p95"] = percentile_ms(
        [timed(tools.search_in_neighborhood, v, w)[0] for v, w in zip(nodes, words, strict=False)]
    )
    out["load"] = (load0 + os.getloadavg()[0]) / 2
    return out


def interleaved(
    updated: Path, reference: Path, short: list[str], long: list[str], nodes: list[int]
) -> dict[str, float]:
    """p50 of the same calls on the updated index and the reference, one call after
    the other, best of 3 each: the machine's load changes between stages, this
    comparison sees the same load on both sides."""
    from ark.index import open_index
    from ark.tools import GraphTools

    a, b = GraphTools(open_index(updated)), GraphTools(open_index(reference))
    words = [q.split()[0] for q in short]
    calls = {
        "global_short": [(lambda t, q=q: t.search_in_graph(q)) for q in short],
        "global_long": [(lambda t, q=q: t.search_in_graph(q)) for q in long],
        "hood_plain": [(lambda t, v=v: t.search_in_neighborhood(v)) for v in nodes],
        "hood_query": [
            (lambda t, v=v, w=w: t.search_in_neighborhood(v, w))
            for v, w in zip(nodes, words, strict=False)
        ],
    }
    out: dict[str, float] = {}
    for key, fns in calls.items():
        x, y = [], []
        for fn in fns:
            x.append(min(timed(fn, a)[0] for _ in range(3)))
            y.append(min(timed(fn, b)[0] for _ in range(3)))
        out[key + "_updated"] = float(np.median(x)) * 1000
        out[key + "_reference"] = float(np.median(y)) * 1000
    return out


def report(res: dict[str, Any]) -> str:
    adds = res["adds"]
    secs = [a["seconds"] for a in adds]
    phases = {
        k: float(np.median([a["phases"].get(k, 0.0) for a in adds])) for k in adds[0]["phases"]
    }
    rows = [
        f"# Updates at scale {res['scale']} ({res['nodes']:,} nodes, {res['edges']:,} edges)",
        "",
        f"Load average during the run: {res['load_start']:.1f} at the start, "
        f"{res['load_end']:.1f} at the end ({os.cpu_count()} cores, shared with another "
        "measurement).",
        "",
        "| measure | value | target |",
        "|---|---:|---|",
        f"| full rebuild (`ark index build`) | {res['build_s']:.1f} s | |",
        f"| add {res['triples']:,} triples ({NEW_PER_ADD} new nodes with text), p50 / max "
        f"of {len(adds)} | {np.median(secs):.3f} / {max(secs):.3f} s | <= 1 s at scale 1.0 |",
    ]
    rows += [f"| — {k}, p50 | {v * 1000:.1f} ms | |" for k, v in phases.items()]
    if res["compact_s"] is not None:
        rows.append(f"| compact after {len(adds)} additions | {res['compact_s']:.1f} s | |")
    stages = res["stages"]
    ref = "compacted" if "compacted" in stages else "base"
    comp = stages[ref]
    header = "| p50 / p95 (ms) | " + " | ".join(stages) + f" | after {len(adds)} / {ref} |"
    rows += ["", header, "|---|" + "---:|" * (len(stages) + 1)]
    for key, label in (
        ("global_short", "global search, short queries"),
        ("global_long", "global search, long queries"),
        ("hood_plain", "neighborhood, no query"),
        ("hood_query", "neighborhood, with a query"),
    ):
        cells = [f"{s[key + '_p50']:.2f} / {s[key + '_p95']:.2f}" for s in stages.values()]
        last = stages[f"after {len(adds)}"]
        ratio = last[key + "_p50"] / comp[key + "_p50"] if comp[key + "_p50"] else float("nan")
        rows.append(f"| {label} | " + " | ".join(cells) + f" | {ratio:.2f}x (target <= 1.2x) |")
    rows.append("| open | " + " | ".join(f"{s['open_s']:.2f} s" for s in stages.values()) + " | |")
    rows.append(
        "| load average | " + " | ".join(f"{s['load']:.1f}" for s in stages.values()) + " | |"
    )
    side = res.get("interleaved")
    if side:
        rows += [
            "",
            f"Interleaved, best of 3 per call (after {len(adds)} additions vs {ref}, the same "
            "calls at the same moment):",
            "",
            f"| p50 (ms) | after {len(adds)} | {ref} | ratio (target <= 1.2x) |",
            "|---|---:|---:|---:|",
        ]
        for key, label in (
            ("global_short", "global search, short queries"),
            ("global_long", "global search, long queries"),
            ("hood_plain", "neighborhood, no query"),
            ("hood_query", "neighborhood, with a query"),
        ):
            u, r = side[key + "_updated"], side[key + "_reference"]
            rows.append(f"| {label} | {u:.3f} | {r:.3f} | {u / r:.2f}x |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--scale", type=float, default=0.25)
    p.add_argument("--additions", type=int, default=100)
    p.add_argument("--triples", type=int, default=1000)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--workdir", type=Path, default=Path(".bench-updates"))
    p.add_argument("--keep", action="store_true", help="keep the generated data and index")
    p.add_argument(
        "--no-compact",
        action="store_true",
        help="skip compact (a second build's memory and time); the base is the reference",
    )
    args = p.parse_args(argv)

    from ark.index import add_to_index, build_index, compact_index, open_index

    shutil.rmtree(args.workdir, ignore_errors=True)
    data, index_dir = args.workdir / "graph", args.workdir / "index"
    load_start = os.getloadavg()[0]
    print(f"generating scale {args.scale} …", file=sys.stderr)
    syn = generate_apart(data, args.scale)
    print("building (the full rebuild an update saves) …", file=sys.stderr)
    build_s, _ = timed(build_index, data, index_dir)
    base = open_index(index_dir)
    short, long = make_queries(base, args.queries, seed=1)
    rng = np.random.default_rng(7)
    nodes = rng.integers(0, base.graph.n_nodes, size=args.queries).tolist()
    stages: dict[str, dict[str, float]] = {"base": latencies(index_dir, short, long, nodes)}
    base_copy = args.workdir / "index-base"
    if args.no_compact:  # the reference of the interleaved comparison
        shutil.copytree(index_dir, base_copy)
    adds = []
    for gen in range(1, args.additions + 1):
        src = args.workdir / f"add-{gen}"
        write_addition(src, base, rng, syn, gen, args.triples)
        adds.append(add_to_index(index_dir, src))
        shutil.rmtree(src)
        if gen in CHECKPOINTS or gen == args.additions:
            print(f"after {gen} additions: {adds[-1]['seconds']:.3f} s the last", file=sys.stderr)
            stages[f"after {gen}"] = latencies(index_dir, short, long, nodes)
    compact_s = None
    updated = args.workdir / "index-segmented"
    if not args.no_compact:
        shutil.copytree(index_dir, updated)  # the updated state, for the comparison
        compact_s, _ = timed(compact_index, index_dir)
        stages["compacted"] = latencies(index_dir, short, long, nodes)
        side = interleaved(updated, index_dir, short, long, nodes)
    else:
        side = interleaved(index_dir, base_copy, short, long, nodes)
    res = {
        "scale": args.scale,
        "nodes": syn.n_nodes,
        "edges": syn.n_edges,
        "build_s": build_s,
        "triples": args.triples,
        "compact_s": compact_s,
        "adds": adds,
        "stages": stages,
        "load_start": load_start,
        "load_end": os.getloadavg()[0],
        "interleaved": side,
    }
    table = report(res)
    print(table)
    (args.workdir / "results.md").write_text(table)
    (args.workdir / "results.json").write_text(json.dumps(res, indent=2))
    if not args.keep:
        for path in (data, index_dir, updated, base_copy):
            shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()
