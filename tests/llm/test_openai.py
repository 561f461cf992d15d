"""The OpenAI-compatible backend against a fake server on 127.0.0.1."""

import asyncio

import pytest

pytest.importorskip("openai", reason="the [openai] extra is not installed")

from ark.llm import LLMError, Message, ToolCall, make_chat_model
from ark.probes import OpenAIChatModel
from fake_openai import FakeOpenAIServer, chat_reply, function_call

TOOLS = [
    {"type": "function", "function": {"name": "search_in_graph", "parameters": {"type": "object"}}}
]
HISTORY = [
    Message(role="system", content="sys"),
    Message(role="user", content="q"),
    Message(
        role="assistant",
        tool_calls=(ToolCall("c0", "search_in_graph", {"query": "x"}, '{"query": "x"}'),),
    ),
    Message(role="tool", content="result", tool_call_id="c0", name="search_in_graph"),
]


def complete(model, messages=HISTORY):
    return asyncio.run(model.complete(messages, TOOLS, temperature=0.3, seed=7, max_tokens=99))


def test_tool_call_round_trip(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    reply = chat_reply(
        tool_calls=[function_call("search_in_graph", '{"query": "Tom Hanks", "k": 3}')]
    )
    with FakeOpenAIServer([(200, reply)]) as server:
        model = OpenAIChatModel("fake-model", base_url=server.base_url)
        out = complete(model)
    call = out.message.tool_calls[0]
    assert call.name == "search_in_graph" and call.arguments == {"query": "Tom Hanks", "k": 3}
    assert out.usage.prompt_tokens == 42 and out.usage.completion_tokens == 7
    sent = server.requests[0]
    assert sent["model"] == "fake-model" and sent["temperature"] == 0.3 and sent["seed"] == 7
    assert sent["tools"] == TOOLS and sent["max_tokens"] == 99
    assistant = sent["messages"][2]
    assert assistant["content"] == ""  # never null
    assert assistant["tool_calls"][0]["function"]["arguments"] == '{"query": "x"}'
    assert sent["messages"][3] == {"role": "tool", "content": "result", "tool_call_id": "c0"}


def test_invalid_json_arguments_are_kept_raw():
    reply = chat_reply(tool_calls=[function_call("search_in_graph", '{"query": "x"')])
    with FakeOpenAIServer([(200, reply)]) as server:
        out = complete(OpenAIChatModel("m", base_url=server.base_url, api_key="k"))
    call = out.message.tool_calls[0]
    assert call.arguments is None and call.raw_arguments == '{"query": "x"'


def test_retries_on_5xx_and_429_then_succeeds():
    replies = [(500, {"error": {"message": "boom"}}), (429, {"error": {"message": "slow down"}})]
    replies.append((200, chat_reply("done")))
    with FakeOpenAIServer(replies) as server:
        model = OpenAIChatModel("m", base_url=server.base_url, api_key="k", backoff=0.01)
        out = complete(model)
    assert out.message.content == "done" and len(server.requests) == 3


def test_gives_up_with_llm_error():
    with FakeOpenAIServer([(503, {})] * 3) as server:
        model = OpenAIChatModel(
            "m", base_url=server.base_url, api_key="k", max_retries=2, backoff=0.01
        )
        with pytest.raises(LLMError, match="after 3 attempts"):
            complete(model)


def test_client_errors_are_not_retried():
    with FakeOpenAIServer([(400, {"error": {"message": "bad tools"}})]) as server:
        model = OpenAIChatModel("m", base_url=server.base_url, api_key="k", backoff=0.01)
        with pytest.raises(LLMError, match="refused"):
            complete(model)
    assert len(server.requests) == 1


def test_unreachable_server_is_an_llm_error():
    model = OpenAIChatModel(
        "m", base_url="http://127.0.0.1:9/v1", api_key="k", max_retries=1, backoff=0.01
    )
    with pytest.raises(LLMError, match="failed after 2 attempts"):
        complete(model)


def test_factory_picks_the_backend(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ARK_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    model = make_chat_model("qwen", base_url="http://127.0.0.1:8080/v1")
    assert isinstance(model, OpenAIChatModel) and model.name == "qwen"
    with pytest.raises(LLMError, match="model name"):
        make_chat_model(base_url="http://127.0.0.1:8080/v1")
    with pytest.raises(LLMError, match="OPENAI_API_KEY"):
        OpenAIChatModel("gpt-x")
