"""The local model serving several agents at once: batched decoding of parallel
sequences in one llama.cpp context.

Why: ``LocalChatModel`` decodes one sequence, so n agents queue on it and cost n times
one agent (docs/decisions/local-model.md). Where generating a token is bound by reading the
weights from memory, one ``llama_decode`` over a batch holding the next token of three
sequences costs little more than over one (on this project's 2-core CPU at one thread
it is not: see ``batch_sequences``). Each agent also keeps its own KV cache, and the
prompt they share is evaluated once. This backend owns one context
with ``slots`` sequences and a scheduler thread that, each iteration, puts into one
batch the next token of every sequence that is generating and as much of the pending
prompts as fits (continuous batching: a call arriving while others decode joins at
the next iteration). Each sequence samples from its own logits row with its own
sampler chain (temperature, seed), built as ``Llama`` builds it, and its own grammar,
checked on the sampled token first (``_lazy_grammar.py``), as the plain backend does.
Greedy output is the same choice rule, not always the same tokens: a batch's logits
are computed in another order of float operations, which can flip a near tie
(``docs/decisions/local-model.md``).

The KV cache is unified (``kv_unified``): cells may belong to several sequences, so
``llama_memory_seq_cp`` shares a prefix between sequences without copying or
re-evaluating it. A call goes to the idle slot whose cached tokens share the longest
prefix with its prompt (its own history, after the first step); when a busy slot
shares more (another agent's system prompt and question), that prefix is shared
into the chosen slot. Only the rest is evaluated. ``stats`` counts where the time
went, for ``benchmarks/bench_agents.py``.

Selected with ``make_chat_model(parallel=True)`` or ``ARK_LOCAL_PARALLEL=1``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ctypes
import random
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ark.llm._types import CallProfile, Completion, LLMError, Message, Usage
from ark.llm.local._lazy_grammar import LazyGrammarSampler
from ark.llm.local._model import STOP_TEXT, LocalChatModel, allowed
from ark.llm.local._states import common_prefix


@dataclass
class BatchStats:
    """Where the batched backend's time went (per phase, for benchmarks)."""

    calls: int = 0
    #: ``llama_decode`` calls, and the most sequences one of them carried.
    batches: int = 0
    max_sequences: int = 0
    prompt_tokens: int = 0
    #: Prompt tokens evaluated (not found in any sequence's cache).
    prefilled_tokens: int = 0
    #: Prompt tokens shared from another sequence with ``llama_memory_seq_cp``.
    copied_tokens: int = 0
    #: Prompt tokens already in the chosen sequence's own cache.
    reused_tokens: int = 0
    generated_tokens: int = 0
    #: Sampled tokens the grammar rejected, sampled again under the grammar.
    grammar_resamples: int = 0
    decode_s: float = 0.0
    sample_s: float = 0.0

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass(eq=False)
class _Request:
    prompt: list[int]
    grammar: Any
    temperature: float
    max_tokens: int
    seed: int | None
    timeout: float | None
    future: concurrent.futures.Future[_Result] = field(default_factory=concurrent.futures.Future)
    cancelled: bool = False
    # Set by the scheduler.
    slot: _Slot | None = None
    pending: list[int] = field(default_factory=list)  # prompt tokens still to evaluate
    sampler: Any = None
    generated: list[int] = field(default_factory=list)
    next_token: int | None = None  # sampled, to be decoded in the next batch
    started: float = 0.0
    # For the call's profile.
    reused: int = 0  # prompt tokens found in a sequence's cache (its own or shared)
    first_at: float | None = None  # when the first token was sampled
    sample_s: float = 0.0


@dataclass
class _Result:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    latency_s: float
    timed_out: bool = False
    profile: CallProfile | None = None
    tokens: tuple[int, ...] = ()  # as sampled (for ``LocalChatModel.remember_reply``)


@dataclass(eq=False)
class _Slot:
    seq: int
    #: Tokens whose KV cells this sequence holds, at positions 0..len-1.
    tokens: list[int] = field(default_factory=list)
    request: _Request | None = None
    last_used: int = 0


