"""Typed chat messages and the backend protocol every LLM implements, with the error
and the warning a backend raises (defined here, not beside the backend, so that a
program can catch or filter them without importing the local engine)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal, Protocol

from ark.errors import ArkError

Role = Literal["system", "user", "assistant", "tool"]


class LLMError(ArkError):
    """The model backend failed (after its retries); the message says what failed."""


class SlowBuildWarning(UserWarning):
    """The installed llama.cpp leaves out instruction sets this CPU has (raised by the
    local engine, ``ark.llm.local``, once per process)."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any] | None  # None: the model's argument text was not a JSON object
    raw_arguments: str  # exactly what the model produced

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            "raw_arguments": self.raw_arguments,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ToolCall:
        return cls(d["id"], d["name"], d.get("arguments"), d.get("raw_arguments", ""))


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True, slots=True)
class CallProfile:
    """Where one model call's tokens and seconds went: the parts of a latency budget.

    Tokens: ``prompt_tokens`` sent, of which ``reused_tokens`` were already in the KV
    cache (the previous call's, a saved snapshot, or the system prompt's state on disk)
    and ``evaluated_tokens`` were computed; ``generated_tokens`` sampled, of which
    With prompt-lookup decoding, ``draft_tokens`` were guessed (from the text the
    tool-call format fixes, else from the conversation) and decoded beside the sampled
    one, ``accepted_tokens`` of them were kept (each a decode saved), and
    ``forced_tokens`` of those were the format's (0 where nothing drafts), and
    ``predicted_tokens`` of those came from the caller's ``prediction``.
    Seconds: ``prompt_s`` from the start of generation to the first sampled token
    (prompt evaluation), ``decode_s`` the rest of generation (decoding, sampling and
    the grammar together), ``state_s`` reading and writing saved KV state, ``wall_s`` the
    whole call. ``sample_s`` is the part of ``decode_s`` spent outside llama.cpp's
    decode (sampling, grammar, detokenizing), when its counters say so; None
    otherwise. A server reports tokens only (``reused_tokens`` where it returns
    ``cached_tokens``); its seconds stay in ``wall_s``, unsplit.
    """

    prompt_tokens: int = 0
    evaluated_tokens: int = 0
    reused_tokens: int = 0
    generated_tokens: int = 0
    forced_tokens: int = 0
    prompt_s: float = 0.0
    decode_s: float = 0.0
    state_s: float = 0.0
    wall_s: float = 0.0
    sample_s: float | None = None
    draft_tokens: int = 0
    accepted_tokens: int = 0
    predicted_tokens: int = 0

    def __add__(self, other: CallProfile) -> CallProfile:
        """Two calls' profile as one (a step that made two calls): every count and
        second added; ``sample_s`` known only where both calls knew it."""
        if not isinstance(other, CallProfile):
            return NotImplemented
        summed = {
            f.name: getattr(self, f.name) + getattr(other, f.name)
            for f in fields(self)
            if f.name != "sample_s"
        }
        sample_s = (
            None
            if self.sample_s is None or other.sample_s is None
            else self.sample_s + other.sample_s
        )
        return CallProfile(**summed, sample_s=sample_s)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            d[f.name] = round(value, 6) if isinstance(value, float) else value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CallProfile:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None  # role == "tool": the call this answers
    name: str | None = None  # role == "tool": the tool's name

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            d["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.tool_call_id is not None:
            d["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            d["name"] = self.name
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Message:
        return cls(
            role=d["role"],
            content=d.get("content") or "",
            tool_calls=tuple(ToolCall.from_dict(c) for c in d.get("tool_calls", [])),
            tool_call_id=d.get("tool_call_id"),
            name=d.get("name"),
        )


@dataclass(frozen=True, slots=True)
class Completion:
    message: Message  # role == "assistant"
    usage: Usage
    model: str
    latency_s: float
    finish_reason: str = "stop"
    cached: bool = False  # served from a response cache (``ark.llm.CachedChatModel``)
    #: With ``response_schema=``: the reply parsed as JSON (None when it did not parse;
    #: the text is still in ``message.content`` for the caller to repair or report).
    data: Any = None
    #: What an OpenAI-compatible server says about the configuration that answered
    #: (``system_fingerprint``); a change means the same request may answer otherwise.
    system_fingerprint: str | None = None
    #: Where the call's tokens and seconds went (None: no model was called, e.g. a
    #: response-cache hit, or the backend does not measure).
    profile: CallProfile | None = None


class ChatModel(Protocol):
    """An async chat model with tool calling. ``name`` is recorded in trajectories.

    ``response_schema`` (optional, a JSON schema) asks for one JSON value instead of
    tool calls: a local model decodes it under a grammar made from the schema, a
    server gets JSON mode; the parsed value is ``Completion.data``. Callers that pass
    it pass no tools.

    A backend whose decoding can write only some of the tools it offers says so with
    a true ``restricts_tools`` attribute and accepts ``allowed_tools=NAMES``: the
    prompt still offers every tool (so it continues the previous one and a prefix
    cache keeps it), the reply calls one of ``NAMES``. Callers check the attribute
    first; to any other backend they offer the subset itself.

    A backend with a true ``accepts_prediction`` attribute accepts
    ``prediction=ToolCall``: the call the caller expects the reply to be (as OpenAI's
    Predicted Outputs, for a tool call). It changes nothing the model writes; a local
    model drafts its tokens, checked one by one, so a reply that copies it costs a
    few decodes instead of one per token.
    """

    name: str

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        *,
        temperature: float = 0.7,
        max_tokens: int | None = None,
        seed: int | None = None,
        response_schema: dict[str, Any] | None = None,
    ) -> Completion: ...


def parse_json_reply(text: str) -> Any:
    """The first JSON object or array in ``text`` (a server's JSON mode may wrap it in
    prose or a code fence); None when there is none."""
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                return decoder.raw_decode(text, i)[0]
            except json.JSONDecodeError:
                continue
    return None
