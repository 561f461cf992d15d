"""Options every command that calls a model shares: response cache, seed, prices."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ark.cost import PriceTable
from ark.llm import ChatModel

__all__ = [
    "LlmCacheOpt",
    "ParallelOpt",
    "PriceInOpt",
    "PriceOutOpt",
    "PricesOpt",
    "RetryFailedOpt",
    "SeedOpt",
    "cache_counters",
    "cost_line",
    "prices",
    "redone_line",
]

LlmCacheOpt = Annotated[
    Path | None,
    typer.Option(
        "--llm-cache",
        envvar="ARK_LLM_CACHE",
        help="Directory of an on-disk LLM response cache (reused across runs and processes).",
    ),
]
SeedOpt = Annotated[
    int,
    typer.Option(
        "--seed", help="Seed of the agents' sampling (agent i, step s: seed + 1000 i + s)."
    ),
]
ParallelOpt = Annotated[
    bool | None,
    typer.Option(
        "--parallel/--no-parallel",
        help="Local model: decode the agents' calls together, one sequence each "
        "(default: ARK_LOCAL_PARALLEL).",
        show_default=False,
    ),
]
PriceInOpt = Annotated[
    float | None, typer.Option("--price-in", help="USD per million prompt tokens.")
]
PriceOutOpt = Annotated[
    float | None, typer.Option("--price-out", help="USD per million completion tokens.")
]
PricesOpt = Annotated[
    Path | None,
    typer.Option("--prices", help='JSON prices per model: {"MODEL": {"in": X, "out": Y}}.'),
]

RetryFailedOpt = Annotated[
    bool,
    typer.Option(
        "--retry-failed/--no-retry-failed",
        help="With --resume: redo the queries that failed (queries whose trajectories "
        "are missing or damaged are always redone).",
    ),
]


def prices(
    price_in: float | None, price_out: float | None, prices_file: Path | None
) -> PriceTable | None:
    return PriceTable.from_options(price_in, price_out, prices_file)


def cache_counters(llm: ChatModel) -> dict[str, int] | None:
    counters = getattr(llm, "counters", None)
    return counters.to_dict() if counters is not None else None


def redone_line(redone: dict[str, int]) -> str:
    """E.g. ``resumed: redid 3 failed queries and 2 whose trajectories were missing
    or damaged``."""
    failed, missing = redone.get("failed", 0), redone.get("missing_trajectories", 0)
    parts = [f"{failed} failed {'query' if failed == 1 else 'queries'}"] if failed else []
    if missing:
        parts.append(f"{missing} whose trajectories were missing or damaged")
    return "resumed: redid " + " and ".join(parts)


def cost_line(cost: dict[str, Any]) -> str:
    """E.g. ``12 model calls (3 from the cache), 9,876 prompt + 321 completion tokens,
    $0.0123; 8.1 s in the model, 0.0231 s in the tools``."""
    hits = f" ({cost['cache_hits']} from the cache)" if cost["cache_hits"] else ""
    if cost.get("plan_steps"):
        hits += f", {cost['plan_steps']} steps run by the plan"
    usd = "" if cost["usd"] is None else f", ${cost['usd']:.4f}"
    return (
        f"{cost['llm_calls']} model calls{hits}, {cost['prompt_tokens']:,} prompt + "
        f"{cost['completion_tokens']:,} completion tokens{usd}; {cost['llm_s']:.1f} s in the "
        f"model, {cost['tool_s']:.3g} s in the tools"
    )


#: ``--plan-threshold`` of ``ark ask``, ``ark demo`` and ``ark eval``.
PlanThresholdOpt = Annotated[
    float,
    typer.Option(
        "--plan-threshold",
        min=0.0,
        help="ark-guided: run the reading's plan without the model when its fitted "
        "confidence is at least this (`ark index fit-plans`); above 1: never.",
    ),
]
