"""``writer="conversation"``: the answer as one more turn of the one agent's
conversation, the tools it offered shown again, citations among the nodes its tool
results showed; else, or where that gives no answer, the reading in steps."""

from __future__ import annotations

import asyncio

import pytest

from _doubles import ScriptedChatModel, json_reply, tool_call
from _passages_fixture import build_document_index
from ark import Retriever
from ark.answer import (
    ANSWER_SCHEMA,
    WRITERS,
    answer_question,
    answer_retrieval,
    trajectory_conversation,
)
from ark.index import Index
from ark.llm import LLMError
from ark.strategies import AgentConfig
from ark.strategies.ark import Agent

P_LENA, P_PORT, P_TOMAS, P_HARBOUR, P_SEALS = range(5)
LENA, PORT, TOMAS = 5, 6, 9
AGENT_CALLS = [
    tool_call("search_in_graph", query="Lena Marsh painter"),
    tool_call("search_in_neighborhood", node_index=LENA),
    tool_call("search_in_neighborhood", node_index=PORT),
    tool_call("add_to_answer", node_indices=[TOMAS]),
    tool_call("finish"),
]


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_document_index(tmp_path_factory.mktemp("docs") / "idx")


def test_the_answer_is_one_more_turn_of_the_agents_conversation(docs):
    reply = {"answerable": True, "answer": "Tomas Reed", "citations": [TOMAS, P_TOMAS, 4242]}
    model = ScriptedChatModel([*AGENT_CALLS, json_reply(reply)], per_call=True)
    retriever = Retriever(docs, model, n_agents=1, seed=0)
    answered = answer_question(retriever, "Who is the mayor?", writer="conversation")
    answer = answered.answer
    assert len(model.calls) == len(AGENT_CALLS) + 1  # one call, no plan, no lookups
    agent_last, asked = model.calls[-2], model.calls[-1]
    # The whole conversation as the agent's model read it, then one user turn.
    trajectory = answered.retrieval.trajectories[0]
    assert [m.to_dict() for m in asked[:-1]] == trajectory.messages
    assert asked[: len(agent_last)] == agent_last
    assert asked[-1].role == "user" and "Who is the mayor?" in asked[-1].content
    # The tools the agent offered, shown again; the reply is the answer's JSON.
    assert model.tools[-1] == model.tools[-2] and model.tools[-1]
    assert model.schemas[-1] == ANSWER_SCHEMA and model.temperatures[-1] == 0.0
    assert answer.answerable and answer.text == "Tomas Reed"
    assert answer.citations == [TOMAS, P_TOMAS] and answer.dropped_citations == 1  # not shown
    assert answer.steps == [{"conversation": "answered"}]
    assert set(answer.nodes) >= {LENA, PORT, TOMAS, P_TOMAS}  # what the tool results showed


def test_the_rebuilt_tools_are_the_ones_the_agent_offered(docs):
    model = ScriptedChatModel(AGENT_CALLS)
    config = AgentConfig(max_steps=6, seed=0)
    agent = Agent(docs, model, config)
    trajectory = asyncio.run(agent.run("Who is the mayor?"))
    conversation = trajectory_conversation(trajectory, docs)
    assert conversation is not None
    assert list(conversation.tools) == agent.specs
    assert [m.to_dict() for m in conversation.messages] == trajectory.messages


@pytest.mark.parametrize(
    ("last", "why"),
    [
        (
            json_reply({"answerable": False, "answer": "", "citations": []}),
            "the model said the evidence does not answer the question",
        ),
        (json_reply({"answer": "Tomas Reed"}), "bad reply: answerable is not true or false"),
        (LLMError("the server went away"), "the model failed: the server went away"),
    ],
)
def test_where_the_conversation_gives_no_answer_the_steps_answer(docs, last, why):
    one = json_reply({"answerable": True, "answer": "Tomas Reed", "citations": [P_TOMAS]})
    plan = json_reply({"lookups": ["Who is the mayor?"]})  # one lookup: the one call
    model = ScriptedChatModel([*AGENT_CALLS, last, plan, one], per_call=True)
    retriever = Retriever(docs, model, n_agents=1, seed=0)
    answer = answer_question(retriever, "Who is the mayor?", writer="conversation").answer
    assert answer.text == "Tomas Reed" and answer.citations == [P_TOMAS]
    assert answer.steps[0] == {"conversation": why}
    assert answer.steps[-1] == {"fallback": "one lookup"}
    assert len(model.calls) == len(AGENT_CALLS) + 3


def test_several_agents_have_no_one_conversation(docs):
    one = json_reply({"answerable": True, "answer": "Tomas Reed", "citations": [P_TOMAS]})

    def script(messages):
        if messages[0].content.startswith("You split"):
            return json_reply({"lookups": ["Who is the mayor?"]})
        if messages[0].role == "system" and "JSON" in messages[0].content:
            return one
        turn = sum(1 for m in messages if m.role == "assistant")
        return AGENT_CALLS[turn] if turn < len(AGENT_CALLS) else tool_call("finish")

    model = ScriptedChatModel(script)
    retriever = Retriever(docs, model, n_agents=2, seed=0)
    result = retriever.retrieve("Who is the mayor?")
    answered = asyncio.run(answer_retrieval(model, docs, result, writer="conversation"))
    assert answered.answer.text == "Tomas Reed"
    assert answered.answer.steps == [{"fallback": "one lookup"}]  # the steps, at once
    asked_with_tools = [t for s, t in zip(model.schemas, model.tools, strict=True) if s and t]
    assert asked_with_tools == []  # no answer turn at the end of a conversation


def test_the_writer_has_a_name():
    assert "conversation" in WRITERS
