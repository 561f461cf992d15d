"""Before and after the plans, from finished ``bench_quality.py`` runs: one table.

    python benchmarks/compare_plans.py --out RUNS --before LABEL --after LABEL
        [--seeds 0 1 2] [--sample-seed 0] [--sets metaqa-2 ...]

Reads ``RUNS/<LABEL>-s<SEED>-ss<SAMPLE>/<SET>/`` (``bench_quality.py --label
<LABEL>-s<SEED>-ss<SAMPLE>``) for each code version and agent seed, and prints per
set: Hit@1 (mean over the seeds found, with each seed's value), seconds per question
(mean of ``wall_s``), model calls per question, and for the after runs the share of
questions the plan answered with no model call and the share of steps it ran.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from statistics import mean
from typing import Any


def read_run(path: Path) -> dict[str, Any] | None:
    results = path / "results.jsonl"
    if not results.exists():
        return None
    rows = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines() if line]
    trajectories = path / "trajectories.jsonl"
    steps = plan_steps = model_free = model_calls = 0
    if trajectories.exists():
        for line in trajectories.read_text(encoding="utf-8").splitlines():
            t = json.loads(line)
            steps += len(t["steps"])
            plan_steps += sum(1 for s in t["steps"] if s.get("by") == "plan")
            model_calls += sum(
                1 for s in t["steps"] if s.get("by") != "plan" and not s.get("cached")
            )
            model_free += bool(t["steps"]) and all(s.get("by") == "plan" for s in t["steps"])
    return {
        "n": len(rows),
        "hit1": 100 * mean(r["metrics"]["hit@1"] for r in rows) if rows else 0.0,
        "s": mean(r["wall_s"] for r in rows) if rows else 0.0,
        "calls": model_calls / len(rows) if rows else 0.0,
        "plan_steps": plan_steps / steps if steps else 0.0,
        "model_free": model_free / len(rows) if rows else 0.0,
    }


COLUMNS = [
    "set", "n", "seeds", "Hit@1 before", "Hit@1 after", "s/q before", "s/q after",
    "after/before", "model calls/q before", "after", "questions with no model call",
    "steps the plan ran",
]  # fmt: skip


def table_rows(
    out: Path, before: str, after: str, seeds: list[int], sample_seed: int, sets: list[str]
) -> list[list[str]]:
    """One row a set: Hit@1 as the mean over the seeds with each seed's value, the
    seconds, model calls and the plan's shares, over the seeds both runs finished."""
    rows = []
    for name in sets:
        pairs = []
        for seed in seeds:
            b = read_run(out / f"{before}-s{seed}-ss{sample_seed}" / name)
            a = read_run(out / f"{after}-s{seed}-ss{sample_seed}" / name)
            if b and a and b["n"] == a["n"]:
                pairs.append((seed, b, a))
        if not pairs:
            continue
        hb = [b["hit1"] for _, b, _ in pairs]
        ha = [a["hit1"] for _, _, a in pairs]
        sb = mean(b["s"] for _, b, _ in pairs)
        sa = mean(a["s"] for _, _, a in pairs)
        rows.append([
            name, str(pairs[0][1]["n"]), " ".join(str(s) for s, _, _ in pairs),
            f"{mean(hb):.1f} ({' / '.join(f'{h:.1f}' for h in hb)})",
            f"{mean(ha):.1f} ({' / '.join(f'{h:.1f}' for h in ha)})",
            f"{sb:.1f}", f"{sa:.1f}", f"{sa / sb:.2f}",
            f"{mean(b['calls'] for _, b, _ in pairs):.1f}",
            f"{mean(a['calls'] for _, _, a in pairs):.1f}",
            f"{mean(a['model_free'] for _, _, a in pairs):.0%}",
            f"{mean(a['plan_steps'] for _, _, a in pairs):.0%}",
        ])  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--before", default="before")
    ap.add_argument("--after", default="after")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--sample-seed", type=int, default=0)
    ap.add_argument("--sets", nargs="+", default=None)
    ap.add_argument(
        "--results",
        type=Path,
        default=None,
        help="also write the table as a result file (benchmarks/results/NAME.json) "
        "for make_results.py; with --commit, --machine and --section",
    )
    ap.add_argument("--commit", default=None, help="the code the runs measured")
    ap.add_argument("--machine", default=None, help="a key of benchmarks/results/machines.json")
    ap.add_argument("--section", default="Sure plans run without the model")
    ap.add_argument("--title", default=None)
    args = ap.parse_args(argv)
    sets = args.sets or sorted(
        {p.name for p in args.out.glob(f"*-ss{args.sample_seed}/*") if p.is_dir()}
    )
    rows = table_rows(args.out, args.before, args.after, args.seeds, args.sample_seed, sets)
    print("| " + " | ".join(COLUMNS) + " |")
    print("|---|---:|---|" + "---:|" * (len(COLUMNS) - 3))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if args.results:
        if not (args.commit and args.machine):
            ap.error("--results needs --commit and --machine")
        result = {
            "section": args.section,
            **({"title": args.title} if args.title else {}),
            "command": (
                "python benchmarks/bench_quality.py --limit 30 --sample-seed "
                f"{args.sample_seed} --hints --multi-neighborhood --threads 2 --describe \\\n"
                "  --index-cache .bench --out RUNS "
                f"--label {args.before}-sSEED-ss{args.sample_seed} --seed SEED --agents 1 "
                "--max-steps 8 --sets SET --plan-threshold 2   # "
                f"{args.after}: no --plan-threshold\n"
                f"python benchmarks/compare_plans.py --out RUNS --before {args.before} "
                f"--after {args.after} --seeds {' '.join(map(str, args.seeds))} "
                f"--sample-seed {args.sample_seed}"
            ),
            "commit": args.commit,
            "date": time.strftime("%Y-%m-%d"),
            "machine": args.machine,
            "n": "30 per set",
            "seeds": ", ".join(map(str, args.seeds)),
            "columns": COLUMNS,
            "rows": rows,
        }
        args.results.write_text(
            json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        print(f"wrote {args.results}")


if __name__ == "__main__":
    main()
