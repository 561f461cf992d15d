"""The answer step alone, rerun on a stored run's retrievals.

    python benchmarks/bench_answers.py RUN/ROW --index IDX --out DIR --label L [--model 1.5b]
        [--writer one|steps]
    python benchmarks/compare_rows.py --dirs RUN/ROW DIR/L   # paired EM and F1

Why: on MuSiQue the agents take about three quarters of a question's seconds and the
answer step the rest; a change to the answer step judged by rerunning whole questions
pays for the agents again and mixes their sampling into the answer's score. Here each
question's retrieval is rebuilt from the row's recorded trajectories
(``ark.retrieval.fuse_trajectories``, the retriever's own fusion and evidence passages)
and only the answer step runs (``ark.answer.answer_retrieval``, what
``ark.answer.answer_question`` calls after retrieving), greedy as in the run, so two
versions of the answer step read the same nodes and edges (a GraphSearch row's: the
answer basis its trajectory recorded). Run it from two worktrees to compare code
versions.

The row folder is a ``bench_documents.py`` (``ark eval --answer``) run: its
``config.json`` (fusion, linked passages, writer), ``results.jsonl`` (the questions,
their gold answers) and ``trajectories.jsonl``. ``OUT/LABEL/results.jsonl`` gets the
same records with the new answer and its EM and F1, plus ``answer_s`` (the step's
seconds) and ``answer_calls`` (its model calls); an interrupted run resumes. The table:
EM, F1, seconds and model calls a question, prompt and generated tokens, how many
answers equal the stored run's (1.0 when nothing changed and the model is
deterministic), and why the step read in one call where it did.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ark.answer import WRITERS, answer_retrieval
from ark.errors import ArkError
from ark.eval import answer_record, scored_text
from ark.eval.metrics import score_answer
from ark.index import Index, open_index
from ark.llm import ChatModel, ModelSettings
from ark.retrieval import fuse_trajectories
from ark.trajectory import read_trajectories


def load_run(row: Path) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """The row's config, its answered records (in file order) and trajectories by id."""
    files = {name: row / name for name in ("config.json", "results.jsonl", "trajectories.jsonl")}
    for path in files.values():
        if not path.is_file():
            raise SystemExit(f"bench_answers: {path} not found (a bench_documents.py row?)")
    config = json.loads(files["config.json"].read_text(encoding="utf-8"))
    records = []
    for n, line in enumerate(files["results.jsonl"].read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise SystemExit(f"bench_answers: {files['results.jsonl']}:{n}: {exc}") from None
    trajectories = {t.id: t for t in read_trajectories(files["trajectories.jsonl"])}
    answered = [r for r in records if r.get("answer") is not None and r.get("status") == "ok"]
    return config, answered, trajectories


def calls(record: dict[str, Any]) -> int:
    """The answer step's model calls, read from its recorded steps: the plan, each
    lookup, and the one call it fell back to (one call when not read in steps)."""
    steps = record.get("steps")
    if not steps:
        return 1
    return 1 + sum("lookup" in s for s in steps) + sum("fallback" in s for s in steps)


async def answer_one(
    llm: ChatModel,
    index: Index,
    config: dict[str, Any],
    record: dict[str, Any],
    trajectories: dict[str, Any],
) -> dict[str, Any]:
    """``record`` with its answer written again from its rebuilt retrieval."""
    missing = [t for t in record["trajectory_ids"] if t not in trajectories]
    if missing:
        raise SystemExit(f"bench_answers: {record['query_id']}: trajectories {missing} not stored")
    result = fuse_trajectories(
        index,
        record["query"],
        [trajectories[t] for t in record["trajectory_ids"]],
        question_id=record["query_id"],
        fusion=config.get("fusion") or "vote",
        linked_passages=int(config.get("linked_passages", 3)),
        seed=config.get("seed"),
    )
    seed = config.get("seed")
    started = time.perf_counter()
    answered = await answer_retrieval(
        llm,
        index,
        result,
        # A run made before the writer had its name recorded it as the reader.
        writer=config.get("answer_writer") or config.get("answer_reader") or "steps",
        seed=0 if seed is None else seed,
    )
    answer = answered.answer
    elapsed = time.perf_counter() - started
    written = answer_record(answer)
    metrics = {**record["metrics"], **score_answer(scored_text(written), record["gold_answers"])}
    return {
        **record,
        "answer": written,
        "metrics": metrics,
        "stored_answer": record["answer"].get("text"),
        "answer_s": round(elapsed, 4),
        "answer_calls": calls(written),
        "rebuilt_passages": [p.node for p in result.passages] == record.get("passages"),
    }


def summary_table(label: str, rows: list[dict[str, Any]]) -> str:
    n = len(rows)
    if not n:
        return f"{label}: no questions"

    def mean(key: str) -> float:
        return sum(r[key] for r in rows) / n

    same = sum(r["answer"].get("text") == r["stored_answer"] for r in rows)
    lines = [
        "| run | n | EM | F1 | answer s/q | calls/q | prompt tok/q | generated tok/q | as stored |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| {label} | {n} | {100 * sum(r['metrics']['em'] for r in rows) / n:.1f} "
        f"| {100 * sum(r['metrics']['f1'] for r in rows) / n:.1f} | {mean('answer_s'):.1f} "
        f"| {mean('answer_calls'):.2f} "
        f"| {sum(r['answer']['prompt_tokens'] for r in rows) / n:.0f} "
        f"| {sum(r['answer']['completion_tokens'] for r in rows) / n:.0f} | {same}/{n} |",
    ]
    why = Counter(
        next((s["fallback"] for s in r["answer"].get("steps") or [] if "fallback" in s), "")
        for r in rows
    )
    read_in_one = {k: v for k, v in why.items() if k}
    if read_in_one:
        lines.append("")
        lines.append("Read in one call: " + "; ".join(f"{k} ({v})" for k, v in read_in_one.items()))
    rebuilt = sum(bool(r["rebuilt_passages"]) for r in rows)
    if rebuilt < n:
        lines.append(f"\nPassages rebuilt unlike the stored run's on {n - rebuilt} of {n}.")
    return "\n".join(lines)


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    config, records, trajectories = load_run(args.row)
    if args.writer is not None:  # the stored run's writer unless told
        config = {**config, "answer_writer": args.writer}
    if args.ids is not None:
        wanted = set(args.ids.read_text(encoding="utf-8").split())
        records = [r for r in records if r["query_id"] in wanted]
    if args.limit is not None:
        records = records[: args.limit]
    out = args.out / args.label
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(
        json.dumps({**config, "answers_rerun_from": str(args.row)}, indent=2), encoding="utf-8"
    )
    results = out / "results.jsonl"
    done: dict[str, dict[str, Any]] = {}
    if results.exists():
        for line in results.read_text(encoding="utf-8").splitlines():
            if line.strip():  # a torn last line (an interrupted write) is rewritten
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue
                done[rec["query_id"]] = rec
    with results.open("w", encoding="utf-8") as f:  # rewritten whole: no torn line kept
        for rec in done.values():
            f.write(json.dumps(rec) + "\n")
    index = open_index(args.index)
    llm = ModelSettings(model=args.model or config.get("model"), base_url=args.base_url).build()
    rows = [done[r["query_id"]] for r in records if r["query_id"] in done]
    todo = [r for r in records if r["query_id"] not in done]
    for record in todo:
        row = await answer_one(llm, index, config, record, trajectories)
        with results.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        rows.append(row)
        print(f"\r  answers: {len(rows)}/{len(records)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return rows


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("row", type=Path, help="a bench_documents.py row folder (RUN/LABEL/ROW)")
    p.add_argument("--index", type=Path, required=True, help="the index the row ran over")
    p.add_argument("--model", default=None, help="default: the row's model")
    p.add_argument("--base-url", default=None, help="an OpenAI-compatible server")
    p.add_argument("--limit", type=int, default=None, help="the first N answered questions")
    p.add_argument(
        "--ids", type=Path, default=None, help="a file of question ids: only those (one a line)"
    )
    p.add_argument(
        "--writer", choices=list(WRITERS), default=None, help="default: the stored run's"
    )
    p.add_argument("--label", default="rerun", help="run name under --out")
    p.add_argument("--out", type=Path, default=Path(".bench/answers"))
    args = p.parse_args(argv)
    try:
        rows = asyncio.run(run(args))
    except ArkError as exc:
        sys.exit(f"bench_answers: {exc}")
    print(summary_table(args.label, rows))


if __name__ == "__main__":
    main()
