"""The local backend that decodes parallel agents' calls in one batch.

The real-model tests use the 0.5B model (one thread, a few tokens each) and compare
against the plain backend, which decodes one sequence at a time: equal greedy text
shows that batching, shared prefixes and per-sequence sampling change nothing but
the speed.
"""

import asyncio

import pytest

from _llm_fixture import SEARCH_TOOL, needs_small, small_model_file
from ark.llm import LLMError, Message, make_chat_model

TOOLS = SEARCH_TOOL
SYSTEM = Message(role="system", content="You are a terse assistant. Answer in a few words.")
#: Greedy answers with a clear margin (the top logit leads by 1.2 or more at every
#: step): llama.cpp's logits move by up to ~0.3 with the batch a token is decoded in
#: (measured: a prompt's last token alone vs in one batch with the whole prompt), in
#: the plain backend too (a warm prefix cache vs a cold one), so a near tie may flip.
QUESTIONS = [
    "What is the capital of Japan? One word.",
    "Name a primary color.",
    "What is 2 + 2? Reply with the digit.",
]


def ask(question: str, system: Message = SYSTEM) -> list[Message]:
    return [system, Message(role="user", content=question)]


def test_make_chat_model_selects_the_batched_backend(monkeypatch):
    """Without loading a model: the choice shows in which class was constructed."""
    pytest.importorskip("llama_cpp")
    from ark.llm.local import LocalBatchedChatModel, LocalChatModel

    made = []
    for cls in (LocalChatModel, LocalBatchedChatModel):
        monkeypatch.setattr(cls, "__init__", lambda self, **kw: made.append(type(self)))
    monkeypatch.delenv("ARK_LOCAL_PARALLEL", raising=False)
    make_chat_model(parallel=True)
    make_chat_model()
    monkeypatch.setenv("ARK_LOCAL_PARALLEL", "1")
    make_chat_model()
    make_chat_model(parallel=False)
    assert made == [
        LocalBatchedChatModel,
        LocalChatModel,
        LocalBatchedChatModel,
        LocalChatModel,
    ]


@pytest.fixture(scope="module")
def batched():
    from ark.llm.local import LocalBatchedChatModel

    model = LocalBatchedChatModel(small_model_file(), slots=4, n_ctx=4096, n_threads=1)
    yield model
    model.close()


@pytest.fixture(scope="module")
def plain():
    from ark.llm.local import LocalChatModel

    return LocalChatModel(small_model_file(), n_ctx=2048, n_threads=1)


def greedy(model, messages, tools=(), max_tokens=12):
    return asyncio.run(model.complete(messages, tools, temperature=0.0, max_tokens=max_tokens))


@pytest.mark.slow
@needs_small
def test_one_call_matches_the_plain_backend(batched, plain):
    out = greedy(batched, ask(QUESTIONS[0]))
    ref = greedy(plain, ask(QUESTIONS[0]))
    assert out.message.content == ref.message.content and out.message.content
    assert out.usage == ref.usage and out.finish_reason == ref.finish_reason


@pytest.mark.slow
@needs_small
@pytest.mark.parametrize("batch_sequences", [None, 1])
def test_concurrent_calls_each_match_their_own_sequential_output(
    batched, plain, monkeypatch, batch_sequences
):
    """Three calls decoded together (in one batch, or one sequence per decode),
    sharing the system prompt's cells: each gets the text it gets alone, so no
    sequence reads another's cache or logits."""
    monkeypatch.setattr(batched, "batch_sequences", batch_sequences)

    async def together():
        return await asyncio.gather(
            *[batched.complete(ask(q), (), temperature=0.0, max_tokens=12) for q in QUESTIONS]
        )

    before = batched.stats.max_sequences
    outs = asyncio.run(together())
    refs = [greedy(plain, ask(q)) for q in QUESTIONS]
    texts = [o.message.content for o in outs]
    assert texts == [r.message.content for r in refs]
    assert len(set(texts)) == 3  # different answers, so a mix-up would show
    assert max(before, batched.stats.max_sequences) >= 2  # they were decoded together


@pytest.mark.slow
@needs_small
def test_a_shared_prefix_is_evaluated_once_and_shared():
    """Two agents start on the same (long) system prompt at once: one evaluates it,
    the other waits and gets its cells through ``llama_memory_seq_cp``."""
    from ark.llm.local import LocalBatchedChatModel

    batched = LocalBatchedChatModel(small_model_file(), slots=2, n_ctx=1024, n_threads=1)
    system = Message(
        role="system",
        content="You answer questions about films for the shared-prefix test. "
        + "Keep answers short and exact. " * 12,
    )
    first, second = ask(QUESTIONS[0], system), ask(QUESTIONS[1], system)
    p1 = batched.tokenize_prompt(first, ())
    p2 = batched.tokenize_prompt(second, ())
    common = next(i for i, (a, b) in enumerate(zip(p1, p2, strict=False)) if a != b)
    assert common > 80
    stats = batched.stats
    prefilled, copied = stats.prefilled_tokens, stats.copied_tokens

    async def together():
        return await asyncio.gather(
            *[batched.complete(m, (), temperature=0.0, max_tokens=4) for m in (first, second)]
        )

    asyncio.run(together())
    batched.close()
    assert stats.prefilled_tokens - prefilled == len(p1) + len(p2) - common
    assert stats.copied_tokens - copied == common


@pytest.mark.slow
@needs_small
def test_a_grammar_constrained_tool_call_parses(batched, plain):
    """The grammar is checked on the sampled token and applied to the whole vocabulary
    only when it rejects it; the call equals the plain backend's (grammar on every
    token), and the rejecting path ran (the 0.5B model's unconstrained choice breaks
    the grammar 3 times in this call)."""
    messages = ask("Find the actor Tom Hanks with the tool.")
    resamples = batched.stats.grammar_resamples
    out = greedy(batched, messages, TOOLS, max_tokens=32)
    ref = greedy(plain, messages, TOOLS, max_tokens=32)
    (call,) = out.message.tool_calls
    assert call.name == "search_in_graph" and isinstance(call.arguments, dict)
    assert isinstance(call.arguments["query"], str)
    assert call.raw_arguments == ref.message.tool_calls[0].raw_arguments
    assert out.finish_reason == "stop"
    assert batched.stats.grammar_resamples > resamples


@needs_small
def test_a_seed_repeats_a_sampled_reply(batched):
    messages = ask("Name a kind of fruit.")

    def sampled(seed):
        out = asyncio.run(batched.complete(messages, (), temperature=1.0, max_tokens=6, seed=seed))
        return out.message.content

    assert sampled(7) == sampled(7)


@needs_small
def test_max_tokens_cuts_with_finish_reason_length(batched):
    out = greedy(batched, ask("Count from one to twenty in words."), max_tokens=3)
    assert out.finish_reason == "length" and out.usage.completion_tokens == 3


@needs_small
def test_request_timeout_fails_after_retries(batched, monkeypatch):
    monkeypatch.setattr(batched, "request_timeout", 1e-9)
    with pytest.raises(LLMError, match="request timeout"):
        greedy(batched, ask("Count from one to twenty in words."), max_tokens=8)


@needs_small
def test_a_closed_model_refuses_calls():
    from ark.llm.local import LocalBatchedChatModel

    model = LocalBatchedChatModel(small_model_file(), slots=2, n_ctx=512, n_threads=1)
    model.close()
    with pytest.raises(LLMError, match="closed"):
        greedy(model, ask(QUESTIONS[0]))
