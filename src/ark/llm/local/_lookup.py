"""Prompt-lookup decoding for the local model: draft tokens copied from the
conversation, checked in one decode.

Why: most of what an agent writes it has just read. A tool call repeats the key names
and the tool name of its earlier calls (``{"name": "search_in_neighborhood",
"arguments": {"node_index": ``) and copies node indices and names from the last
observation. Token by token, each of those costs one ``llama_decode`` of the whole
model (``docs/decisions/local-model.md``). Here the tokens that followed
the latest earlier occurrence of the last few tokens are guessed as a draft, the
sampled token and the draft are decoded together (logits at every position), and the
sampler then goes through the positions in order: a draft token is kept only where the
sampler, at that position, picked exactly it; the first disagreement ends the draft
and its KV cells are dropped. Decoding k + 1 tokens at once costs much less than k + 1
decodes, so a draft that is mostly right saves decodes and a wrong one costs a little.

Exact where it matters: every position is sampled by the same sampler chain (grammar,
temperature, seed) in the same order as token-by-token decoding, so greedy output
equals the plain decoder's (tested), up to llama.cpp's rounding of logits by the size
of the batch a token is decoded in (as between a cold and a warm prefix cache).
Sampled output follows the same distribution, but the same random draw can pick
another token where two are close, so a seeded run is not replayed token for token.

``llama-cpp-python``'s own ``LlamaPromptLookupDecoding`` draft model needs
``logits_all``, which computes the output layer for every prompt token and keeps an
``n_ctx × vocabulary`` array; this asks for logits only where a draft is checked.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ark.llm.local._kv_state import common_prefix

#: The longest n-gram looked up, and how many tokens a draft copies at most.
NGRAM = 3
MAX_DRAFT = 4
#: The longest draft of format-fixed tokens: such a draft is almost always kept, and
#: a decode of many tokens costs a few of one (docs/decisions/local-model.md).
MAX_FORCED = 16


def lookup_draft(
    history: Sequence[int] | np.ndarray, *, ngram: int = NGRAM, max_draft: int = MAX_DRAFT
) -> list[int]:
    """The tokens that followed the latest earlier occurrence of ``history``'s last
    ``ngram`` tokens (or, failing that, of fewer: down to one); empty when nothing
    matches.

    The draft is as long as the match earns: ``2 ** (n - 1)`` tokens after an n-token
    match (one after one, two after two, four after three), at most ``max_draft``. On
    a CPU a decode of k tokens costs far more than one, so a long draft after a
    one-token match costs more than it saves (measured: ``docs/decisions/local-model.md``)."""
    h = np.asarray(history, dtype=np.int64)
    n_all = len(h)
    for n in range(min(ngram, n_all - 1), 0, -1):
        tail = h[n_all - n :]
        span = n_all - n  # start positions whose n-gram ends before the tail begins
        match = h[:span] == tail[0]
        for k in range(1, n):
            match &= h[k : span + k] == tail[k]
        hits = np.flatnonzero(match)
        if hits.size:
            start = int(hits[-1]) + n
            return h[start : start + min(max_draft, 1 << (n - 1))].tolist()
    return []


@dataclass
class LookupResult:
    """What one call generated, and what the drafts did."""

    tokens: list[int]
    finish_reason: str  # "stop", "length" or "timeout"
    drafted: int = 0  # draft tokens decoded
    accepted: int = 0  # of them, kept
    forced: int = 0  # of the kept, drafted from the output's format (``forced``)
    predicted: int = 0  # of the kept, drafted from the caller's prediction (``predicted``)
    decode_s: float = 0.0  # seconds inside the decodes after the prompt
    first_at: float | None = None  # when the first token was sampled


def decode_with_lookup(
    llm: Any,
    prompt: Sequence[int],
    sampler: Any,
    *,
    max_tokens: int,
    stop: Callable[[list[int]], bool],
    deadline: float | None = None,
    ngram: int = NGRAM,
    max_draft: int = MAX_DRAFT,
    forced: Callable[[list[int]], list[int]] | None = None,
    predicted: Callable[[list[int]], list[int]] | None = None,
) -> LookupResult:
    """Generate after ``prompt`` on ``llm`` (a ``llama_cpp.Llama``) with ``sampler``
    (its sampler chain, grammar included), drafting by :func:`lookup_draft`.

    The prompt reuses what the context caches, as ``Llama.generate`` does; ``llm``'s
    token bookkeeping (``input_ids``, ``n_tokens``) is kept true, so the next call, the
    snapshots and the on-disk system prompt state see what the cache holds. ``stop``
    is asked after every token whether the text so far ends the reply; ``deadline`` is
    a ``time.perf_counter()`` value past which generation stops (``"timeout"``).
    ``forced`` (the tokens generated so far -> the tokens the output's format fixes
    next, :class:`~ark.llm.local._skeleton.ToolCallSkeleton`) is drafted first, up to
    ``MAX_FORCED`` tokens; the conversation's n-grams where it has nothing. Before
    both, ``predicted`` (the same shape: the rest of a reply the caller expects,
    :func:`~ark.llm.local._skeleton.prediction_drafter`) while the reply follows it.
    """
    import llama_cpp

    ctx = llm._ctx
    vocab = llm._model.vocab
    # The last prompt token is evaluated for its logits; ``eval`` drops cells past ``keep``.
    keep = min(common_prefix(llm._input_ids.tolist(), prompt), len(prompt) - 1)
    llm.n_tokens = keep
    llm.eval(list(prompt[keep:]))
    out = LookupResult(tokens=[], finish_reason="length")
    history = list(prompt)
    rows = [-1]  # the output rows to sample, in order (the prompt: its last token)
    draft: list[int] = []
    from_format = from_prediction = False
    while True:
        for j, row in enumerate(rows):
            token = sampler.sample(ctx, row)
            if out.first_at is None:
                out.first_at = time.perf_counter()
            kept = j < len(draft) and token == draft[j]
            if not kept:
                # Positions after the one sampled from hold rejected draft tokens.
                valid = llm.n_tokens - (len(rows) - 1 - j)
                if valid < llm.n_tokens:
                    ctx.kv_cache_seq_rm(-1, valid, -1)
                    llm.n_tokens = valid
            else:
                out.accepted += 1
                out.forced += from_format
                out.predicted += from_prediction
            if llama_cpp.llama_vocab_is_eog(vocab, token):
                out.finish_reason = "stop"
                return out
            out.tokens.append(token)
            history.append(token)
            if stop(out.tokens):
                out.finish_reason = "stop"
                return out
            if len(out.tokens) >= max_tokens:
                return out
            if deadline is not None and time.perf_counter() > deadline:
                out.finish_reason = "timeout"
                return out
            if not kept:
                break
        draft = predicted(out.tokens)[:MAX_FORCED] if predicted is not None else []
        from_prediction, from_format = bool(draft), False
        if not draft and forced is not None:
            draft = forced(out.tokens)[:MAX_FORCED]
            from_format = bool(draft)
        if not draft:
            draft = lookup_draft(history, ngram=ngram, max_draft=max_draft)
        room = llm._n_ctx - llm.n_tokens - 1
        draft = draft[: max(0, min(room, llm.n_batch - 1))]
        batch = [history[-1], *draft]
        started = time.perf_counter()
        n_past = llm.n_tokens
        llm._batch.set_batch(batch=batch, n_past=n_past, logits_all=True)
        ctx.decode(llm._batch)
        llm.input_ids[n_past : n_past + len(batch)] = batch
        llm.n_tokens += len(batch)
        out.decode_s += time.perf_counter() - started
        out.drafted += len(draft)
        rows = list(range(len(batch)))
