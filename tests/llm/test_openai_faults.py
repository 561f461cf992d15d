"""Fault injection over the OpenAI-compatible path: a local fake server sends what
real servers and proxies have been seen to send, and the backend either retries or
raises one clear LLMError — never anything else."""

import asyncio

import pytest

pytest.importorskip("openai", reason="the [openai] extra is not installed")

from ark.llm import LLMError, Message
from ark.probes import OpenAIChatModel
from fake_openai import DROP, FakeOpenAIServer, chat_reply, function_call, raw_reply

TOOLS = [
    {"type": "function", "function": {"name": "search_in_graph", "parameters": {"type": "object"}}}
]
GOOD = (200, chat_reply(tool_calls=[function_call("search_in_graph", '{"query": "x"}')]))
HTML = b"<html><body><h1>502 Bad Gateway</h1></body></html>"

BAD_REPLIES = {
    "message null": (200, raw_reply(None)),
    "no choices": (200, {**chat_reply(), "choices": []}),
    "choices null": (200, {**chat_reply(), "choices": None}),
    "html with status 200": (200, HTML, "text/html"),
    "html labelled json": (200, HTML),
    "truncated json": (200, b'{"id": "x", "choices": [{"message": {"role": "assis'),
    "empty body": (200, b""),
    "json array": (200, b"[1, 2, 3]"),
    "tool call without function": (200, raw_reply({"role": "assistant", "tool_calls": [{}]})),
    "content not text": (200, raw_reply({"role": "assistant", "content": {"a": 1}})),
    "dropped connection": (200, DROP),
    "500": (500, {"error": {"message": "boom"}}),
    "503 html": (503, HTML, "text/html"),
    "429": (429, {"error": {"message": "slow down"}}),
}


def complete(model):
    messages = [Message(role="user", content="q")]
    return asyncio.run(model.complete(messages, TOOLS, temperature=0.0))


def model_for(server, **kw):
    return OpenAIChatModel("m", base_url=server.base_url, backoff=0.0, timeout=5.0, **kw)


@pytest.mark.parametrize("fault", sorted(BAD_REPLIES))
def test_a_bad_reply_is_retried(fault):
    with FakeOpenAIServer([BAD_REPLIES[fault], GOOD]) as server:
        completion = complete(model_for(server, max_retries=2))
    assert completion.message.tool_calls[0].arguments == {"query": "x"}
    assert len(server.requests) == 2


@pytest.mark.parametrize("fault", sorted(BAD_REPLIES))
def test_bad_replies_to_the_end_give_one_llm_error(fault):
    with (
        FakeOpenAIServer([BAD_REPLIES[fault]] * 3) as server,
        pytest.raises(LLMError, match="failed after 3 attempts"),
    ):
        complete(model_for(server, max_retries=2))


def test_deeply_nested_arguments_become_unparsed_arguments_not_a_crash():
    deep = "[" * 50_000 + "]" * 50_000
    reply = chat_reply(tool_calls=[function_call("search_in_graph", f'{{"query": {deep}}}')])
    with FakeOpenAIServer([(200, reply)]) as server:
        completion = complete(model_for(server, max_retries=0))
    call = completion.message.tool_calls[0]
    assert call.arguments is None and call.raw_arguments.startswith('{"query": [[[')


def test_non_numeric_usage_is_not_trusted():
    reply = chat_reply(tool_calls=[function_call("search_in_graph", "{}")])
    reply["usage"] = {"prompt_tokens": "many", "completion_tokens": None}
    with FakeOpenAIServer([(200, reply)]) as server:
        completion = complete(model_for(server, max_retries=0))
    assert completion.usage.prompt_tokens == 0 and completion.usage.completion_tokens == 0


def test_an_evaluation_through_faults_loses_no_query(metaqa_index, tmp_path):
    import json

    from ark.datasets import Query
    from ark.eval import RetrieverMethod, RunStore, run_queries
    from ark.retrieval import Retriever

    zemeckis = metaqa_index.graph.names.to_pylist().index("Robert Zemeckis")
    plan = [
        ("search_in_graph", '{"query": "Robert Zemeckis"}'),
        ("add_to_answer", f'{{"node_indices": [{zemeckis}]}}'),
        ("finish", "{}"),
    ]
    faults = [BAD_REPLIES[name] for name in sorted(BAD_REPLIES)]
    replies = []
    for q in range(3):  # before every good reply, one fault of a different kind
        for step, (name, args) in enumerate(plan):
            replies.append(faults[(3 * q + step) % len(faults)])
            replies.append((200, chat_reply(tool_calls=[function_call(name, args)])))
    queries = [Query(f"q{i}", "who directed Forrest Gump", frozenset({zemeckis})) for i in range(3)]
    with FakeOpenAIServer(replies) as server:
        llm = model_for(server, max_retries=1)
        method = RetrieverMethod(Retriever(metaqa_index, llm, n_agents=1, max_steps=5))
        summary = asyncio.run(
            run_queries(queries, method, RunStore(tmp_path / "run"), {"method": "ark"})
        )
        assert len(server.requests) == len(replies)
    assert summary["failed"] == 0 and summary["metrics"]["hit@1"] == 100.0
    lines = (tmp_path / "run" / "trajectories.jsonl").read_text().splitlines()
    assert [json.loads(x)["stop_reason"] for x in lines] == ["finish"] * 3


# -- issue 42, item 10: Retry-After and a timeout that bounds the whole attempt -------

import time  # noqa: E402

from fake_openai import Drip  # noqa: E402


@pytest.mark.parametrize(
    ("headers", "at_least"),
    [({"Retry-After": "1"}, 1.0), ({"retry-after-ms": "600"}, 0.6)],
    ids=["retry-after", "retry-after-ms"],
)
@pytest.mark.slow
def test_the_server_s_retry_after_is_honoured(headers, at_least):
    limited = (429, {"error": {"message": "slow down"}}, "application/json", headers)
    with FakeOpenAIServer([limited, GOOD]) as server:
        started = time.perf_counter()
        completion = complete(model_for(server, max_retries=1))
        waited = time.perf_counter() - started
    assert completion.message.tool_calls[0].name == "search_in_graph"
    assert waited >= at_least  # backoff is 0 here: only the header can make it wait


def test_a_huge_retry_after_is_capped(monkeypatch):
    from ark.probes import llm_openai as backend

    monkeypatch.setattr(backend, "MAX_RETRY_AFTER_S", 0.2)
    limited = (503, {"error": {"message": "busy"}}, "application/json", {"Retry-After": "86400"})
    with FakeOpenAIServer([limited, GOOD]) as server:
        started = time.perf_counter()
        complete(model_for(server, max_retries=1))
        assert time.perf_counter() - started < 5


@pytest.mark.slow
def test_a_server_dripping_its_body_is_cut_at_the_timeout():
    body = Drip(chat_reply("a long answer " * 20), every=0.4, chunk=8)  # ~15 s in all
    with FakeOpenAIServer([(200, body)]) as server:
        model = OpenAIChatModel("m", base_url=server.base_url, backoff=0.0, timeout=2.0)
        model.max_retries = 0
        started = time.perf_counter()
        with pytest.raises(LLMError, match="within 2 s"):
            complete(model)
        assert time.perf_counter() - started < 4
