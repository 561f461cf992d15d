"""Cost in the runner's records and summary, and `ark report`'s quality-versus-cost."""

import asyncio
import csv

import pytest

from _doubles import ScriptedChatModel, tool_call
from ark.cost import Price, PriceTable
from ark.datasets import Query
from ark.eval import BM25Method, RetrieverMethod, RunStore, run_queries
from ark.eval.report import write_report
from ark.index import build_index
from ark.llm import CachedChatModel
from ark.retrieval import Retriever


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    root = tmp_path_factory.mktemp("kb")
    (root / "kb.txt").write_text("Forrest Gump|directed_by|Robert Zemeckis\n")
    return build_index(root / "kb.txt", root / "idx")


def run(index, out, llm, prices=None, method=None):
    gump = index.graph.names.to_pylist().index("Forrest Gump")
    queries = [Query("q1", "Forrest Gump", frozenset({gump})), Query("q2", "Gump", frozenset())]
    method = method or RetrieverMethod(Retriever(index, llm, n_agents=2, seed=0))
    config = {"method": method.name, "dataset": "test", "agents": 2, "max_steps": 20}
    return asyncio.run(run_queries(queries, method, RunStore(out), config, prices=prices))


def script(messages):
    turn = sum(1 for m in messages if m.role == "assistant")
    return [
        tool_call("search_in_graph", query="Forrest Gump"),
        tool_call("add_to_answer", node_indices=[0]),  # Forrest Gump
        tool_call("finish"),
    ][min(turn, 2)]


def test_priced_run_and_the_cost_report(index, tmp_path):
    prices = PriceTable(default=Price(1.0, 2.0))
    summary = run(index, tmp_path / "ark", ScriptedChatModel(script), prices)
    # The scripted model reports 10 prompt tokens per message sent and 5 completion
    # tokens: 3 calls per agent over 2, 4 and 6 messages, 2 agents, 2 queries.
    prompt, completion = 2 * 2 * 10 * (2 + 4 + 6), 2 * 2 * 3 * 5
    cost = summary["cost"]
    assert (cost["llm_calls"], cost["prompt_tokens"], cost["completion_tokens"]) == (
        12,
        prompt,
        completion,
    )
    assert cost["usd"] == pytest.approx((prompt + 2 * completion) / 1e6)
    assert cost["tool_s"] > 0 and "llm_cache" not in summary

    cached = CachedChatModel(ScriptedChatModel(script), tmp_path / "cache")
    run(index, tmp_path / "cold", cached, prices)
    warm = run(index, tmp_path / "warm", cached, prices)
    assert warm["cost"]["cache_hits"] == 12 and warm["cost"]["usd"] == 0.0
    run(index, tmp_path / "bm25", None, prices, BM25Method(index))

    text = write_report([tmp_path / d for d in ("ark", "warm", "bm25")], tmp_path / "report")
    assert "## Cost per query" in text
    with (tmp_path / "report" / "cost.csv").open() as f:
        rows = {r["run"].rsplit("/", 1)[-1]: r for r in csv.DictReader(f)}
    assert float(rows["ark"]["llm_calls/q"]) == 6.0
    assert float(rows["ark"]["usd/q"]) == pytest.approx(cost["usd"] / 2, rel=1e-3)
    assert float(rows["warm"]["cache_hits/q"]) == 6.0 and float(rows["warm"]["usd/q"]) == 0
    assert float(rows["bm25"]["llm_calls/q"]) == 0
    assert (tmp_path / "report" / "quality_vs_cost.png").stat().st_size > 1000


def test_no_cost_section_without_model_calls(index, tmp_path):
    run(index, tmp_path / "bm25", None, None, BM25Method(index))
    text = write_report([tmp_path / "bm25"], tmp_path / "report")
    assert "Cost per query" not in text and not (tmp_path / "report" / "cost.csv").exists()
