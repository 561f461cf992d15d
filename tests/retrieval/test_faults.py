"""Faults inside a retrieval: odd numbers from a model, a backend that raises
something unexpected, a strategy that crashes — no agent's work is lost."""

import pytest

from _doubles import ScriptedChatModel, tool_call
from _helpers import node
from ark.probes import as_int
from ark.retrieval import Retriever
from ark.session import ToolSession
from ark.trajectory import Trajectory


@pytest.mark.parametrize("value", ["²", "--5", "-+5", "١٢", "1e999", "٣", " ", "", "9" * 5000])
def test_as_int_refuses_what_int_refuses_or_reads_differently(value):
    assert as_int(value) is None


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan"), 0.5, True])
def test_as_int_of_odd_numbers(value):
    assert as_int(value) is None


def test_as_int_accepts_quoted_numbers():
    assert [as_int(v) for v in ("12", " -3 ", "+4", 5.0, 7)] == [12, -3, 4, 5, 7]


@pytest.mark.parametrize("value", ["²", "--5", "٣"])
@pytest.mark.parametrize("arg", ["node_index", "k"])
def test_odd_digits_in_a_call_are_an_observation(movie_index, value, arg):
    session = ToolSession(movie_index)
    args = {"node_index": 0, arg: value}
    outcome = session.call("search_in_neighborhood", args)
    assert not outcome.ok and outcome.code in ("bad_argument", "bad_k")
    outcome = session.call("add_to_answer", {"node_indices": [value]})
    assert not outcome.ok and outcome.code == "bad_argument"


def test_an_unexpected_backend_exception_keeps_the_trajectory(movie_index):
    drama = node(movie_index, "Drama")
    replies = [
        tool_call("search_in_graph", query="Drama"),
        tool_call("add_to_answer", node_indices=[drama]),
        RecursionError("maximum recursion depth exceeded"),
    ]
    result = Retriever(movie_index, ScriptedChatModel(replies), n_agents=1).retrieve("q")
    (t,) = result.trajectories
    assert t.stop_reason == "error" and "RecursionError" in t.error
    assert t.answer == [drama] and len(t.steps) == 2


def test_one_crashing_agent_does_not_lose_the_others(movie_index):
    drama = node(movie_index, "Drama")
    plan = [
        tool_call("search_in_graph", query="Drama"),
        tool_call("add_to_answer", node_indices=[drama]),
        tool_call("finish"),
    ]

    class Crashes:
        async def run(self, question, question_id=None) -> Trajectory:
            raise RuntimeError("strategy bug")

    from ark.strategies import Agent

    def factory(ctx):
        return Crashes() if ctx.agent_number == 1 else Agent.from_context(ctx)

    retriever = Retriever(movie_index, ScriptedChatModel(plan), strategy=factory, n_agents=3)
    result = retriever.retrieve("genre?")
    stops = [t.stop_reason for t in result.trajectories]
    assert stops == ["finish", "error", "finish"]
    assert "strategy bug" in result.trajectories[1].error
    assert [r.index for r in result.ranking] == [drama] and result.ranking[0].votes == 2
    assert not result.failed


def test_arguments_nested_hundreds_deep_become_an_observation(movie_index, tmp_path):
    from _doubles import tool_call
    from ark.trajectory import write_trajectories

    nested = "[" * 600 + "]" * 600  # parses (under the parser's depth), too deep to copy
    replies = [tool_call("search_in_graph", raw=f'{{"query": {nested}}}'), tool_call("finish")]
    model = ScriptedChatModel(replies)
    result = Retriever(movie_index, model, n_agents=1, max_steps=3).retrieve("q")
    (t,) = result.trajectories
    assert t.stop_reason in ("finish", "max_steps"), t.error
    first = t.steps[0].tool_calls[0]
    assert first.arguments is None and not first.ok and first.error_code == "bad_argument"
    write_trajectories(tmp_path / "t.jsonl", result.trajectories)  # and it can be written
    session = ToolSession(movie_index)  # a direct caller (MCP) gets the same answer
    deep = {"query": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["x"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}
    outcome = session.call("search_in_graph", deep)
    assert outcome.code == "bad_argument" and "levels deep" in outcome.observation
