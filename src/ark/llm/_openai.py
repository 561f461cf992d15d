"""Any OpenAI-compatible chat-completions server with native tool calling.

One path serves OpenAI, vLLM (``--enable-auto-tool-choice``), Ollama
(``http://127.0.0.1:11434/v1``) and llama.cpp's / llama-cpp-python's servers. Retries
with exponential backoff and jitter on rate limits, 5xx, timeouts and connection
errors are done here (the client's own retries are off) so they are visible and
testable; after the last one an :class:`LLMError` says what failed. The API key is
read from the environment and never stored in trajectories or messages.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ark.llm._types import Completion, LLMError, Message, ToolCall, Usage, parse_json_reply

_PLACEHOLDER_KEY = "not-needed"  # local servers ignore the key but the client needs one


class OpenAIChatModel:
    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 120.0,
        max_retries: int = 4,
        backoff: float = 1.0,
    ) -> None:
        try:
            from openai import AsyncOpenAI
        except ImportError as exc:
            raise LLMError("the OpenAI backend needs: pip install 'ark-retriever[openai]'") from exc
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if key is None:
            if base_url is None:
                raise LLMError("OPENAI_API_KEY is not set (or pass --base-url for a local server)")
            key = _PLACEHOLDER_KEY
        self.name = model
        self.base_url = base_url
        self.max_retries = max_retries
        self.backoff = backoff
        self._client = AsyncOpenAI(api_key=key, base_url=base_url, timeout=timeout, max_retries=0)
        #: How ``response_schema=`` is sent: "json_schema" until a server refuses it,
        #: then "json_object" (plain JSON mode; the schema is then only in the prompt).
        self.json_mode = "json_schema"

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        *,
        temperature: float = 0.7,
        max_tokens: int | None = None,
        seed: int | None = None,
        response_schema: dict[str, Any] | None = None,
    ) -> Completion:
        import openai

        payload: dict[str, Any] = {
            "model": self.name,
            "messages": [to_openai(m) for m in messages],
            "temperature": temperature,
        }
        if tools and response_schema is None:
            payload["tools"] = list(tools)
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        if seed is not None:
            payload["seed"] = seed
        if response_schema is not None:
            payload["response_format"] = _response_format(response_schema, self.json_mode)
        last: Exception | None = None
        for attempt in range(self.max_retries + 1):
            started = time.perf_counter()
            try:
                response = await self._client.chat.completions.create(**payload)
            except (
                openai.APITimeoutError,
                openai.APIConnectionError,
                openai.RateLimitError,
            ) as exc:
                last = exc
            except openai.APIStatusError as exc:
                if _refuses_schema(exc, payload):  # an older server: fall back to JSON mode
                    self.json_mode = "json_object"
                    payload["response_format"] = _response_format(response_schema, self.json_mode)
                    last = exc
                    continue
                if exc.status_code < 500:
                    raise LLMError(
                        f"{self._where()} refused the request: {_describe(exc)}"
                    ) from exc
                last = exc
            else:
                out = _completion(response, self.name, time.perf_counter() - started)
                if response_schema is not None:
                    out = replace(out, data=parse_json_reply(out.message.content))
                return out
            if attempt < self.max_retries:
                await asyncio.sleep(self.backoff * 2**attempt * (0.5 + random.random()))
        raise LLMError(
            f"{self._where()} failed after {self.max_retries + 1} attempts: {_describe(last)}"
        )

    def _where(self) -> str:
        return f"model {self.name!r} at {self.base_url or 'the OpenAI API'}"


def _response_format(schema: dict[str, Any] | None, mode: str) -> dict[str, Any]:
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": "reply", "schema": schema, "strict": False},
        }
    return {"type": "json_object"}


def _refuses_schema(exc: Exception, payload: dict[str, Any]) -> bool:
    fmt = payload.get("response_format") or {}
    return getattr(exc, "status_code", None) in (400, 422) and fmt.get("type") == "json_schema"


def _describe(exc: Exception | None) -> str:
    if exc is None:
        return "unknown error"
    status = getattr(exc, "status_code", None)
    return f"{type(exc).__name__}{f' {status}' if status else ''}: {exc}"


def to_openai(m: Message) -> dict[str, Any]:
    """Our message as the wire format: tool-call arguments as JSON text, content never null."""
    d: dict[str, Any] = {"role": m.role, "content": m.content or ""}
    if m.tool_calls:
        d["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": json.dumps(c.arguments)
                    if c.arguments is not None
                    else c.raw_arguments,
                },
            }
            for c in m.tool_calls
        ]
    if m.role == "tool":
        d["tool_call_id"] = m.tool_call_id
    return d


def _completion(response: Any, model: str, latency: float) -> Completion:
    if not response.choices:
        raise LLMError(f"model {model!r} returned no choices")
    choice = response.choices[0]
    msg = choice.message
    calls = []
    for c in msg.tool_calls or []:
        raw = c.function.arguments or ""
        try:
            parsed = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            parsed = None
        calls.append(
            ToolCall(
                id=c.id or f"call_{len(calls)}",
                name=c.function.name,
                arguments=parsed if isinstance(parsed, dict) else None,
                raw_arguments=raw,
            )
        )
    usage = response.usage
    return Completion(
        message=Message(role="assistant", content=msg.content or "", tool_calls=tuple(calls)),
        usage=Usage(
            getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0
        ),
        model=getattr(response, "model", None) or model,
        latency_s=latency,
        finish_reason=choice.finish_reason or "stop",
    )
