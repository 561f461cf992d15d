"""The llama.cpp calls that read and write a context's KV state and its perf counters.

In one place because two features share them — the per-conversation snapshots
(``_states.py``) and the system prompt's state on disk (``_kv_disk.py``) — and
because tests replace them with fakes: nothing here runs without a loaded model.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token sequences."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def reused_prefix(llm: Any, prompt: Sequence[int]) -> int:
    """How many of ``prompt``'s tokens ``Llama.generate`` will take from the KV cache
    rather than evaluate: the common prefix with what is cached, less the last token
    when the whole prompt is cached but its logits are not live (it is replayed)."""
    cached = common_prefix(llm._input_ids.tolist(), prompt)
    if cached < len(prompt) or cached == 0:
        return cached
    live = llm.n_tokens == len(prompt) and not llm._requires_eval
    return cached if live else cached - 1


def seq_state(llm: Any) -> bytes:
    """The KV cells of sequence 0 (``llama_state_seq_get_data``: used cells only)."""
    import llama_cpp

    ctx = llm._ctx.ctx
    size = llama_cpp.llama_state_seq_get_size(ctx, 0)
    buf = (ctypes.c_uint8 * size)()
    written = llama_cpp.llama_state_seq_get_data(ctx, buf, size, 0)
    return ctypes.string_at(buf, written) if written else b""


def load_seq_state(llm: Any, tokens: Sequence[int], data: bytes) -> bool:
    """Replace the context's KV cache by ``data``, the state of ``tokens``; whether
    llama.cpp took it. Refused (another model, layout or damaged bytes), the cache
    is left empty and the next call evaluates everything."""
    import llama_cpp

    ctx = llm._ctx.ctx
    llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(ctx), True)
    buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
    if not data or llama_cpp.llama_state_seq_set_data(ctx, buf, len(data), 0) != len(data):
        llm.reset()
        return False
    llm.input_ids[: len(tokens)] = tokens
    llm.n_tokens = len(tokens)
    llm._requires_eval = True  # no logits for the last token: generate replays it
    return True


def reset_perf(llm: Any) -> None:
    """Zero llama.cpp's per-context timers before a call."""
    import llama_cpp

    llama_cpp.llama_perf_context_reset(llm._ctx.ctx)


def decode_ms(llm: Any) -> float | None:
    """Milliseconds llama.cpp spent in one-token decodes since :func:`reset_perf`
    (generation; sampling and the grammar are outside it); None if unavailable."""
    import llama_cpp

    try:
        return float(llama_cpp.llama_perf_context(llm._ctx.ctx).t_eval_ms)
    except (AttributeError, OSError, ValueError):  # an older llama-cpp-python, no_perf
        return None
