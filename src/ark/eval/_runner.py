"""Run a method over a query set: one record per query as soon as it finishes,
resumable after any crash, then a summary broken down by query type."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ark._safe import clean_text
from ark.cost import PriceTable, query_cost, run_cost
from ark.eval._methods import Method, MethodOutput
from ark.eval._store import RunStore
from ark.eval.datasets import Query
from ark.eval.metrics import MEASURES, aggregate, evaluate_query

ProgressFn = Callable[[int, int], None]


async def run_queries(
    queries: Sequence[Query],
    method: Method,
    store: RunStore,
    config: dict[str, Any],
    *,
    resume: bool = False,
    concurrency: int = 1,
    mode: str = "strict",
    candidates: np.ndarray | None = None,
    n_nodes: int | None = None,
    progress: ProgressFn | None = None,
    prices: PriceTable | None = None,
    retry_failed: bool = True,
) -> dict[str, Any]:
    """Evaluate ``method`` on ``queries``, writing records to ``store``; returns the summary.

    ``candidates`` (a boolean mask over nodes) restricts what is scored; the method
    may visit any node. Queries already recorded (when resuming) are not redone,
    except those that failed (unless ``retry_failed`` is false) and those whose
    trajectories are missing or damaged; the summary's ``redone`` counts them.
    ``prices`` turns each query's tokens into USD (``ark.cost``). The store is locked
    against other writers while this runs, and released when it returns or raises.
    """
    ids = [q.id for q in queries]
    if len(set(ids)) != len(ids):
        raise ValueError("query ids must be unique")
    done = store.start(config, resume=resume, retry_failed=retry_failed)
    try:
        todo = [q for q in queries if q.id not in done]
        finished = len(queries) - len(todo)
        if progress:
            progress(finished, len(queries))
        lock = asyncio.Lock()
        sem = asyncio.Semaphore(max(1, concurrency))

        async def one(q: Query) -> None:
            nonlocal finished
            async with sem:
                t0 = time.perf_counter()
                try:
                    out = await method(q.id, q.text)
                except Exception as exc:  # a method bug must not lose the rest of the run
                    out = MethodOutput(ranking=[], error=f"{type(exc).__name__}: {exc}")
                wall = time.perf_counter() - t0
            cost = query_cost(out.trajectories, prices)  # also fills each trajectory's cost
            record = make_record(q, out, wall, mode, candidates, n_nodes)
            record["cost"] = cost
            async with lock:
                store.append(record, out.trajectories)
                done[q.id] = record
                finished += 1
                if progress:
                    progress(finished, len(queries))

        await asyncio.gather(*(one(q) for q in todo))
        records = [done[i] for i in ids]
        summary = summarize(records, config, prices)
        if store.skipped:  # damaged lines found when resuming (their queries were redone)
            summary["damaged_lines"] = [list(s) for s in store.skipped]
        redone = redone_counts(store, ids)
        if any(redone.values()):
            summary["redone"] = redone
        store.write_json("summary.json", summary)
        markdown = clean_text(summary_markdown(summary))
        (store.root / "summary.md").write_text(markdown, encoding="utf-8")
        return summary
    finally:
        store.close()  # other writers may have the directory now


def redone_counts(store: RunStore, ids: Sequence[str]) -> dict[str, int]:
    """How many of ``ids`` resuming redid: ``failed`` ones and those whose
    trajectories were ``missing`` or damaged."""
    wanted = set(ids)
    return {
        "failed": sum(q in wanted for q in store.redone["failed"]),
        "missing_trajectories": sum(q in wanted for q in store.redone["missing_trajectories"]),
    }


def make_record(
    q: Query,
    out: MethodOutput,
    wall_s: float,
    mode: str,
    candidates: np.ndarray | None,
    n_nodes: int | None = None,
) -> dict[str, Any]:
    if out.error is not None:
        status = "failed"
    elif not q.gold:
        status = "no_gold"
    else:
        status = "ok"
    metrics = None
    if q.gold:
        # A failed query is scored on an empty ranking: a failure counts as a miss,
        # whatever partial list the method had (ARK: every agent failed; the lists of
        # agents that failed are never fused).
        if status == "failed":  # zero in both modes (stark mode would fill candidates in)
            metrics = {m: 0.0 for m in MEASURES}
        else:
            metrics = evaluate_query(
                out.ranking, q.gold, candidates=candidates, mode=mode, n_nodes=n_nodes
            )
    return {
        "query_id": q.id,
        "query": q.text,
        "qtype": q.qtype,
        "status": status,
        "error": out.error,
        "ranking": out.ranking,
        "gold": sorted(q.gold),
        "missing_answers": list(q.missing),
        "metrics": metrics,
        "wall_s": round(wall_s, 4),
        "prompt_tokens": out.prompt_tokens,
        "completion_tokens": out.completion_tokens,
        "trajectory_ids": [t.id for t in out.trajectories],
    }


def summarize(
    records: list[dict[str, Any]], config: dict[str, Any], prices: PriceTable | None = None
) -> dict[str, Any]:
    scored = [r for r in records if r["metrics"] is not None]
    by_type: dict[str, list[dict[str, Any]]] = {}
    for r in scored:
        by_type.setdefault(r["qtype"] or "all", []).append(r)
    walls = [r["wall_s"] for r in records]
    return {
        "method": config.get("method"),
        "dataset": config.get("dataset"),
        "config": config,
        "queries": len(records),
        "scored": len(scored),
        "failed": sum(r["status"] == "failed" for r in records),
        "no_gold_in_graph": sum(r["status"] == "no_gold" for r in records),
        "metrics": aggregate([r["metrics"] for r in scored]) if scored else {},
        "by_qtype": {
            t: {"n": len(rs), **aggregate([r["metrics"] for r in rs])}
            for t, rs in sorted(by_type.items())
        }
        if len(by_type) > 1
        else {},
        "wall_s_per_query": {
            "mean": round(float(np.mean(walls)), 4) if walls else 0.0,
            "p50": round(float(np.median(walls)), 4) if walls else 0.0,
        },
        "tokens": {
            "prompt": sum(r["prompt_tokens"] for r in records),
            "completion": sum(r["completion_tokens"] for r in records),
        },
        **cost_summary(records, config, prices),
    }


def cost_summary(
    records: list[dict[str, Any]], config: dict[str, Any], prices: PriceTable | None
) -> dict[str, Any]:
    """``cost`` (calls, tokens paid for, model vs tool seconds, USD) and, when the run
    used ``--llm-cache``, its hits and misses (misses: requests that reached the model)."""
    cost = run_cost(records, prices)
    out: dict[str, Any] = {"cost": cost}
    if config.get("llm_cache"):
        out["llm_cache"] = {
            "dir": config["llm_cache"],
            "hits": cost["cache_hits"],
            "misses": cost["llm_calls"],
            "hit_rate": cost["cache_hit_rate"],
        }
    return out


def summary_markdown(summary: dict[str, Any]) -> str:
    m = summary["metrics"]
    lines = [
        f"# {summary['method']} on {summary['dataset']}",
        "",
        f"{summary['queries']} queries, {summary['scored']} scored, {summary['failed']} failed, "
        f"{summary['no_gold_in_graph']} with no answer in the graph; "
        f"{summary['wall_s_per_query']['mean']:.2f} s per query (mean).",
        *cost_markdown(summary),
        "",
        "| slice | n | Hit@1 | Hit@5 | R@20 | MRR |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    if m:
        lines.append(_row("all", summary["scored"], m))
    for t, s in summary["by_qtype"].items():
        lines.append(_row(t, s["n"], s))
    return "\n".join(lines) + "\n"


def cost_markdown(summary: dict[str, Any]) -> list[str]:
    """One line of cost, and one of the response cache when the run used it."""
    c = summary.get("cost")
    if not c or not (c["llm_calls"] or c["cache_hits"]):
        return []
    usd = (
        "no price given"
        if c["usd"] is None
        else f"${c['usd']:.4f} (${c['per_query']['usd']:.5f} per query)"
    )
    lines = [
        "",
        f"Cost: {c['llm_calls']} model calls, {c['prompt_tokens']:,} prompt + "
        f"{c['completion_tokens']:,} completion tokens, {usd}; {c['llm_s']:.1f} s in the "
        f"model, {c['tool_s']:.3g} s in the tools.",
    ]
    if "llm_cache" in summary:
        k = summary["llm_cache"]
        lines.append(
            f"LLM cache {k['dir']}: {k['hits']} hits, {k['misses']} misses "
            f"({100 * k['hit_rate']:.1f} % hit rate)."
        )
    return lines


def _row(name: str, n: int, m: dict[str, Any]) -> str:
    return f"| {name} | {n} | " + " | ".join(f"{m[k]:.2f}" for k in MEASURES) + " |"
