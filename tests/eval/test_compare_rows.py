"""``compare_rows.py``'s time table: where a question's seconds went, read from the
row's stored trajectories."""

import json

import pytest

from _helpers import benchmark


@pytest.fixture(scope="module")
def bench():
    return benchmark("compare_rows")


def _step(by=None, latency=0.0, evaluated=0, generated=0, code=None, tool_s=0.0):
    return {
        "by": by,
        "llm_latency_s": latency,
        "profile": {"evaluated_tokens": evaluated, "generated_tokens": generated},
        "tool_calls": [{"name": "search_in_graph", "duration_s": tool_s, "error_code": code}],
    }


def test_the_time_table_splits_model_calls_tools_and_the_answer_step(bench, tmp_path):
    results = {"q1": {"wall_s": 10.0}, "q2": {"wall_s": 6.0}}
    trajs = [
        {
            "query_id": "q1",
            "wall_s": 7.0,
            "steps": [
                _step("plan", tool_s=0.5),
                _step(latency=6.0, evaluated=300, generated=40, code="repeated_call"),
            ],
        },
        {"query_id": "q2", "wall_s": 4.0, "steps": [_step(latency=3.5, evaluated=100)]},
    ]
    (tmp_path / "trajectories.jsonl").write_text("\n".join(json.dumps(t) for t in trajs))
    cells = bench.time_split(tmp_path, results, ["q1", "q2"])
    # 8 s a question; model calls 4.75; tools 0.25; answer step (16 - 11) / 2 = 2.5;
    # 1 model call and 0.5 plan steps a question; 200 evaluated, 20 generated; 0.5 repeats;
    # no reply redrawn.
    assert cells == ["8.0", "4.8", "0.25", "2.5", "1.00", "0.50", "200", "20", "0.50", "0.00"]
    assert bench.time_split(tmp_path / "none", results, ["q1"]) is None
    # a step that redrew a repeat made two model calls
    trajs[1]["steps"][0]["redrawn"] = {"tool_calls": [], "latency_s": 1.0}
    (tmp_path / "trajectories.jsonl").write_text("\n".join(json.dumps(t) for t in trajs))
    cells = bench.time_split(tmp_path, results, ["q1", "q2"])
    assert cells[4] == "1.50" and cells[-1] == "0.50"
