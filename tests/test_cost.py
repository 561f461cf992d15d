"""Cost accounting: prices from the user only, calls and tokens read off trajectories."""

from __future__ import annotations

import json

import pytest

from ark.cost import Price, PriceTable, query_cost, run_cost, trajectory_cost
from ark.errors import ArkError
from ark.trajectory import StepRecord, ToolCallRecord, Trajectory


def step(i, prompt, completion, latency, cached=False, tool_s=()):
    calls = [
        ToolCallRecord(f"c{i}{j}", "t", {}, "{}", "", True, duration_s=d)
        for j, d in enumerate(tool_s)
    ]
    return StepRecord(i, latency, prompt, completion, "", calls, cached=cached)


def traj(model="m", steps=()):
    return Trajectory(question="q", model=model, config={}, steps=list(steps))


def test_cached_steps_are_not_paid_for():
    t = traj(
        steps=[
            step(0, 1000, 50, 2.0, tool_s=[0.01, 0.02]),
            step(1, 3000, 100, 0.001, cached=True, tool_s=[0.5]),
        ]
    )
    cost = trajectory_cost(t, PriceTable(default=Price(2.0, 8.0)))
    assert cost == {
        "llm_calls": 1,
        "cache_hits": 1,
        "plan_steps": 0,
        "prompt_tokens": 1000,
        "completion_tokens": 50,
        "llm_s": 2.001,
        "tool_s": 0.53,
        "usd": (2.0 * 1000 + 8.0 * 50) / 1e6,
    }


def test_no_price_no_usd_and_per_model_prices():
    t = traj(model="big", steps=[step(0, 10**6, 10**6, 1.0)])
    assert trajectory_cost(t)["usd"] is None
    table = PriceTable({"big": Price(1.0, 3.0)}, default=Price(0.1, 0.1))
    assert trajectory_cost(t, table)["usd"] == 4.0
    assert trajectory_cost(traj(model="small", steps=t.steps), table)["usd"] == 0.2
    assert trajectory_cost(t, PriceTable({"other": Price(1, 1)}))["usd"] is None


def test_query_and_run_totals():
    table = PriceTable(default=Price(1.0, 1.0))
    ts = [traj(steps=[step(0, 500_000, 0, 1.0)]), traj(steps=[step(0, 500_000, 0, 3.0)])]
    q = query_cost(ts, table)
    assert all(t.cost is not None and t.cost["usd"] == 0.5 for t in ts)
    assert q["usd"] == 1.0 and q["llm_calls"] == 2 and q["llm_s"] == 4.0
    baseline = query_cost([], table)
    assert baseline["usd"] == 0.0 and baseline["llm_calls"] == 0
    run = run_cost([{"cost": q}, {"cost": baseline}], table)
    assert run["usd"] == 1.0 and run["per_query"]["usd"] == 0.5
    assert run["per_query"]["llm_calls"] == 1.0
    assert run["prices"] == {"models": {}, "default": {"in": 1.0, "out": 1.0}}
    assert run_cost([{"cost": q}, {"cost": query_cost([])}])["usd"] is None


def test_price_options_and_file(tmp_path):
    assert PriceTable.from_options() is None
    with pytest.raises(ArkError, match="both --price-in and --price-out"):
        PriceTable.from_options(price_in=1.0)
    with pytest.raises(ArkError, match="negative"):
        PriceTable.from_options(-1.0, 1.0)
    f = tmp_path / "prices.json"
    f.write_text(json.dumps({"gpt-x": {"in": 2, "out": 8}}))
    table = PriceTable.from_options(0.5, 1.0, f)
    assert table is not None
    assert table.price("gpt-x") == Price(2.0, 8.0) and table.price("other") == Price(0.5, 1.0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"m": {"in": 1}}', r"model 'm' needs exactly"),
        ('{"m": {"in": 1, "out": "2"}}', r"m\.out: a price must be a number"),
        ("[1]", "expected an object"),
        ('{"m":\n  {"in": 1,}}', r"prices\.json:2: not valid JSON"),
    ],
)
def test_a_bad_prices_file_is_refused_with_its_name(tmp_path, text, message):
    f = tmp_path / "prices.json"
    f.write_text(text)
    with pytest.raises(ArkError, match=message):
        PriceTable.from_options(prices_file=f)
