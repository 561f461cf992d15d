"""The MCP ``answer`` tool, driven by the SDK's in-process client: an answer in words
from the nodes a client passes, or after ARK's own retrieval; bad calls are tool
errors; a model that fails is an unanswered answer, never a crash."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("mcp", reason="the [serve] extra is not installed")

from mcp import Client

from _doubles import LLMError, ScriptedChatModel, json_reply, tool_call
from _passages_fixture import build_document_index
from ark.index import Index
from ark.probes import AnswerService
from ark.serve.mcp_server import AnswerSettings, make_server

P_LENA, P_PORT, P_TOMAS, P_HARBOUR, P_SEALS = range(5)
LENA, PORT, TOMAS = 5, 6, 9
QUESTION = "Who is the mayor of the town where Lena Marsh was born?"


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_document_index(tmp_path_factory.mktemp("docs") / "idx")


def call(server, *calls):  # type: ignore[no-untyped-def]
    async def go():  # type: ignore[no-untyped-def]
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            return tools, [await client.call_tool("answer", args) for args in calls]

    return asyncio.run(go())


def test_answer_from_the_nodes_a_client_passes(docs):
    model = ScriptedChatModel(
        [
            json_reply({"lookups": [QUESTION]}),  # read in steps: one lookup, the one call
            json_reply({"answerable": True, "answer": "Tomas Reed", "citations": [P_PORT, 77]}),
        ],
        per_call=True,
    )
    tools, (result,) = call(
        make_server(docs, llm=model), {"question": QUESTION, "node_indices": [P_LENA, P_PORT]}
    )
    assert tools["answer"].annotations.read_only_hint is True
    assert tools["answer"].input_schema["required"] == ["question"]
    assert result.is_error is False
    answer = result.structured_content["answer"]
    assert answer["text"] == "Tomas Reed"
    assert answer["citations"] == [P_PORT] and answer["dropped_citations"] == 1
    assert answer["nodes"] == [P_LENA, P_PORT]
    assert result.content[0].text.splitlines() == [
        "Answer: Tomas Reed",
        f"- cites [{P_PORT}] Port Avel (passage)",
    ]
    assert answer["steps"][-1] == {"fallback": "one lookup"}
    # The model read those nodes' text and nothing else of the graph.
    prompt = model.calls[1][-1].content
    assert "Its mayor is Tomas Reed." in prompt and "Harbour seals" not in prompt


def test_answer_retrieves_first_when_given_no_nodes(docs):
    model = ScriptedChatModel(
        [
            tool_call("search_in_graph", query="Lena Marsh painter"),
            tool_call("search_in_neighborhood", node_index=LENA),
            tool_call("search_in_neighborhood", node_index=PORT),
            tool_call("add_to_answer", node_indices=[TOMAS]),
            tool_call("finish"),
            json_reply({"lookups": [QUESTION]}),
            json_reply({"answerable": True, "answer": "Tomas Reed", "citations": [P_TOMAS]}),
        ],
        per_call=True,
    )
    server = make_server(docs, llm=model, answer_settings=AnswerSettings(strategy="ark"))
    _, (result,) = call(server, {"question": QUESTION})
    data = result.structured_content
    assert [r["index"] for r in data["ranking"]] == [TOMAS], data
    # the chain's passages, then those the agent was only shown
    supporting = [p["index"] for p in data["passages"] if p["via"] != "seen"]
    assert supporting == [P_LENA, P_PORT, P_TOMAS]
    assert data["answer"]["citations"] == [P_TOMAS]
    assert data["answer"]["evidence"][str(P_TOMAS)][0]["anchor"] == LENA
    assert "1 evidence path(s)" in result.content[0].text


def test_bad_answer_calls_are_tool_errors_with_the_code(docs):
    model = ScriptedChatModel([])
    _, results = call(
        make_server(docs, llm=model),
        {"question": "  "},
        {"question": QUESTION, "node_indices": [10**6]},
        {"question": QUESTION, "node_indices": ["x"]},
        {"question": QUESTION, "node_indices": []},
        {"question": QUESTION, "k": 3},
    )
    codes = [r.structured_content["error"]["code"] for r in results]
    assert all(r.is_error for r in results)
    assert codes == ["empty_query", "unknown_node", "bad_argument", "bad_argument", "bad_argument"]
    assert model.calls == []  # no model call for a bad call


def test_a_model_that_fails_is_an_unanswered_answer(docs):
    failing = ScriptedChatModel([LLMError("llama_decode returned 1")])
    _, (result,) = call(make_server(docs, llm=failing), {"question": QUESTION, "node_indices": [0]})
    assert result.is_error is False
    assert result.structured_content["answer"]["status"] == "model_error"
    assert result.content[0].text.startswith("No answer: the model failed")

    def cannot_load():  # type: ignore[no-untyped-def]
        raise LLMError("no model file")

    text, data = AnswerService(make_model=cannot_load).answer(
        docs, {"question": QUESTION, "node_indices": [0]}
    )
    assert data["answer"]["status"] == "model_error"
    assert "could not be loaded: no model file" in text
