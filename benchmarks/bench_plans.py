"""How sure the reading's plans are, and how often they are right, without a model.

    python benchmarks/bench_plans.py [--sets metaqa-1 ... wc-conj NAME=KB::DATASET]
        [--limit 30] [--sample-seeds 0 1] [--threshold 0.9] [--walks 400]
        [--fit-seed 0] [--refit] [--json OUT.json]

For each set and sample: the plan of ``ark-guided`` (:mod:`ark.strategies.guided.plans`)
run on every question through the real tool session, with no model; its confidence from
the fit stored in the index (made here, on the graph's own synthetic questions, when the
index has none, has one fitted for another reading, or ``--refit``); and whether it is
right: every node it adds is a gold answer. Printed per set: the questions whose plan
ran to its finish, those at or above the threshold (the ones ``ark-guided`` answers
without the model), how many of those are right, the Hit@1 of the plan's answer on them,
the expected calibration error of the confidence over every finished plan (10 bins), and
the seconds a plan takes. The synthetic fit's own held-out calibration error is shown
with it, and the error's floor on these questions: the median error a perfectly
calibrated confidence would show with the same confidences (each plan right with the
probability it is given, 2,000 draws), what 30 questions allow.

The indexes are ``bench_quality.py``'s (``.bench/<folder>-<stem>-described.idx``
when ``--describe`` made one, else the undescribed one); a fit is stored into them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ark.datasets import load_dataset, sample
from ark.distill import DEFAULT_WALKS, fit_plans
from ark.index import open_index
from ark.strategies.guided.plans import (
    DEFAULT_THRESHOLD,
    calibration_error,
    plan_features,
    plan_model,
    plan_question,
)
from ark.tools import GraphTools, ToolConfig
from bench_quality import SETS, default_data_dir, index_for, parse_set


def open_set_index(kb: Path, cache: Path):  # type: ignore[no-untyped-def]
    described = cache / f"{kb.parent.name}-{kb.stem}-described.idx"
    if (described / "meta.json").exists():
        return open_index(described)
    return index_for(kb, cache)[0]


def calibration_floor(confidences: list[float], draws: int = 2000, seed: int = 0) -> float:
    """The median calibration error of ``confidences`` were each plan right with the
    probability it is given: what sampling alone leaves on so few questions."""
    if not confidences:
        return 0.0
    rng = np.random.default_rng(seed)
    p = np.asarray(confidences)
    errors = [calibration_error(p, rng.random(len(p)) < p) for _ in range(draws)]
    return float(np.median(errors))


def run_set(args: argparse.Namespace, spec: str) -> list[dict[str, Any]]:
    name, kb, dataset, split = parse_set(spec, args.data_dir)
    index = open_set_index(kb, args.index_cache)
    model, why = plan_model(index)
    if args.refit or model is None:  # no usable fit (none, stale, malformed): fit it now
        if model is None:
            print(f"  {name}: {why}", file=sys.stderr)
        fit = fit_plans(index, args.walks, args.fit_seed)
        print(
            f"  {name}: fitted on {fit.model.info['n']} walks in {fit.seconds} s", file=sys.stderr
        )
        index = open_index(index.path)
        model, why = plan_model(index)
    if model is None:
        sys.exit(f"{name}: {why}")
    config = ToolConfig(multi_neighborhood=True)
    tools = GraphTools(index, phrase_encoder=config.phrase_encoder)
    all_queries = load_dataset(dataset, index, split, kb.parent)[0]
    rows = []
    for seed in args.sample_seeds:
        queries = sample(all_queries, args.limit, seed)
        confidences, labels, times = [], [], []
        questions: list[dict[str, Any]] = []
        ran = right = hit = 0
        for q in queries:
            t = time.perf_counter()
            hints, run = plan_question(index, q.text, tools, config)
            if not run.complete:
                times.append(time.perf_counter() - t)
                questions.append({"id": q.id, "stop": run.stop})
                continue
            p = model.confidence(plan_features(hints, run))
            times.append(time.perf_counter() - t)
            gold = set(q.gold)
            ok = bool(run.answer) and set(run.answer) <= gold
            confidences.append(p)
            labels.append(ok)
            first = bool(run.answer) and run.answer[0] in gold
            questions.append(
                {"id": q.id, "stop": run.stop, "p": round(p, 4), "right": ok, "hit": first}
            )
            if p >= args.threshold:
                ran += 1
                right += ok
                hit += bool(run.answer) and run.answer[0] in gold
        times.sort()
        rows.append(
            {
                "set": name,
                "sample_seed": seed,
                "n": len(queries),
                "finished": len(labels),
                "finished_right": sum(labels),
                "ran": ran,
                "ran_right": right,
                "ran_hit1": hit,
                "mean_confidence": round(sum(confidences) / len(confidences), 3)
                if confidences
                else None,
                "calibration_error": round(calibration_error(confidences, labels), 3),
                "calibration_floor": round(calibration_floor(confidences), 3),
                "synthetic_calibration_error": model.info.get("held_out_calibration_error"),
                "plan_s_p50": round(times[len(times) // 2], 4) if times else None,
                "questions": questions,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="+", default=list(SETS))
    ap.add_argument("--limit", type=int, default=30)
    ap.add_argument("--sample-seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    ap.add_argument("--walks", type=int, default=DEFAULT_WALKS)
    ap.add_argument("--fit-seed", type=int, default=0)
    ap.add_argument("--refit", action="store_true")
    ap.add_argument("--data-dir", type=Path, default=default_data_dir())
    ap.add_argument("--index-cache", type=Path, default=Path(".bench"))
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    rows = [r for spec in args.sets for r in run_set(args, spec)]
    print(
        f"\n| set | sample | n | plan finished (right) | run at ≥ {args.threshold} | right | "
        "Hit@1 | mean conf. | ECE | ECE floor | ECE synthetic | plan s p50 |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['set']} | {r['sample_seed']} | {r['n']} | {r['finished']} "
            f"({r['finished_right']}) | {r['ran']} | {r['ran_right']} | {r['ran_hit1']} | "
            f"{r['mean_confidence']} | {r['calibration_error']} | {r['calibration_floor']} | "
            f"{r['synthetic_calibration_error']} | {r['plan_s_p50']} |"
        )
    print("\nBy threshold, over every set: plans run without the model, and how many are right")
    print("| threshold | sample | run | right | share run |")
    print("|---:|---:|---:|---:|---:|")
    for threshold in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        for seed in args.sample_seeds:
            qs = [q for r in rows if r["sample_seed"] == seed for q in r["questions"]]
            run = [q for q in qs if q.get("p", -1) >= threshold]
            right = sum(q["right"] for q in run)
            print(f"| {threshold} | {seed} | {len(run)} | {right} | {len(run) / len(qs):.2f} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
