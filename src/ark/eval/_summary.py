"""The summary of a scored run: metrics overall and by query type, time, tokens and
cost, as ``summary.json`` and the Markdown table of ``summary.md``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ark.cost import PriceTable, run_cost
from ark.eval.metrics import ALL_MEASURES, aggregate


def summarize_run(
    records: list[dict[str, Any]], config: dict[str, Any], prices: PriceTable | None = None
) -> dict[str, Any]:
    """The summary of a run's records: metrics by question type, wall time, cost (named
    so it is not mistaken for the graph's schema summary, ``ark.graph``'s ``summarize``)."""
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
        **document_summary(records),
    }


def document_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Over documents: supporting paragraphs the index lacks (``missing_gold_passages``,
    counted as never retrieved), and with ``--answer`` how the answer step went."""
    out: dict[str, Any] = {}
    if any("supporting" in r for r in records):
        out["missing_gold_passages"] = sum(len(r["missing_answers"]) for r in records)
    answers = [r["answer"] for r in records if r.get("answer") is not None]
    if answers:
        out["answers"] = {
            "answered": sum(1 for a in answers if a["answerable"]),
            "not_answerable": sum(1 for a in answers if "error" not in a and not a["answerable"]),
            "failed": sum(1 for a in answers if "error" in a),
        }
    return out


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


_HEADERS = {
    "hit@1": "Hit@1",
    "hit@5": "Hit@5",
    "recall@20": "R@20",
    "mrr": "MRR",
    "recall@2": "R@2",
    "recall@5": "R@5",
    "answer@2": "Ans@2",
    "answer@5": "Ans@5",
    "em": "EM",
    "f1": "F1",
}


def summary_markdown(summary: dict[str, Any]) -> str:
    m = summary["metrics"]
    shown = [k for k in ALL_MEASURES if k in m] if m else list(ALL_MEASURES[:4])
    lines = [
        f"# {summary['method']} on {summary['dataset']}",
        "",
        f"{summary['queries']} queries, {summary['scored']} scored, {summary['failed']} failed, "
        f"{summary['no_gold_in_graph']} with no answer in the graph; "
        f"{summary['wall_s_per_query']['mean']:.2f} s per query (mean).",
        *cost_markdown(summary),
        "",
        *document_markdown(summary),
        "",
        "| slice | n | " + " | ".join(_HEADERS[k] for k in shown) + " |",
        "|---|---:|" + "---:|" * len(shown),
    ]
    if m:
        lines.append(_row("all", summary["scored"], m, shown))
    for t, s in summary["by_qtype"].items():
        lines.append(_row(t, s["n"], s, shown))
    return "\n".join(lines) + "\n"


def document_markdown(summary: dict[str, Any]) -> list[str]:
    """Lines on missing gold passages and the answer step (questions over documents)."""
    lines = []
    missing = summary.get("missing_gold_passages")
    if missing:
        lines += [
            "",
            f"Warning: {missing} supporting paragraphs were not found in the index "
            "(by title and text); recall counts them as never retrieved.",
        ]
    a = summary.get("answers")
    if a:
        lines += [
            "",
            f"Answers: {a['answered']} answered, {a['not_answerable']} saying the evidence "
            f"does not answer (scored as empty), {a['failed']} failed (scored as empty).",
        ]
    return lines


def cost_markdown(summary: dict[str, Any]) -> list[str]:
    """One line of cost, and one of the response cache when the run used it."""
    c = summary.get("cost")
    if not c or not (c["llm_calls"] or c["cache_hits"] or c.get("plan_steps")):
        return []
    usd = (
        "no price given"
        if c["usd"] is None
        else f"${c['usd']:.4f} (${c['per_query']['usd']:.5f} per query)"
    )
    lines = [
        "",
        f"Cost: {c['llm_calls']} model calls"
        + (f" ({c['plan_steps']} steps run by the plan)" if c.get("plan_steps") else "")
        + f", {c['prompt_tokens']:,} prompt + "
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


def _row(name: str, n: int, m: dict[str, Any], shown: list[str]) -> str:
    return f"| {name} | {n} | " + " | ".join(f"{m[k]:.2f}" for k in shown) + " |"
