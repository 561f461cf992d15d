"""Documents added to a live index: ``ark ingest --into`` against a full ingest.

    python benchmarks/bench_ingest_into.py [--corpus ../shared/data/musique/musique_corpus.json]
        [--dataset musique:../shared/data/musique/musique_dev_questions.json]
        [--held 10] [--extractor fast] [--out .bench/ingest-into]

The corpus (a ``[{"title", "text"}]`` JSON, MuSiQue's by default) is written as a
JSONL with one id per passage; every ``held``-th passage (default every 10th: 10 %) is
held back. Three ingests, each with a work directory of its own so that no cache is
shared between the two sides: all of it (``full``); the rest (``part``); then the held
passages ``--into`` the second (``into``). One table: seconds of each; whether the
updated index holds what the full one holds (every node by name, type and text, every
edge, counted; an entity's name is its first spelling, so a document order other than
the full ingest's may spell a few otherwise in case, which the table counts); and
passage recall at 2 and 5 over the dataset's questions for both
indexes with the retrieval rows that need no model (``bm25``, ``bm25-linked``), through
the evaluation API. Equal graphs rank alike but for ties, which node indices break.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ark.eval import Evaluation
from ark.index import live_edges, open_index
from ark.ingest import ingest

ROWS = {"bm25": {"method": "bm25"}, "bm25-linked": {"method": "bm25", "linked_passages": 3}}


def held(index_dir: Path) -> tuple[Counter, Counter]:
    """Every live node (name, type, text) and edge (names, relation), counted."""
    g = open_index(index_dir).graph
    removed = getattr(g, "removed", None)
    live = [i for i in range(g.n_nodes) if removed is None or not removed[i]]
    nodes = Counter((g.names[i], g.type_name(i), g.text(i)) for i in live)
    src, rel, dst = live_edges(g)
    edges = Counter(
        (g.names[s], g.relation_names[r], g.names[d])
        for s, r, d in zip(src.tolist(), rel.tolist(), dst.tolist(), strict=True)
    )
    return nodes, edges


def fold(counts: Counter) -> Counter:
    """The same counts with every string case-folded."""
    out: Counter = Counter()
    for key, n in counts.items():
        out[tuple(x.casefold() for x in key)] += n
    return out


def recall(dataset: str, index_dir: Path, out: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for row, settings in ROWS.items():
        summary = Evaluation(dataset, index_dir, out / row, **settings).run(llm=None)
        found[row] = summary["metrics"]
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus", type=Path, default=Path("../shared/data/musique/musique_corpus.json")
    )
    parser.add_argument(
        "--dataset", default="musique:../shared/data/musique/musique_dev_questions.json"
    )
    parser.add_argument("--held", type=int, default=10, help="hold back every N-th passage")
    parser.add_argument("--extractor", default="fast", choices=["fast", "model"])
    parser.add_argument("--out", type=Path, default=Path(".bench/ingest-into"))
    args = parser.parse_args(argv)

    corpus = json.loads(args.corpus.read_text(encoding="utf-8"))
    records = [
        {"id": f"p{i}", "title": p.get("title"), "text": p["text"]} for i, p in enumerate(corpus)
    ]
    back = [r for i, r in enumerate(records) if i % args.held == args.held - 1]
    rest = [r for i, r in enumerate(records) if i % args.held != args.held - 1]
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    files = {}
    for name, part in (("all", records), ("rest", rest), ("held", back)):
        files[name] = args.out / f"{name}.jsonl"
        files[name].write_text("".join(json.dumps(r) + "\n" for r in part), encoding="utf-8")

    seconds = {}
    started = time.perf_counter()
    ingest(files["all"], args.out / "full.idx", extractor=args.extractor)
    seconds["full"] = time.perf_counter() - started
    started = time.perf_counter()
    ingest(files["rest"], args.out / "part.idx", extractor=args.extractor)
    seconds["part"] = time.perf_counter() - started
    started = time.perf_counter()
    report = ingest(files["held"], None, into=args.out / "part.idx", extractor=args.extractor)
    seconds["into"] = time.perf_counter() - started

    full_nodes, full_edges = held(args.out / "full.idx")
    part_nodes, part_edges = held(args.out / "part.idx")
    same_nodes, same_edges = full_nodes == part_nodes, full_edges == part_edges
    case_nodes = fold(full_nodes) == fold(part_nodes)
    case_edges = fold(full_edges) == fold(part_edges)
    spelled = len(full_nodes - part_nodes)
    scores = {
        "full": recall(args.dataset, args.out / "full.idx", args.out / "eval-full"),
        "into": recall(args.dataset, args.out / "part.idx", args.out / "eval-into"),
    }

    print(
        f"corpus {args.corpus} ({len(records):,} passages, {len(back):,} held back), "
        f"extractor {args.extractor}"
    )
    print()
    print("| ingest | passages | seconds | × full |")
    print("|---|---:|---:|---:|")
    for name, n in (("full", len(records)), ("part", len(rest)), ("into", len(back))):
        print(f"| {name} | {n:,} | {seconds[name]:.1f} | {seconds[name] / seconds['full']:.2f} |")
    print()
    print(f"`--into` update: {report.update}")
    print(
        f"nodes equal: {same_nodes} ({sum(full_nodes.values()):,}; equal up to case: "
        f"{case_nodes}, {spelled:,} spelled otherwise), edges equal: {same_edges} "
        f"({sum(full_edges.values()):,}; equal up to case: {case_edges})"
    )
    print()
    print("| row | index | R@2 | R@5 |")
    print("|---|---|---:|---:|")
    for row in ROWS:
        for side in ("full", "into"):
            s = scores[side][row]
            print(f"| {row} | {side} | {s['recall@2']:.1f} | {s['recall@5']:.1f} |")
    if not (case_nodes and case_edges):
        sys.exit(1)


if __name__ == "__main__":
    main()