class LocalBatchedChatModel(LocalChatModel):
    """:class:`LocalChatModel` that decodes concurrent calls together, one sequence each.

    ``n_ctx`` is the cells of the shared KV cache for all ``slots`` sequences (a prefix
    shared by several sequences is stored once); ``n_batch`` bounds the tokens of one
    ``llama_decode``. The ``Llama`` object of the parent keeps tokenizing, rendering and
    building samplers; its own context is made small and never decodes.
    """

    #: Decoded token by token: a ``prediction`` would draft nothing.
    accepts_prediction = False
    #: A call waits for another's prompt evaluation when it would share at least
    #: this many more tokens afterwards (a few tokens are not worth a wait).
    MIN_WAIT = 32

    def __init__(
        self,
        model_path: Any = None,
        *,
        slots: int = 4,
        n_ctx: int = 32768,
        n_batch: int = 512,
        n_threads: int | None = None,
        batch_sequences: int | None = None,
        **kwargs: Any,
    ) -> None:
        import llama_cpp
        from llama_cpp import _internals

        super().__init__(model_path, n_ctx=512, n_threads=n_threads, **kwargs)
        llm = self._llm
        # The parent's settings (threads, attention kernel, ...): the same numbers as
        # the plain backend; only the size and the sequences differ.
        params = llama_cpp.llama_context_params.from_buffer_copy(llm.context_params)
        params.n_ctx = n_ctx
        params.n_batch = n_batch
        params.n_ubatch = n_batch
        params.n_seq_max = slots
        params.kv_unified = True  # cells shared between sequences: seq_cp is free
        try:
            self._ctx = _internals.LlamaContext(model=llm._model, params=params, verbose=False)
        except ValueError as exc:
            raise LLMError(f"could not create a {slots}-sequence context: {exc}") from exc
        if llm._lora_adapter is not None:  # the parent's adapter, on this context too
            adapters = (llama_cpp.llama_adapter_lora_p_ctypes * 1)(llm._lora_adapter)
            scales = (ctypes.c_float * 1)(llm.lora_scale)
            if llama_cpp.llama_set_adapters_lora(self._ctx.ctx, adapters, 1, scales):
                raise LLMError("could not set the LoRA adapter on the batched context")
        self.n_ctx = llama_cpp.llama_n_ctx(self._ctx.ctx)
        self.n_batch = n_batch
        #: Most generating sequences per ``llama_decode`` (None: all of them in one).
        #: Batching pays where one token's decode is bound by memory bandwidth, which
        #: depends on the CPU and the model (docs/decisions/local-model.md). Shared
        #: prefixes and per-sequence caches work either way; the benchmark decides.
        self.batch_sequences = batch_sequences
        self._mem = llama_cpp.llama_get_memory(self._ctx.ctx)
        self._batch = llama_cpp.llama_batch_init(n_batch, 0, 1)
        self._vocab = llm._model.vocab
        self._slots = [_Slot(i) for i in range(slots)]
        self.max_concurrency = slots  # one sequence per call in flight
        self._queue: list[_Request] = []
        self._active: list[_Request] = []  # admitted, in admission order
        self._cond = threading.Condition()
        self._closing = False
        self._clock = 0
        self.stats = BatchStats()
        self._thread = threading.Thread(target=self._run, name="ark-batched-llm", daemon=True)
        self._thread.start()

    # -- the protocol ----------------------------------------------------------------------

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        *,
        temperature: float = 0.7,
        max_tokens: int | None = None,
        seed: int | None = None,
        response_schema: dict[str, Any] | None = None,
        allowed_tools: Sequence[str] | None = None,
        prediction: Any = None,  # decoded without drafts here: nothing to predict for
    ) -> Completion:
        if response_schema is not None:
            tools = ()
        prompt = self.tokenize_prompt(messages, tools)
        if len(prompt) >= self.n_ctx:
            raise LLMError(
                f"local model failed: the prompt has {len(prompt)} tokens, the context {self.n_ctx}"
            )
        grammar = self._grammar_for(allowed(tools, allowed_tools), response_schema)
        for _ in range(self.max_retries + 1):
            request = _Request(
                prompt, grammar, temperature, max_tokens or 512, seed, self.request_timeout
            )
            with self._cond:
                if self._closing:
                    raise LLMError("the local model was closed")
                self._queue.append(request)
                self._cond.notify()
            try:
                result = await asyncio.wrap_future(request.future)
            except asyncio.CancelledError:
                request.cancelled = True  # the scheduler drops it at the next iteration
                raise
            if not result.timed_out:
                break
        else:
            raise self._timeout_error()
        self.remember_reply(prompt, result.tokens, result.text)
        usage = Usage(result.prompt_tokens, result.completion_tokens)
        return self._completion(
            result.text,
            response_schema,
            usage,
            result.latency_s,
            result.finish_reason,
            result.profile,
        )

    def close(self) -> None:
        """Stop the scheduler (pending calls fail with LLMError) and free the context."""
        import llama_cpp

        with self._cond:
            if self._closing:
                return
            self._closing = True
            self._cond.notify()
        self._thread.join()
        llama_cpp.llama_batch_free(self._batch)
        self._ctx.close()

    # -- the scheduler ---------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._closing and not self._queue and not self._active:
                    self._cond.wait()
                if self._closing:
                    for r in self._queue + self._active:
                        self._finish(r, LLMError("the local model was closed"))
                    return
                waiting = []
                for request in self._queue:
                    if request.cancelled:
                        continue
                    if all(s.request is not None for s in self._slots) or self._should_wait(
                        request
                    ):
                        waiting.append(request)
                    else:
                        try:
                            self._admit(request)
                        except Exception as exc:  # e.g. a grammar llama.cpp refuses
                            self._finish(request, LLMError(f"local model failed: {exc}"))
                self._queue = waiting
            try:
                self._iterate()
            except Exception as exc:  # never leave a caller waiting on a dead thread
                for r in list(self._active):
                    self._finish(r, LLMError(f"local model failed: {exc}"))

    def _should_wait(self, req: _Request) -> bool:
        """Whether a call still evaluating its prompt will soon hold much more of
        ``req``'s prompt than any sequence holds now: n agents starting on the same
        system prompt and question evaluate it once, then share it."""
        cached = max(common_prefix(s.tokens, req.prompt) for s in self._slots)
        return any(
            r.pending and common_prefix(r.prompt, req.prompt) >= cached + self.MIN_WAIT
            for r in self._active
        )

    def _admit(self, req: _Request) -> None:
        """Give ``req`` an idle slot holding as much of its prompt as any sequence has.

        The slot is the idle one whose cached history would be lost least (its own
        history, or an empty slot), so an idle agent's cache survives another agent's
        call; the longest prefix any sequence holds is then shared into it.
        """
        import llama_cpp

        prompt = req.prompt
        limit = len(prompt) - 1  # the last prompt token is evaluated for its logits
        shared = {s.seq: min(common_prefix(s.tokens, prompt), limit) for s in self._slots}
        free = [s for s in self._slots if s.request is None]
        target = min(
            free, key=lambda s: (len(s.tokens) - shared[s.seq], -shared[s.seq], s.last_used)
        )
        source = max(self._slots, key=lambda s: (shared[s.seq], s is target))
        keep, n = shared[target.seq], shared[source.seq]
        llama_cpp.llama_memory_seq_rm(self._mem, target.seq, keep, -1)
        if n > keep:  # unified cache: the cells gain a sequence id, nothing is copied
            llama_cpp.llama_memory_seq_cp(self._mem, source.seq, target.seq, keep, n)
            self.stats.copied_tokens += n - keep
        target.tokens = prompt[:n]
        self.stats.reused_tokens += keep
        self.stats.calls += 1
        self.stats.prompt_tokens += len(prompt)
        self._clock += 1
        target.request, target.last_used = req, self._clock
        req.slot = target
        req.pending = prompt[n:]
        req.reused = n
        req.started = time.perf_counter()
        # The same chain, seed draw and grammar as ``Llama.create_completion``.
        llm = self._llm
        llm.set_seed(
            random.Random(req.seed if req.seed is not None else llm._seed).randint(0, 2**32)
        )
        req.sampler = LazyGrammarSampler(llm, req.temperature, req.grammar)
        self._active.append(req)

    def _iterate(self) -> None:
        """One step of every admitted call: each generating sequence's next token and
        prompt chunks up to ``n_batch``, decoded in one ``llama_decode`` (or in groups
        of ``batch_sequences`` generating sequences); then each sequence with logits
        samples its next token."""
        for r in [r for r in self._active if r.cancelled]:
            self._finish(r, None)
        steps: list[tuple[_Request, list[int], bool]] = [
            (r, [r.next_token], True) for r in self._active if r.next_token is not None
        ]
        group = self.batch_sequences or len(steps) or 1
        room = self.n_batch - (len(steps) if self.batch_sequences is None else 0)
        prompts: list[tuple[_Request, list[int], bool]] = []
        for r in self._active:
            if r.next_token is None and r.pending and room > 0:
                chunk = r.pending[:room]
                prompts.append((r, chunk, len(chunk) == len(r.pending)))
                room -= len(chunk)
        if self.batch_sequences is None:
            groups = [steps + prompts]
        else:
            groups = [steps[i : i + group] for i in range(0, len(steps), group)] + [prompts]
        for items in groups:
            if items:
                self._decode(items)

    def _decode(self, items: list[tuple[_Request, list[int], bool]]) -> None:
        """Decode ``items`` (one entry per sequence: its tokens, whether the last one
        needs logits) in one ``llama_decode``, then sample those that got logits."""
        import llama_cpp

        batch = self._batch
        batch.n_tokens = 0
        outputs: list[tuple[_Request, int]] = []
        for req, tokens, wants_logits in items:
            assert req.slot is not None
            pos = len(req.slot.tokens)
            for k, token in enumerate(tokens):
                i = batch.n_tokens
                batch.token[i] = token
                batch.pos[i] = pos + k
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = req.slot.seq
                batch.logits[i] = wants_logits and k == len(tokens) - 1
                batch.n_tokens += 1
            if wants_logits:
                outputs.append((req, batch.n_tokens - 1))
        started = time.perf_counter()
        rc = llama_cpp.llama_decode(self._ctx.ctx, batch)
        if rc == 1 and self._evict_idle():  # no room in the KV cache: drop idle caches
            rc = llama_cpp.llama_decode(self._ctx.ctx, batch)
        self.stats.decode_s += time.perf_counter() - started
        if rc != 0:
            reason = (
                f"the {self.n_ctx}-token context is full"
                if rc == 1
                else f"llama_decode returned {rc}"
            )
            # The memory state is as before the call; end the newest call and go on.
            self._finish(items[-1][0], LLMError(f"local model failed: {reason}"))
            return
        self.stats.batches += 1
        self.stats.max_sequences = max(self.stats.max_sequences, len(items))
        for r, tokens, _ in items:
            assert r.slot is not None
            r.slot.tokens += tokens
            if r.next_token is not None:
                r.next_token = None
            else:
                del r.pending[: len(tokens)]
                self.stats.prefilled_tokens += len(tokens)
        for r, index in outputs:
            started = time.perf_counter()
            token = r.sampler.sample(self._ctx, index)
            elapsed = time.perf_counter() - started
            self.stats.sample_s += elapsed
            r.sample_s += elapsed
            if r.first_at is None:
                r.first_at = started + elapsed
            self._after_sample(r, token)

    def _after_sample(self, req: _Request, token: int) -> None:
        import llama_cpp

        if llama_cpp.llama_vocab_is_eog(self._vocab, token):
            self._finish(req, "stop")
            return
        req.generated.append(token)
        self.stats.generated_tokens += 1
        if STOP_TEXT in self._text(req):
            self._finish(req, "stop")
        elif len(req.generated) >= req.max_tokens:
            self._finish(req, "length")
        elif req.timeout is not None and time.perf_counter() - req.started > req.timeout:
            self._finish(req, "timeout")
        else:
            req.next_token = token

    def _text(self, req: _Request) -> str:
        data = self._llm.detokenize(req.generated, prev_tokens=req.prompt)
        return data.decode("utf-8", errors="ignore")

    def _finish(self, req: _Request, outcome: str | LLMError | None) -> None:
        """End ``req`` and resolve its future (``outcome`` None: it was cancelled)."""
        if req in self._active:
            self._active.remove(req)
        if req.slot is not None and req.slot.request is req:
            req.slot.request = None
        if req.sampler is not None:
            self.stats.grammar_resamples += req.sampler.resamples
            req.sampler.close()
            req.sampler = None
        try:
            if isinstance(outcome, LLMError):
                req.future.set_exception(outcome)
            elif outcome is not None:
                text = self._text(req)
                if STOP_TEXT in text:
                    text = text[: text.index(STOP_TEXT)]
                ended = time.perf_counter()
                result = _Result(
                    text,
                    len(req.prompt),
                    len(req.generated),
                    "length" if outcome == "length" else "stop",
                    ended - req.started,
                    timed_out=outcome == "timeout",
                    profile=_profile(req, ended),
                    tokens=tuple(req.generated),
                )
                req.future.set_result(result)
        except concurrent.futures.InvalidStateError:  # the caller cancelled meanwhile
            pass

    def _evict_idle(self) -> bool:
        """Free the KV cells of idle sequences; whether any were freed."""
        import llama_cpp

        freed = False
        for s in self._slots:
            if s.request is None and s.tokens:
                llama_cpp.llama_memory_seq_rm(self._mem, s.seq, -1, -1)
                s.tokens = []
                freed = True
        return freed


def _profile(req: _Request, ended: float) -> CallProfile:
    """One call's share of the batches it rode in: its own prompt and tokens, and
    wall seconds that overlap the other sequences' (a batch is one decode for all).
    ``sample_s`` is its own sampling and grammar time."""
    first = req.first_at if req.first_at is not None else ended
    return CallProfile(
        prompt_tokens=len(req.prompt),
        evaluated_tokens=len(req.prompt) - req.reused,
        reused_tokens=req.reused,
        generated_tokens=len(req.generated),
        prompt_s=first - req.started,
        decode_s=ended - first,
        wall_s=ended - req.started,
        sample_s=req.sample_s,
    )
