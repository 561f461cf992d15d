"""The local model with one KV cache per conversation, so parallel agents stop
re-reading each other's prompts.

llama.cpp keeps one KV cache per context and ``Llama.generate`` reuses the longest
common token prefix of the previous call. One agent therefore pays only for the tokens
it adds each step, but agents sharing the model evict each other: after agent 2's
step, agent 1's next step shares only the system prompt and question with what is
cached and re-evaluates its whole history. This backend saves the KV cells of the
sequence after every call (``llama_state_seq_get_data``: the used cells only; the
costs: ``docs/decisions/local-model.md``) and, before the next
call, restores the saved state sharing the longest prefix with the new prompt when
it beats what is cached. No agent identity is needed: a prompt finds its own history.
``Llama.save_state`` is not used: it also copies the whole logits buffer.

Calls stay serialised on one model (llama-cpp-python's ``Llama`` decodes one
sequence), so three agents cost the sum of their own new tokens rather than the sum
of their histories. Selected with ``make_chat_model(local_states=True)``; memory is
bounded by ``max_states`` snapshots (``max_states=0`` behaves as the plain backend and
only counts, for benchmarks).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ark.llm.local import _kv_state
from ark.llm.local._kv_state import common_prefix
from ark.llm.local._model import LocalChatModel

__all__ = ["LocalStatesChatModel", "StateCache", "StateStats", "common_prefix"]


@dataclass
class StateStats:
    """Where the backend's time went (for ``benchmarks/bench_agents.py``)."""

    calls: int = 0
    restores: int = 0
    restore_s: float = 0.0
    save_s: float = 0.0
    prompt_tokens: int = 0
    #: Prompt tokens that had to be evaluated (not found in the cache or a snapshot).
    evaluated_tokens: int = 0
    generated_tokens: int = 0
    model_s: float = 0.0


class StateCache:
    """Snapshots of KV cells keyed by their token sequence, least recently used out."""

    def __init__(self, max_states: int = 8) -> None:
        self.max_states = max_states
        self._states: OrderedDict[tuple[int, ...], bytes] = OrderedDict()

    def __len__(self) -> int:
        return len(self._states)

    def put(self, tokens: Sequence[int], data: bytes) -> None:
        key = tuple(tokens)
        # A snapshot that is a prefix of the new one adds nothing: drop it.
        for old in [k for k in self._states if len(k) <= len(key) and key[: len(k)] == k]:
            del self._states[old]
        self._states[key] = data
        while len(self._states) > self.max_states:
            self._states.popitem(last=False)

    def best(self, tokens: Sequence[int]) -> tuple[tuple[int, ...], bytes, int] | None:
        """The snapshot sharing the longest prefix with ``tokens`` (and that length)."""
        best = None
        for key, data in self._states.items():
            n = common_prefix(key, tokens)
            if best is None or n > best[2]:
                best = (key, data, n)
        if best is not None:
            self._states.move_to_end(best[0])
        return best


class LocalStatesChatModel(LocalChatModel):
    """:class:`LocalChatModel` that keeps the KV cache of each conversation."""

    #: Restore only when a snapshot saves at least this many tokens of evaluation.
    MIN_GAIN = 16

    def __init__(self, *args: Any, max_states: int = 8, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lock = threading.RLock()  # held across restore, the parent's call and save
        self.states = StateCache(max_states)
        self.stats = StateStats()

    def _complete_sync(
        self,
        messages: Sequence[Any],
        tools: Sequence[dict[str, Any]],
        temperature: float,
        max_tokens: int | None,
        seed: int | None,
        response_schema: dict[str, Any] | None = None,
        allowed_tools: Sequence[str] | None = None,
        prediction: Any = None,
    ) -> Any:
        # The same tokens the parent sends: special tokens only from the template.
        tokens = self.tokenize_prompt(messages, () if response_schema is not None else tools)
        with self._lock:
            restore_s = self.stats.restore_s
            self._restore(tokens)
            restore_s = self.stats.restore_s - restore_s
            completion = super()._complete_sync(
                messages,
                tools,
                temperature,
                max_tokens,
                seed,
                response_schema,
                allowed_tools,
                prediction,
            )
            self.stats.generated_tokens += completion.usage.completion_tokens
            self.stats.model_s += completion.latency_s
            save_s = self._save()
        profile = completion.profile
        if profile is not None:  # the snapshot's tokens already count as reused
            state_s = restore_s + save_s
            profile = replace(
                profile, state_s=profile.state_s + state_s, wall_s=profile.wall_s + state_s
            )
            completion = replace(
                completion, profile=profile, latency_s=completion.latency_s + state_s
            )
        return completion

    # -- snapshots ----------------------------------------------------------------------

    def _restore(self, tokens: Sequence[int]) -> None:
        llm = self._llm
        cached = common_prefix(llm._input_ids.tolist(), tokens)
        self.stats.calls += 1
        self.stats.prompt_tokens += len(tokens)
        best = self.states.best(tokens)
        if best is None or best[2] < cached + self.MIN_GAIN:
            self.stats.evaluated_tokens += len(tokens) - cached
            return
        key, data, shared = best
        started = time.perf_counter()
        if not _kv_state.load_seq_state(llm, key, data):
            self.stats.evaluated_tokens += len(tokens)  # the cache is empty now
            return
        self.stats.restores += 1
        self.stats.restore_s += time.perf_counter() - started
        self.stats.evaluated_tokens += len(tokens) - shared

    def _save(self) -> float:
        """Snapshot the sequence just generated; the seconds it took."""
        if self.states.max_states <= 0:  # max_states=0: the plain backend, with its stats
            return 0.0
        started = time.perf_counter()
        data = _kv_state.seq_state(self._llm)
        if data:
            self.states.put(self._llm._input_ids.tolist(), data)
        elapsed = time.perf_counter() - started
        self.stats.save_s += elapsed
        return elapsed
