"""Rows of bench_documents.py runs compared on the questions they all answered (a row
stopped early is compared on what it finished), with the paired difference of each
metric between the first row and every other and its bootstrap 95 % interval.

    python benchmarks/compare_rows.py .bench/documents/LABEL ROW [ROW ...]
    python benchmarks/compare_rows.py --dirs RUN/ROW RUN2/ROW [...]   # rows of several runs
    python benchmarks/compare_rows.py ... --musique FILE   # answer@k for runs stored before it

``--musique FILE`` (the run's MuSiQue question file) fills in ``answer@2``/``answer@5`` for
records stored before the measure existed: the answer's paragraph is the supporting one
the decomposition's last step reads, and the record's ``supporting`` groups are in the
file's paragraph order (``ark.datasets.load_musique``), so no index is needed.

For rows whose folder holds the agents' ``trajectories.jsonl``, a second table says where
each question's seconds went: the agents' model calls, their tools, the answer step (the
rest of the question's wall time), with the model calls and plan steps a question
(steps ``by="plan"`` ran without the model), the prompt tokens the model evaluated and the
tokens it generated, the calls the session refused as repeats, and the repeats
not run because the model was asked again (``StepRecord.redrawn``).

Why paired: on 50 MuSiQue questions a row's F1 moves by several points between two
samplings of the same model (naive RAG gave 11.5 and 9.5 on the same 20 questions), so a
difference between two rows is only read with its interval over the same questions.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

KEYS = ("recall@2", "recall@5", "answer@5", "hit@1", "em", "f1")
#: Bootstrap resamples of the paired differences (seeded: the same table every time).
RESAMPLES = 5000


def load_row(path: Path) -> dict[str, dict]:
    """A row's results by question id; a clear error when the folder holds none."""
    results = path / "results.jsonl"
    if not results.is_file():
        raise SystemExit(f"compare_rows: {results} not found (a bench_documents.py row folder?)")
    rows = (json.loads(line) for line in results.read_text().splitlines() if line.strip())
    return {r["query_id"]: r for r in rows}


def fill_answer_passage(rows: dict[str, dict[str, dict]], path: Path) -> None:
    """Add ``answer@k`` to records without it, from the MuSiQue file's decomposition."""
    text = path.read_text(encoding="utf-8")
    records = (
        json.loads(text)
        if text.lstrip().startswith("[")
        else [json.loads(line) for line in text.splitlines() if line.strip()]
    )
    answer_group: dict[str, int] = {}
    for rec in records:
        steps = rec.get("question_decomposition") or []
        support = [i for i, p in enumerate(rec["paragraphs"]) if p.get("is_supporting")]
        last = steps[-1].get("paragraph_support_idx") if steps else None
        if last in support:
            answer_group[str(rec["id"])] = support.index(last)
    for res in rows.values():
        for qid, r in res.items():
            m = r.get("metrics")
            if m is None or "answer@5" in m or qid not in answer_group:
                continue
            group = set(r["supporting"][answer_group[qid]])
            for k in (2, 5):
                m[f"answer@{k}"] = float(bool(group & set(r["passages"][:k])))


def time_split(path: Path, results: dict[str, dict], common: list[str]) -> list[str] | None:
    """The cells of the time table for one row (None without trajectories)."""
    file = path / "trajectories.jsonl"
    if not file.is_file():
        return None
    trajs: dict[str, list[dict]] = {}
    for line in file.read_text().splitlines():
        if line.strip():
            t = json.loads(line)
            trajs.setdefault(str(t.get("query_id")), []).append(t)
    n = len(common)
    model = plan = evaluated = generated = repeats = redrawn = 0
    model_s = tools_s = agents_s = 0.0
    for q in common:
        for t in trajs.get(q, []):
            agents_s += t.get("wall_s") or 0
            for step in t.get("steps", []):
                if step.get("by") == "plan":
                    plan += 1
                else:  # a step that redrew a repeat made two model calls
                    model += 2 if step.get("redrawn") else 1
                    redrawn += bool(step.get("redrawn"))
                    model_s += step.get("llm_latency_s") or 0
                profile = step.get("profile") or {}
                evaluated += profile.get("evaluated_tokens") or 0
                generated += profile.get("generated_tokens") or 0
                for call in step.get("tool_calls", []):
                    tools_s += call.get("duration_s") or 0
                    repeats += call.get("error_code") == "repeated_call"
    wall = sum(results[q].get("wall_s") or 0 for q in common)
    return [
        f"{wall / n:.1f}",
        f"{model_s / n:.1f}",
        f"{tools_s / n:.2f}",
        f"{max(0.0, wall - agents_s) / n:.1f}",
        f"{model / n:.2f}",
        f"{plan / n:.2f}",
        f"{evaluated / n:,.0f}",
        f"{generated / n:,.0f}",
        f"{repeats / n:.2f}",
        f"{redrawn / n:.2f}",
    ]


