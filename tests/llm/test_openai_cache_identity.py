"""The response cache knows an OpenAI-compatible server's model by what the server
says about it (``/v1/models``, ``system_fingerprint``), not only by name and URL."""

from __future__ import annotations

import asyncio

import pytest

from ark.llm import CachedChatModel, Message

pytest.importorskip("openai", reason="the [openai] extra is not installed")
from ark.probes import OpenAIChatModel
from fake_openai import FakeOpenAIServer, chat_reply

MESSAGES = [Message(role="user", content="who directed Forrest Gump?")]


def entry(size, created=0):
    """A llama.cpp-style /v1/models entry; ``created`` is the time of the request."""
    return {"id": "m", "object": "model", "created": created, "owned_by": "llamacpp",
            "meta": {"n_params": 494032768, "size": size}}  # fmt: skip


def ask(server, cache_dir, seed=0):
    llm = CachedChatModel(OpenAIChatModel("m", base_url=server.base_url), cache_dir)
    return asyncio.run(llm.complete(MESSAGES, [], temperature=0.0, seed=seed)), llm


def reply(fingerprint):
    def respond(request):
        body = chat_reply(f"answer under {fingerprint}")
        if fingerprint:
            body["system_fingerprint"] = fingerprint
        return 200, body

    return respond


def test_a_new_checkpoint_the_server_describes_otherwise_is_not_served_stale(tmp_path):
    with FakeOpenAIServer(respond=reply(None), models=[entry(100, created=1)]) as server:
        _, llm = ask(server, tmp_path)
        assert llm.cache_identity()["server"] == {
            "id": "m", "object": "model", "owned_by": "llamacpp",
            "meta": {"n_params": 494032768, "size": 100},
        }  # fmt: skip
        server.models = [entry(100, created=2)]  # the same weights, asked at another time
        again, _ = ask(server, tmp_path)
        assert again.cached and len(server.requests) == 1
        server.models = [entry(200)]  # a new checkpoint under the same name
        fresh, _ = ask(server, tmp_path)
        assert not fresh.cached and len(server.requests) == 2


def test_a_server_without_a_model_list_is_known_by_name_and_url(tmp_path):
    with FakeOpenAIServer(respond=reply(None)) as server:
        _, llm = ask(server, tmp_path)
        assert llm.cache_identity()["server"] is None and server.model_requests == 1
        assert ask(server, tmp_path)[0].cached


def test_replies_of_an_older_system_fingerprint_are_asked_again(tmp_path):
    with FakeOpenAIServer(respond=reply("fp_a")) as server:
        stored, _ = ask(server, tmp_path, seed=1)
        assert stored.system_fingerprint == "fp_a"
        server.respond = reply("fp_b")  # the provider changed its configuration
        first, llm = ask(server, tmp_path, seed=1)
        assert first.cached  # nothing live seen yet in this process: the limit
        new = asyncio.run(llm.complete(MESSAGES, [], temperature=0.0, seed=2))
        assert not new.cached and llm.fingerprint == "fp_b"
        stale = asyncio.run(llm.complete(MESSAGES, [], temperature=0.0, seed=1))
        assert not stale.cached and stale.message.content == "answer under fp_b"
        assert len(server.requests) == 3
        replaced, _ = ask(server, tmp_path, seed=1)  # the stale reply was replaced
        assert replaced.cached and replaced.message.content == "answer under fp_b"
        assert replaced.system_fingerprint == "fp_b"
