"""A prompt the local model's context cannot hold is refused before decoding, with its
cause named (a fake llama.cpp: tokens are bytes, no model loaded)."""

import asyncio

import pytest

import _fake_llama
from _llm_fixture import SEARCH_TOOL
from ark.errors import ArkError
from ark.llm import Message


def _local(monkeypatch, tmp_path, n_ctx):
    _fake_llama.install(monkeypatch)
    from ark.llm.local import LocalChatModel
    from ark.probes import local_model as _model

    # The build check tries the model file in llama.cpp; the fake file is no model.
    monkeypatch.setattr(_model, "warn_if_slow_build", lambda path=None: None)

    return LocalChatModel(_fake_llama.fake_model_file(tmp_path), kv_cache=False, n_ctx=n_ctx)


def _ask(llm, messages, max_tokens=200):
    return asyncio.run(llm.complete(messages, SEARCH_TOOL, temperature=0.0, max_tokens=max_tokens))


def test_a_system_prompt_larger_than_the_context_names_the_schema_and_n_ctx(monkeypatch, tmp_path):
    llm = _local(monkeypatch, tmp_path, n_ctx=2048)
    listing = "\n".join(f"- relation_{i}: entity -> entity (1)" for i in range(100))
    system = Message(role="system", content="Relations:\n" + listing)
    with pytest.raises(ArkError) as caught:
        _ask(llm, [system, Message(role="user", content="Who directed Big?")])
    message = str(caught.value)
    assert "system prompt and tool specs" in message and "schema" in message
    assert "n_ctx=2,048" in message
    assert llm._llm.evaluated == 0  # refused before llama.cpp evaluated anything


def test_a_conversation_past_the_context_is_told_apart_from_the_system_prompt(
    monkeypatch, tmp_path
):
    llm = _local(monkeypatch, tmp_path, n_ctx=2048)
    system = Message(role="system", content="You find entities in a graph.")
    with pytest.raises(ArkError) as caught:
        _ask(llm, [system, Message(role="user", content="observation " * 300)])
    message = str(caught.value)
    assert "conversation" in message and "n_ctx=2,048" in message
    assert llm._llm.evaluated == 0


def test_a_prompt_that_fits_is_answered_as_before(monkeypatch, tmp_path):
    llm = _local(monkeypatch, tmp_path, n_ctx=2048)
    system = Message(role="system", content="You find entities in a graph.")
    # Fits, though not with the whole reply budget: decoding goes ahead, as it did.
    out = _ask(llm, [system, Message(role="user", content="x " * 600)], max_tokens=1000)
    assert out.message.tool_calls
