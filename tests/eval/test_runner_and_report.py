"""The runner with ARK driven by a scripted test double, failures, and the report."""

import asyncio
import json

import pytest

from _doubles import ScriptedChatModel, tool_call
from ark.datasets import Query
from ark.errors import ArkError
from ark.eval import BM25Method, RetrieverMethod, RunStore, run_queries
from ark.eval.report import write_report
from ark.index import build_index
from ark.llm import LLMError
from ark.retrieval import Retriever
from ark.tools import ToolConfig

KB = """\
Forrest Gump|directed_by|Robert Zemeckis
Cast Away|directed_by|Robert Zemeckis
Forrest Gump|has_genre|Drama
Cast Away|has_genre|Adventure
"""


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    root = tmp_path_factory.mktemp("kb")
    (root / "kb.txt").write_text(KB)
    return build_index(root / "kb.txt", root / "idx")


def node(index, name):
    return index.graph.names.to_pylist().index(name)


def script_for(index, fail_at=0):
    def script(messages):
        turn = sum(1 for m in messages if m.role == "assistant")
        if "fail" in messages[1].content and turn == fail_at:
            return LLMError("server unavailable after 5 attempts")
        plan = [
            tool_call("search_in_graph", query="Robert Zemeckis"),
            tool_call("search_in_neighborhood", node_index=node(index, "Robert Zemeckis")),
            tool_call("search_in_graph", query="Forrest Gump"),
            tool_call("add_to_answer", node_indices=[node(index, "Forrest Gump")]),
            tool_call("finish"),
        ]
        return plan[min(turn, 4)]

    return script


def queries(index):
    gump = frozenset({node(index, "Forrest Gump")})
    return [
        Query("q1", "films by Robert Zemeckis", gump, "director_to_movie"),
        Query("q2", "please fail", gump, "director_to_movie"),
        Query("q3", "a question whose answer is not in the graph", frozenset(), "other"),
    ]


def run_ark(index, out, tools=None, agents=2, max_steps=20, fail_at=0):
    tools = tools or ToolConfig()
    retriever = Retriever(
        index,
        ScriptedChatModel(script_for(index, fail_at)),
        n_agents=agents,
        max_steps=max_steps,
        tools=tools,
    )
    config = {
        "method": "ark",
        "dataset": "test",
        "agents": agents,
        "max_steps": max_steps,
        "tools": tools.to_dict(),
    }
    return asyncio.run(
        run_queries(queries(index), RetrieverMethod(retriever), RunStore(out), config)
    )


def test_records_failures_and_queries_without_gold(index, tmp_path):
    # q2's agents fail after adding the gold node: a failure must still be a miss.
    summary = run_ark(index, tmp_path / "run", fail_at=4)
    rows = {
        json.loads(line)["query_id"]: json.loads(line)
        for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()
    }
    assert rows["q1"]["status"] == "ok" and rows["q1"]["metrics"]["hit@1"] == 1.0
    assert rows["q2"]["status"] == "failed" and "unavailable" in rows["q2"]["error"]
    assert rows["q2"]["metrics"]["hit@1"] == 0.0  # a failure counts as a miss
    assert rows["q2"]["ranking"] == []  # the failed agents' partial lists are not fused
    assert rows["q3"]["status"] == "no_gold" and rows["q3"]["metrics"] is None
    assert summary["failed"] == 1 and summary["no_gold_in_graph"] == 1 and summary["scored"] == 2
    assert summary["metrics"]["hit@1"] == 50.0
    assert len(rows["q1"]["trajectory_ids"]) == 2
    trajectories = (tmp_path / "run" / "trajectories.jsonl").read_text().splitlines()
    assert len(trajectories) == 6
    assert "| all | 2 |" in (tmp_path / "run" / "summary.md").read_text()


def test_report_analyses_and_plots(index, tmp_path):
    run_ark(index, tmp_path / "ark")
    run_ark(index, tmp_path / "ark-global", ToolConfig(neighbors=False))
    bm25 = BM25Method(index)
    asyncio.run(
        run_queries(
            queries(index), bm25, RunStore(tmp_path / "bm25"), {"method": "bm25", "dataset": "test"}
        )
    )
    text = write_report([tmp_path / "ark", tmp_path / "bm25"], tmp_path / "report")
    assert "| ark n=2 T=20 |" in text and "| bm25 |" in text
    # q1's and q3's four trajectories: global, neighborhood, global (both tools,
    # re-anchored); q2's two agents failed before any call.
    usage = (tmp_path / "report" / "tool_use.csv").read_text().splitlines()
    header, row = usage[0].split(","), usage[1].split(",")
    stats = dict(zip(header, row, strict=True))
    assert float(stats["global_call_share"]) == pytest.approx(100 * 8 / 12, abs=0.1)
    assert float(stats["global_and_neighborhood"]) == pytest.approx(100 * 4 / 6, abs=0.1)
    assert float(stats["reanchor_after_step_1"]) == pytest.approx(100 * 4 / 6, abs=0.1)
    # Figure 5: q1's hits made one neighborhood call each, q2's failed agents none; q3
    # has no gold answer, so its trajectories are neither hit nor miss.
    assert float(stats["neighborhood_calls_hit5"]) == 1.0
    assert float(stats["neighborhood_calls_miss"]) == 0.0
    for png in ("tool_calls.png", "neighborhood_calls_by_outcome.png"):
        assert (tmp_path / "report" / png).stat().st_size > 1000
    with pytest.raises(ArkError, match=r"summary\.json"):
        write_report([tmp_path / "nothing"], tmp_path / "r2")


def test_ablation_reaches_the_agent_tools(index, tmp_path):
    run_ark(index, tmp_path / "global-only", ToolConfig(neighbors=False))
    rows = (tmp_path / "global-only" / "trajectories.jsonl").read_text().splitlines()
    first = json.loads(rows[0])
    neighborhood_calls = [
        c for s in first["steps"] for c in s["tool_calls"] if c["name"] == "search_in_neighborhood"
    ]
    assert neighborhood_calls and all(c["error_code"] == "unknown_tool" for c in neighborhood_calls)


@pytest.mark.slow
def test_report_draws_the_budget_sweep(index, tmp_path):
    cells = [(1, 20), (2, 20), (2, 5)]
    for agents, steps in cells:
        run_ark(index, tmp_path / f"a{agents}-s{steps}", agents=agents, max_steps=steps)
    text = write_report([tmp_path / f"a{a}-s{s}" for a, s in cells], tmp_path / "report")
    assert "## Budget sweep (figure 2)" in text
    rows = (tmp_path / "report" / "sweep.csv").read_text().splitlines()
    assert rows[0].startswith("dataset,max_steps,agents,hit@1") and len(rows) == 4
    assert [r.split(",")[1:3] for r in rows[1:]] == [["5", "2"], ["20", "1"], ["20", "2"]]
    assert (tmp_path / "report" / "sweep.png").stat().st_size > 1000
    # One run is no sweep.
    assert "Budget sweep" not in write_report([tmp_path / "a1-s20"], tmp_path / "r1")
