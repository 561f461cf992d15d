"""Each backend's call profile: tokens sent / evaluated / reused / generated and the
seconds in prompt evaluation and decoding — with a fake llama.cpp, no model loaded."""

import asyncio
from types import SimpleNamespace

import pytest

import _fake_llama
from _llm_fixture import SEARCH_TOOL
from ark.llm import CallProfile, Message

SYSTEM = Message(role="system", content="You find entities in a movie graph. " * 8)


def _local(monkeypatch, tmp_path, states=False):
    _fake_llama.install(monkeypatch)
    from ark.llm.local import LocalChatModel, LocalStatesChatModel

    cls = LocalStatesChatModel if states else LocalChatModel
    return cls(_fake_llama.fake_model_file(tmp_path), kv_cache=False)


def _ask(llm, messages):
    return asyncio.run(llm.complete(messages, SEARCH_TOOL, temperature=0.0, max_tokens=200))


def _adds_up(p: CallProfile) -> None:
    assert p.evaluated_tokens + p.reused_tokens == p.prompt_tokens
    assert p.prompt_s > 0 and p.decode_s > 0
    assert p.prompt_s + p.decode_s + p.state_s <= p.wall_s + 1e-6


def test_local_profile_counts_what_was_evaluated_and_reused(monkeypatch, tmp_path):
    llm = _local(monkeypatch, tmp_path)
    first_msgs = [SYSTEM, Message(role="user", content="Who directed Big?")]
    first = _ask(llm, first_msgs)
    p = first.profile
    assert p is not None and p.reused_tokens == 0
    assert (
        p.prompt_tokens
        == first.usage.prompt_tokens
        == len(llm.tokenize_prompt(first_msgs, SEARCH_TOOL))
    )
    assert p.generated_tokens == first.usage.completion_tokens > 0
    assert p.forced_tokens == 0 and p.sample_s is None  # the fake has no perf counters
    assert p.wall_s == pytest.approx(first.latency_s)
    _adds_up(p)
    # The next step: the whole previous prompt is in the KV cache.
    call = first.message.tool_calls[0]
    second_msgs = [
        *first_msgs,
        first.message,
        Message(role="tool", content="Big (movie)", tool_call_id=call.id, name=call.name),
    ]
    before = llm._llm.evaluated
    second = _ask(llm, second_msgs).profile
    assert second.reused_tokens >= p.prompt_tokens
    assert second.evaluated_tokens == llm._llm.evaluated - before
    _adds_up(second)
    # The same prompt again: everything cached but the replayed last token.
    again = _ask(llm, second_msgs).profile
    assert (again.evaluated_tokens, again.reused_tokens) == (1, again.prompt_tokens - 1)


def test_states_backend_counts_a_restored_snapshot_as_reused(monkeypatch, tmp_path):
    llm = _local(monkeypatch, tmp_path, states=True)
    a = [SYSTEM, Message(role="user", content="Tom Hanks played Forrest Gump. " * 4)]
    b = [SYSTEM, Message(role="user", content="Meryl Streep played an editor. " * 4)]
    _ask(llm, a)
    _ask(llm, b)  # evicts a's conversation from the one KV cache
    again = _ask(llm, a)
    assert llm.stats.restores == 1
    p = again.profile
    assert p.reused_tokens == p.prompt_tokens - 1 and p.state_s > 0
    assert p.wall_s == pytest.approx(again.latency_s)
    _adds_up(p)


def test_batched_profile_is_the_requests_share():
    pytest.importorskip("llama_cpp")
    from ark.probes import BatchRequest, batch_profile

    req = BatchRequest([1] * 100, None, 0.0, 10, None, None)
    req.reused, req.started, req.first_at, req.sample_s = 60, 10.0, 11.5, 0.25
    req.generated = [5, 6, 7]
    p = batch_profile(req, 12.0)
    assert (p.prompt_tokens, p.evaluated_tokens, p.reused_tokens, p.generated_tokens) == (
        100,
        40,
        60,
        3,
    )
    assert (p.prompt_s, p.decode_s, p.wall_s, p.sample_s) == (1.5, 0.5, 2.0, 0.25)


def test_openai_profile_is_what_the_server_returns():
    pytest.importorskip("openai")
    from ark.probes import openai_completion

    message = SimpleNamespace(content="hi", tool_calls=None)
    usage = SimpleNamespace(
        prompt_tokens=100,
        completion_tokens=9,
        prompt_tokens_details=SimpleNamespace(cached_tokens=64),
    )
    response = SimpleNamespace(
        choices=[SimpleNamespace(message=message, finish_reason="stop")], usage=usage, model="m"
    )
    p = openai_completion(response, "m", 1.25).profile
    assert (p.prompt_tokens, p.evaluated_tokens, p.reused_tokens, p.generated_tokens) == (
        100,
        36,
        64,
        9,
    )
    assert p.wall_s == 1.25 and p.prompt_s == p.decode_s == 0.0  # a server does not say
    response.usage = SimpleNamespace(prompt_tokens=10, completion_tokens=2)  # no details
    assert openai_completion(response, "m", 0.5).profile.reused_tokens == 0


def test_profile_round_trips_as_a_dict():
    p = CallProfile(10, 4, 6, 3, 0, 0.5, 0.25, 0.01, 0.8, None)
    assert CallProfile.from_dict({**p.to_dict(), "future_field": 1}) == p


def test_a_response_cache_hit_has_no_profile(tmp_path):
    from ark.llm import Completion, Usage, with_llm_cache

    class Once:
        name = "once"

        async def complete(self, messages, tools, **kw):
            return Completion(
                Message(role="assistant", content="x"),
                Usage(5, 1),
                "once",
                0.1,
                profile=CallProfile(prompt_tokens=5, evaluated_tokens=5, generated_tokens=1),
            )

    cached = with_llm_cache(Once(), tmp_path / "cache")
    msgs = [Message(role="user", content="q"), Message(role="user", content="q2")]
    first = asyncio.run(cached.complete(msgs, (), temperature=0.0, seed=1))
    hit = asyncio.run(cached.complete(msgs, (), temperature=0.0, seed=1))
    assert first.profile is not None and hit.cached and hit.profile is None


def test_two_calls_profiles_add_up_and_an_unknown_sample_time_stays_unknown():
    """A step that made two calls (a redrawn repeat) records one profile: counts and
    seconds added; ``sample_s`` only where both calls measured it."""
    a = CallProfile(
        prompt_tokens=100,
        evaluated_tokens=40,
        reused_tokens=60,
        prompt_s=0.5,
        decode_s=0.25,
        wall_s=0.8,
        sample_s=0.1,
        generated_tokens=7,
    )
    b = CallProfile(
        prompt_tokens=100,
        reused_tokens=100,
        decode_s=0.5,
        wall_s=0.55,
        sample_s=0.05,
        generated_tokens=9,
        draft_tokens=4,
        accepted_tokens=3,
    )
    both = a + b
    assert (both.prompt_tokens, both.evaluated_tokens, both.reused_tokens) == (200, 40, 160)
    assert (both.generated_tokens, both.draft_tokens, both.accepted_tokens) == (16, 4, 3)
    assert both.decode_s == 0.75 and round(both.wall_s, 6) == 1.35
    assert round(both.sample_s or 0, 6) == 0.15
    assert (a + CallProfile(prompt_tokens=1)).sample_s is None
    assert sum([b], a) == both