def has(metrics: list[dict], key: str) -> bool:
    """Every record of a row has ``key`` among its metrics."""
    return all(key in m for m in metrics)


def interval(diffs: list[float], seed: int = 0) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles of the mean of resampled paired differences."""
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(RESAMPLES))
    return means[int(0.025 * RESAMPLES)], means[int(0.975 * RESAMPLES) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", nargs="?", type=Path, help="a run folder .bench/documents/LABEL")
    parser.add_argument("rows", nargs="*", help="row names inside RUN")
    parser.add_argument("--dirs", nargs="+", type=Path, help="row folders, from any runs")
    parser.add_argument("--musique", type=Path, help="fill answer@k in from this question file")
    args = parser.parse_args()
    if args.dirs:
        paths = {str(p): p for p in args.dirs}
    elif args.run and args.rows:
        paths = {row: args.run / row for row in args.rows}
    else:
        parser.error("give RUN and at least one ROW, or --dirs ROW_FOLDER ...")
    rows = {name: load_row(path) for name, path in paths.items()}
    if args.musique:
        fill_answer_passage(rows, args.musique)
    common = sorted(set.intersection(*(set(r) for r in rows.values())))
    if not common:
        raise SystemExit("compare_rows: the rows share no question")
    print(f"{len(common)} questions in common\n")
    print("| row | " + " | ".join(KEYS) + " | s/question |")
    print("|---|" + "---:|" * (len(KEYS) + 1))
    for row, res in rows.items():
        ms = [res[q]["metrics"] for q in common]
        # "–" where a record lacks the measure (a run before it existed, or a row
        # without answers), never a 0 that reads as a score
        cells = [
            f"{100 * sum(m[k] or 0 for m in ms) / len(ms):.1f}" if has(ms, k) else "–" for k in KEYS
        ]
        wall = sum(res[q].get("wall_s") or 0 for q in common) / len(common)
        print(f"| {row} | " + " | ".join(cells) + f" | {wall:.1f} |")
    splits = {row: time_split(paths[row], res, common) for row, res in rows.items()}
    if any(v is not None for v in splits.values()):
        print(
            "\nWhere the time went, a question (s; the answer step is the wall time the agents"
            " leave):\n"
        )
        print(
            "| row | s | model calls s | tools s | answer step s | model calls | plan steps "
            "| evaluated | generated | refused repeats | repeats redrawn |"
        )
        print("|---|" + "---:|" * 10)
        for row, cells in splits.items():
            if cells is not None:
                print(f"| {row} | " + " | ".join(cells) + " |")
    names = list(rows)
    if len(names) < 2:
        return
    first = names[0]
    print(f"\nPaired differences, {first} minus each row (points; bootstrap 95 % interval):\n")
    print("| row | " + " | ".join(KEYS) + " |")
    print("|---|" + "---:|" * len(KEYS))
    for row in names[1:]:
        cells = []
        for key in KEYS:
            a, b = rows[first], rows[row]
            if not (
                has([a[q]["metrics"] for q in common], key)
                and has([b[q]["metrics"] for q in common], key)
            ):
                cells.append("–")
                continue
            diffs = [
                100 * ((a[q]["metrics"].get(key) or 0) - (b[q]["metrics"].get(key) or 0))
                for q in common
            ]
            low, high = interval(diffs)
            cells.append(f"{sum(diffs) / len(diffs):+.1f} [{low:+.1f}, {high:+.1f}]")
        print(f"| {row} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
