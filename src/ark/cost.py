"""What a retrieval cost: model calls, tokens, time in the model vs in the tools, USD.

Read off trajectories, the one record of what an agent did: a step is one model call
(unless its reply came from the response cache, ``StepRecord.cached``, or the
reading's plan ran it, ``StepRecord.by == "plan"``), with its tokens and latency, and
each tool call carries its duration. Prices come only from the user (``--price-in``/
``--price-out`` in USD per million tokens, or a JSON file keyed by model name), never
from a table built into ARK that could go stale unnoticed; without one the cost in
USD is ``None``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ark.errors import ArkError
from ark.trajectory import Trajectory

__all__ = ["Price", "PriceTable", "query_cost", "run_cost", "trajectory_cost"]

_COUNTS = ("llm_calls", "cache_hits", "plan_steps", "prompt_tokens", "completion_tokens")
_SECONDS = ("llm_s", "tool_s")


@dataclass(frozen=True)
class Price:
    """USD per million prompt (input) and completion (output) tokens."""

    input: float
    output: float

    def usd(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (self.input * prompt_tokens + self.output * completion_tokens) / 1e6

    def to_dict(self) -> dict[str, float]:
        return {"in": self.input, "out": self.output}


class PriceTable:
    """Prices per model name, with an optional price for any other model."""

    def __init__(self, models: dict[str, Price] | None = None, default: Price | None = None):
        self.models = dict(models or {})
        self.default = default

    @classmethod
    def from_options(
        cls,
        price_in: float | None = None,
        price_out: float | None = None,
        prices_file: str | Path | None = None,
    ) -> PriceTable | None:
        """``--price-in/--price-out`` (any model) and/or ``--prices FILE`` (per model;
        it wins for the models it names). ``None`` when no price is given."""
        if (price_in is None) != (price_out is None):
            raise ArkError("give both --price-in and --price-out (USD per million tokens)")
        default = None
        if price_in is not None and price_out is not None:
            default = Price(_price(price_in, "--price-in"), _price(price_out, "--price-out"))
        models = load_prices(prices_file) if prices_file is not None else {}
        if default is None and not models:
            return None
        return cls(models, default)

    def price(self, model: str) -> Price | None:
        return self.models.get(model, self.default)

    def to_dict(self) -> dict[str, Any]:
        return {
            "models": {m: p.to_dict() for m, p in sorted(self.models.items())},
            "default": self.default.to_dict() if self.default else None,
        }


def load_prices(path: str | Path) -> dict[str, Price]:
    """A prices file: ``{"MODEL": {"in": USD_PER_M, "out": USD_PER_M}, ...}``."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ArkError(f"cannot read prices file {path}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise ArkError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    if not isinstance(data, dict):
        raise ArkError(f'{path}: expected an object {{"MODEL": {{"in": X, "out": Y}}}}')
    prices = {}
    for model, entry in data.items():
        if not isinstance(entry, dict) or set(entry) != {"in", "out"}:
            raise ArkError(
                f'{path}: model {model!r} needs exactly {{"in": X, "out": Y}} '
                "(USD per million prompt and completion tokens)"
            )
        prices[model] = Price(
            _price(entry["in"], f"{path}: {model}.in"), _price(entry["out"], f"{path}: {model}.out")
        )
    return prices


def _price(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ArkError(f"{where}: a price must be a number, got {value!r}")
    if value < 0:
        raise ArkError(f"{where}: a price cannot be negative ({value})")
    return float(value)


def trajectory_cost(t: Trajectory, prices: PriceTable | None = None) -> dict[str, Any]:
    """Model calls made (cache hits and the plan's steps apart), tokens paid for,
    seconds, and USD."""
    planned = sum(1 for s in t.steps if s.by == "plan")
    hits = sum(1 for s in t.steps if s.cached)
    paid = [s for s in t.steps if not s.cached and s.by != "plan"]
    prompt = sum(s.prompt_tokens for s in paid)
    completion = sum(s.completion_tokens for s in paid)
    price = prices.price(t.model) if prices is not None else None
    return {
        # a step that redrew a repeat made two calls (StepRecord.redrawn)
        "llm_calls": len(paid) + sum(1 for s in paid if s.redrawn),
        "cache_hits": hits,
        "plan_steps": planned,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "llm_s": round(sum(s.llm_latency_s for s in t.steps), 4),
        "tool_s": round(sum(c.duration_s for s in t.steps for c in s.tool_calls), 6),
        "usd": None if price is None else round(price.usd(prompt, completion), 8),
    }


def query_cost(
    trajectories: Sequence[Trajectory], prices: PriceTable | None = None, *, annotate: bool = True
) -> dict[str, Any]:
    """The sum over one query's trajectories; each gets its own ``cost`` when
    ``annotate``. A query without trajectories (a baseline) made no model call."""
    costs = []
    for t in trajectories:
        cost = trajectory_cost(t, prices)
        if annotate:
            t.cost = cost
        costs.append(cost)
    total = _sum(costs)
    if not costs:
        total["usd"] = 0.0 if prices is not None else None
    return total


def _sum(costs: Iterable[dict[str, Any]]) -> dict[str, Any]:
    costs = list(costs)
    out: dict[str, Any] = {k: sum(int(c.get(k) or 0) for c in costs) for k in _COUNTS}
    out.update({k: round(sum(float(c.get(k) or 0.0) for c in costs), 4) for k in _SECONDS})
    usd = [c.get("usd") for c in costs]
    out["usd"] = round(sum(usd), 8) if usd and all(u is not None for u in usd) else None  # type: ignore[arg-type]
    return out


def run_cost(records: Sequence[dict[str, Any]], prices: PriceTable | None = None) -> dict[str, Any]:
    """A run's totals and per-query means, read off its records' ``cost``. Records
    written before cost accounting count their tokens as model calls of unknown
    number."""
    costs = [r.get("cost") or _legacy(r) for r in records]
    total = _sum(costs)
    n = max(len(records), 1)
    per_query = {k: round(total[k] / n, 4) for k in (*_COUNTS, *_SECONDS)}
    per_query["usd"] = None if total["usd"] is None else round(total["usd"] / n, 8)
    calls = total["llm_calls"] + total["cache_hits"]
    return {
        **total,
        "per_query": per_query,
        "cache_hit_rate": round(total["cache_hits"] / calls, 4) if calls else 0.0,
        "prices": prices.to_dict() if prices is not None else None,
    }


def _legacy(record: dict[str, Any]) -> dict[str, Any]:
    return {
        "prompt_tokens": record.get("prompt_tokens", 0),
        "completion_tokens": record.get("completion_tokens", 0),
        "usd": None,
    }
