"""``replay_trajectories.py``: a stored ``ark-guided`` run replayed through today's
strategy with its model replies handed back; every message must read the same, and a
stored observation that today's hints would not write is found at its message."""

from __future__ import annotations

import asyncio
import json

import pytest

from _doubles import ScriptedChatModel, tool_call
from _helpers import benchmark, node
from ark.strategies import AgentConfig, GuidedAgent

QUESTION = "Which films did Tom Hanks star in?"


@pytest.fixture(scope="module")
def bench():
    return benchmark("replay_trajectories")


def _stored_run(movie_index, tmp_path):  # type: ignore[no-untyped-def]
    """A run folder with one trajectory of four model steps (no plan: no threshold)."""
    hanks, forrest = node(movie_index, "Tom Hanks"), node(movie_index, "Forrest Gump")
    model = ScriptedChatModel(
        [
            tool_call("search_in_graph", query="Tom Hanks"),
            tool_call("search_in_neighborhood", node_index=hanks, query="films"),
            tool_call("add_to_answer", node_indices=[forrest]),
            tool_call("finish"),
        ]
    )
    agent = GuidedAgent(movie_index, model, AgentConfig(max_steps=6, seed=0))
    trajectory = asyncio.run(agent.run(QUESTION, "q1")).to_dict()
    assert sum(m["role"] == "tool" for m in trajectory["messages"]) == 4
    (tmp_path / "trajectories.jsonl").write_text(json.dumps(trajectory) + "\n")
    return trajectory


def test_a_run_replays_identical_through_the_same_strategy(bench, movie_index, tmp_path, capsys):
    _stored_run(movie_index, tmp_path)
    results = asyncio.run(
        bench.replay(movie_index, [json.loads((tmp_path / "trajectories.jsonl").read_text())], {})
    )
    assert [r["first_difference"] for r in results] == [None]
    assert results[0]["answer_same"]


def test_an_observation_the_hints_no_longer_write_is_found_at_its_message(
    bench, movie_index, tmp_path
):
    trajectory = _stored_run(movie_index, tmp_path)
    # The stored run read another hint after its neighborhood call than today's
    # strategy writes: the replay must stop at exactly that message.
    at = [i for i, m in enumerate(trajectory["messages"]) if m["role"] == "tool"][1]
    trajectory["messages"][at]["content"] += "\nHint: a line today's hints do not write."
    (tmp_path / "trajectories.jsonl").write_text(json.dumps(trajectory) + "\n")
    status = bench.main([str(tmp_path), "--index", str(movie_index.path)])
    assert status == 1
    results = asyncio.run(bench.replay(movie_index, [trajectory], {}))
    assert results[0]["first_difference"] == at
    assert "do not write" in results[0]["stored"]["content"]
    assert "do not write" not in results[0]["replayed"]["content"]


def test_trajectories_it_cannot_replay_are_left_out_and_said(bench):
    assert bench.skip_reason({"config": {"strategy": "ark", "options": {}}}) == "not ark-guided"
    assert bench.skip_reason({"config": {"agent": 1}}) == "not agent 0"
    guided = {"strategy": "ark-guided", "options": {"hints": True}}
    redrawn = {"config": guided, "steps": [{"redrawn": {"content": "search again"}}]}
    assert bench.skip_reason(redrawn) == "a redrawn reply"


def test_a_run_with_nothing_to_replay_is_not_a_pass(bench, movie_index, tmp_path):
    paper = {"query": QUESTION, "config": {"strategy": "ark", "options": {}}, "messages": []}
    (tmp_path / "trajectories.jsonl").write_text(json.dumps(paper) + "\n")
    assert bench.main([str(tmp_path), "--index", str(movie_index.path)]) == 2
