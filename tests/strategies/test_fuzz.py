"""Fuzzing the tool layer, the tool session and the agent with thousands of
model-shaped calls: nothing raises, every observation is bounded and writable, the
answer holds only seen nodes, and trajectories always serialise."""

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _doubles import ScriptedChatModel
from _fuzz import model_calls, odd_text
from ark.llm import Message, ToolCall
from ark.probes import MAX_OBSERVATION_CHARS, safe_dumps
from ark.session import ToolSession
from ark.strategies import Agent, AgentConfig
from ark.tools import ERROR_CODES, GraphTools, SearchResult, ToolError

FUZZ = settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)


def writable(text: str) -> bool:
    safe_dumps(text).encode("utf-8")  # raises if it cannot be written
    return True


@pytest.mark.slow
@FUZZ
@given(calls=st.lists(model_calls(), min_size=1, max_size=6))
def test_the_tool_layer_never_raises(movie_index, calls):
    tools = GraphTools(movie_index)
    for name, args, _ in calls:
        result = tools.call(name, args)
        assert isinstance(result, SearchResult | ToolError)
        text = result.render()
        assert len(text) < 50_000 and writable(text)
        if isinstance(result, ToolError):
            assert result.code in ERROR_CODES


@pytest.mark.slow
@FUZZ
@given(calls=st.lists(model_calls(), min_size=1, max_size=12))
def test_the_tool_session_never_raises(movie_index, calls):
    session = ToolSession(movie_index)
    n = movie_index.graph.n_nodes
    for step, (name, args, raw) in enumerate(calls):
        session.step = step
        outcome = session.call(name, args, raw)
        assert isinstance(outcome.observation, str) and outcome.observation
        assert len(outcome.observation) <= MAX_OBSERVATION_CHARS + 200
        assert writable(outcome.observation)
        assert outcome.ok is (outcome.code is None)
        assert outcome.code is None or outcome.code in ERROR_CODES
        assert all(0 <= node < n for node in outcome.nodes)
        assert set(session.answer) <= session.seen
        assert len(session.answer) == len(set(session.answer))


def reply_from(data, calls):
    content = data.draw(odd_text)
    tool_calls = tuple(
        ToolCall(f"call_{i}", name, args, raw) for i, (name, args, raw) in enumerate(calls)
    )
    return Message(role="assistant", content=content, tool_calls=tool_calls)


@pytest.mark.slow
@settings(FUZZ, max_examples=120)
@given(data=st.data(), agents=st.integers(min_value=1, max_value=3))
def test_the_agent_never_loses_a_trajectory(movie_index, data, agents):
    replies = [reply_from(data, data.draw(st.lists(model_calls(), max_size=3))) for _ in range(5)]
    model = ScriptedChatModel(replies)
    agent_runs = [
        Agent(movie_index, model, AgentConfig(max_steps=4), agent_number=i).run("q", "q1")
        for i in range(agents)
    ]

    async def run_all():
        return await asyncio.gather(*agent_runs)

    for t in asyncio.run(run_all()):
        assert t.stop_reason in ("finish", "max_steps")
        assert set(t.answer) <= set(range(movie_index.graph.n_nodes))
        safe_dumps(t.to_dict()).encode("utf-8")
