"""Typed chat messages and the backend protocol every LLM implements."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ark.errors import ArkError

Role = Literal["system", "user", "assistant", "tool"]


class LLMError(ArkError):
    """The model backend failed (after its retries); the message says what failed."""


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


class ChatModel(Protocol):
    """An async chat model with tool calling. ``name`` is recorded in trajectories.

    ``response_schema`` (optional, a JSON schema) asks for one JSON value instead of
    tool calls: a local model decodes it under a grammar made from the schema, a
    server gets JSON mode; the parsed value is ``Completion.data``. Callers that pass
    it pass no tools.
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
