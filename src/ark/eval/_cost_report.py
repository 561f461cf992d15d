"""The cost side of ``ark report``: what each run paid per query, against its quality.

Read off the records' ``cost`` (runs made before cost accounting contribute their
token counts). USD is plotted when every run that called a model has a price;
otherwise tokens per query, so runs are always comparable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ark.cost import run_cost
from ark.eval._tables import markdown_table, write_csv


def cost_rows(runs: list[Any]) -> list[dict[str, Any]]:
    """One row per run: quality, and per query: model calls, tokens, USD, seconds."""
    rows = []
    for run in runs:
        cost = run_cost(run.records)
        per = cost["per_query"]
        m = run.summary.get("metrics", {})
        rows.append(
            {
                "run": run.name,
                "method": run.method,
                "n": run.summary.get("queries", len(run.records)),
                "hit@1": round(m.get("hit@1", 0.0), 2),
                "hit@5": round(m.get("hit@5", 0.0), 2),
                "llm_calls/q": round(per["llm_calls"], 2),
                "cache_hits/q": round(per["cache_hits"], 2),
                "prompt_tokens/q": round(per["prompt_tokens"]),
                "completion_tokens/q": round(per["completion_tokens"]),
                "usd/q": None if per["usd"] is None else float(f"{per['usd']:.3g}"),
                "llm_s/q": round(per["llm_s"], 3),
                "tool_s/q": round(per["tool_s"], 4),
            }
        )
    return rows


def write_cost_report(runs: list[Any], out: Path, *, plotting: bool = True) -> str:
    """``cost.csv`` and (with matplotlib) ``quality_vs_cost.png``; returns the Markdown
    section ('' when no run called a model)."""
    rows = cost_rows(runs)
    if not any(r["llm_calls/q"] or r["cache_hits/q"] for r in rows):
        return ""
    write_csv(out / "cost.csv", rows)
    if not plotting:
        return "\n## Cost per query\n\n" + markdown_table(rows)
    _plot(rows, out / "quality_vs_cost.png")
    return "\n## Cost per query (quality_vs_cost.png)\n\n" + markdown_table(rows)


def _plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paying = [r for r in rows if r["llm_calls/q"] or r["cache_hits/q"]]
    by_usd = all(r["usd/q"] is not None for r in paying)
    if by_usd:
        xs = [r["usd/q"] or 0.0 for r in rows]
        label = "USD per query"
    else:
        xs = [r["prompt_tokens/q"] + r["completion_tokens/q"] for r in rows]
        label = "tokens paid for per query (no price for every run)"
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.scatter(xs, [r["hit@1"] for r in rows], marker="o", label="Hit@1")
    ax.scatter(xs, [r["hit@5"] for r in rows], marker="^", facecolors="none", label="Hit@5",
               edgecolors="tab:orange")  # fmt: skip
    for x, r in zip(xs, rows, strict=True):
        ax.annotate(
            f"{r['method']}\n{Path(r['run']).name}",
            (x, r["hit@5"]),
            fontsize=7,
            xytext=(4, 4),
            textcoords="offset points",
        )
    ax.set(xlabel=label, ylabel="%", title="Quality against cost, per run")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
