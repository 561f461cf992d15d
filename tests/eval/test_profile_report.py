"""The per-query time budget: step profiles in trajectories, summed in each record of
``results.jsonl``, kept through the run store, and shown by ``ark report``."""

import asyncio
import csv
from dataclasses import replace

import pytest

from _doubles import ScriptedChatModel, tool_call
from ark.datasets import Query
from ark.eval import BM25Method, RetrieverMethod, RunStore, read_records, run_queries
from ark.eval.report import write_report
from ark.index import build_index
from ark.llm import CallProfile
from ark.profile import profile_line, run_profile
from ark.retrieval import Retriever
from ark.trajectory import read_trajectories


class ProfilingModel:
    """The scripted model with a local backend's profile: 10 new prompt tokens per
    call, the rest reused; 0.5 s prompt, 0.25 s decoding, 0.05 s with saved state."""

    def __init__(self, script):
        self.inner = ScriptedChatModel(script)
        self.name = self.inner.name

    async def complete(self, messages, tools, **kw):
        c = await self.inner.complete(messages, tools, **kw)
        sent = c.usage.prompt_tokens
        profile = CallProfile(sent, 10, sent - 10, 5, 0, 0.5, 0.25, 0.05, 0.8, 0.1)
        return replace(c, latency_s=0.8, profile=profile)


def script(messages):
    turn = sum(1 for m in messages if m.role == "assistant")
    return [
        tool_call("search_in_graph", query="Forrest Gump"),
        tool_call("add_to_answer", node_indices=[0]),
        tool_call("finish"),
    ][min(turn, 2)]


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    root = tmp_path_factory.mktemp("kb")
    (root / "kb.txt").write_text("Forrest Gump|directed_by|Robert Zemeckis\n")
    return build_index(root / "kb.txt", root / "idx")


def run(index, out, llm, method=None, resume=False):
    gump = index.graph.names.to_pylist().index("Forrest Gump")
    queries = [Query("q1", "Forrest Gump", frozenset({gump})), Query("q2", "Gump", frozenset())]
    method = method or RetrieverMethod(Retriever(index, llm, n_agents=2, seed=0))
    config = {"method": method.name, "dataset": "test", "agents": 2, "max_steps": 20}
    return asyncio.run(run_queries(queries, method, RunStore(out), config, resume=resume))


def test_profiles_add_up_per_query_and_survive_the_run_store(index, tmp_path):
    run(index, tmp_path / "ark", ProfilingModel(script))
    records = read_records(tmp_path / "ark")
    assert len(records) == 2
    for r in records:
        p = r["profile"]
        # 2 agents x 3 steps; 10, 20 and 30 prompt tokens per agent (10 per message).
        assert p["steps"] == p["profiled_steps"] == 6
        assert p["prompt_tokens"] == r["prompt_tokens"] == 2 * (20 + 40 + 60)
        assert p["evaluated_tokens"] + p["reused_tokens"] == p["prompt_tokens"]
        assert p["evaluated_tokens"] == 60 and p["generated_tokens"] == 30
        assert (p["prompt_s"], p["decode_s"], p["state_s"]) == pytest.approx((3.0, 1.5, 0.3))
        assert p["llm_s"] == pytest.approx(4.8) and p["unsplit_s"] == pytest.approx(0.0)
        assert p["tool_s"] == pytest.approx(r["cost"]["tool_s"], abs=1e-4) and p["tool_s"] > 0
    steps = [s for t in read_trajectories(tmp_path / "ark" / "trajectories.jsonl") for s in t.steps]
    assert steps and all(CallProfile.from_dict(s.profile).prompt_s == 0.5 for s in steps)
    # Resuming a finished run keeps the recorded profiles as they were.
    run(index, tmp_path / "ark", ProfilingModel(script), resume=True)
    assert read_records(tmp_path / "ark") == records
    total = run_profile(records)
    assert total["per_step"]["prompt_s"] == pytest.approx(0.5)
    assert total["reused_share"] == pytest.approx((240 - 60) / 240, abs=1e-4)
    assert "0.25 s" not in profile_line(records[0]["profile"])  # totals, not per step
    assert profile_line(records[0]["profile"]).startswith("3.0 s evaluating the prompt")


def test_report_has_a_time_section_for_profiled_runs_only(index, tmp_path):
    run(index, tmp_path / "ark", ProfilingModel(script))
    run(index, tmp_path / "plain", ScriptedChatModel(script))  # no profiles
    run(index, tmp_path / "bm25", None, BM25Method(index))
    text = write_report(
        [tmp_path / d for d in ("ark", "plain", "bm25")], tmp_path / "report", plots=False
    )
    assert "## Time per step (profile)" in text
    with (tmp_path / "report" / "profile.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [r["run"].rsplit("/", 1)[-1] for r in rows] == ["ark"]
    row = rows[0]
    assert float(row["steps/q"]) == 6 and float(row["prompt_s/step"]) == 0.5
    assert float(row["decode_s/step"]) == 0.25 and float(row["unsplit_s/step"]) == 0
    assert float(row["evaluated/step"]) == 10 and float(row["reused%"]) == 75.0
    bm25 = write_report([tmp_path / "bm25"], tmp_path / "r2", plots=False)
    assert "Time per step" not in bm25 and not (tmp_path / "r2" / "profile.csv").exists()


def test_the_profile_line_counts_the_drafts_kept():
    """Prompt-lookup decoding's drafts show beside the generated tokens, and only when
    a call drafted (a token-by-token run reads as before)."""
    from ark.profile import _zero

    p = {**_zero(), "generated_tokens": 30, "draft_tokens": 40, "accepted_tokens": 18}
    assert "(30 tokens, 18 of 40 drafted kept)" in profile_line(p)
    p.update(draft_tokens=0, accepted_tokens=0)
    assert "(30 tokens)" in profile_line(p)
