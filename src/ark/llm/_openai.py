"""Any OpenAI-compatible chat-completions server with native tool calling.

One path serves OpenAI, vLLM (``--enable-auto-tool-choice``), Ollama
(``http://127.0.0.1:11434/v1``) and llama.cpp's / llama-cpp-python's servers. Retries
with exponential backoff and jitter on rate limits, 5xx, timeouts and connection
errors are done here (the client's own retries are off) so they are visible and
testable; a server's ``Retry-After`` / ``retry-after-ms`` is honoured (capped at
:data:`MAX_RETRY_AFTER_S`); after the last one an :class:`LLMError` says what failed.
``timeout`` bounds each attempt's wall-clock time, not only the wait between two
bytes (a server dripping a body would otherwise hold a call for ever). The API key is
read from the environment and never stored in trajectories or messages.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import os
import random
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from ark._coerce import as_int
from ark._safe import clean, clean_text, redact, redact_url, too_deep
from ark.llm._types import (
    CallProfile,
    Completion,
    LLMError,
    Message,
    ToolCall,
    Usage,
    parse_json_reply,
)

_PLACEHOLDER_KEY = "not-needed"  # local servers ignore the key but the client needs one
METADATA_TIMEOUT_S = 10.0
#: Fields of a ``/v1/models`` entry that say nothing about the weights: vLLM and
#: llama.cpp's server fill ``created`` with the time of the request, and vLLM's
#: ``permission`` holds a fresh id each time.
_VOLATILE_MODEL_FIELDS = frozenset({"created", "permission"})
#: Longest wait a server's ``Retry-After`` can impose before the next attempt.
MAX_RETRY_AFTER_S = 60.0


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
            from openai import AsyncOpenAI, OpenAI
        except ImportError as exc:
            raise LLMError("the OpenAI backend needs: pip install 'ark-retriever[openai]'") from exc
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if key is None:
            if base_url is None:
                raise LLMError("OPENAI_API_KEY is not set (or pass --base-url for a local server)")
            key = _PLACEHOLDER_KEY
        self.name = model
        #: For display and records: a password in the URL is replaced.
        self.base_url = redact_url(base_url)
        self._secrets = (
            None if key == _PLACEHOLDER_KEY else key,
            urlsplit(base_url).password if base_url else None,
        )
        self.max_retries = max_retries
        self.backoff = backoff
        self.timeout = timeout
        self._new_client = lambda: AsyncOpenAI(
            api_key=key, base_url=base_url, timeout=timeout, max_retries=0
        )
        self._metadata_client = lambda: OpenAI(
            api_key=key, base_url=base_url, timeout=min(timeout, METADATA_TIMEOUT_S), max_retries=0
        )
        self._server: dict[str, Any] | None = None
        self._server_read = False
        self._client = self._new_client()
        self._loop: asyncio.AbstractEventLoop | None = None
        #: How ``response_schema=`` is sent: "json_schema" until a server refuses it,
        #: then "json_object" (plain JSON mode; the schema is then only in the prompt).
        self.json_mode = "json_schema"

    def cache_identity(self) -> dict[str, Any]:
        """A served model is known by its name at its endpoint (never by the key) and
        by what the server says about it on ``/v1/models`` (see :meth:`server_model`),
        so a new checkpoint that the server describes differently is a new model."""
        return {
            "backend": "openai",
            "name": self.name,
            "base_url": self.base_url,
            "server": self.server_model(),
        }

    def server_model(self) -> dict[str, Any] | None:
        """This model's entry in the server's ``/v1/models`` (the only one, when the
        server lists one model under another name, as llama.cpp's does), less the
        fields that change on every call; read once. None when the server has no such
        list or does not answer within a few seconds: the identity is then the name
        and the URL alone."""
        if not self._server_read:
            self._server_read = True
            try:
                with self._metadata_client() as client:
                    models = client.models.list().data
                    listed = [m.model_dump(exclude_unset=True) for m in models]  # as sent
            except Exception:  # no /v1/models, an error page, a timeout: nothing said
                listed = []
            named = [m for m in listed if m.get("id") == self.name]
            found = named or (listed if len(listed) == 1 else [])
            if found:
                entry = {k: v for k, v in found[0].items() if k not in _VOLATILE_MODEL_FIELDS}
                self._server = json.loads(json.dumps(clean(entry), default=str))
        return self._server

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
            "messages": clean([to_openai(m) for m in messages]),
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
                response = await asyncio.wait_for(
                    self._client_for_loop().chat.completions.create(**payload), self.timeout
                )
                out = _completion(response, self.name, time.perf_counter() - started)
                if response_schema is not None:
                    out = replace(out, data=parse_json_reply(out.message.content))
                return out
            except TimeoutError:  # the whole attempt took longer than ``timeout``
                last = TimeoutError(f"no complete reply within {self.timeout:g} s")
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
                if exc.status_code < 500 and exc.status_code not in (408, 409):
                    raise LLMError(
                        self._redact(f"{self._where()} refused the request: {_error_text(exc)}")
                    ) from None
                last = exc
            except Exception as exc:  # a malformed reply (HTML, cut JSON, null message)
                last = exc
            if attempt < self.max_retries:
                wait = self.backoff * 2**attempt * (0.5 + random.random())
                asked = retry_after(last)
                await asyncio.sleep(max(wait, asked) if asked is not None else wait)
        raise LLMError(
            self._redact(
                f"{self._where()} failed after {self.max_retries + 1} attempts: {_error_text(last)}"
            )
        )

    def _client_for_loop(self) -> Any:
        """The client of the running event loop: its pooled connections belong to the
        loop that opened them, so each ``asyncio.run`` (``Retriever.retrieve``) gets a
        fresh client instead of "Event loop is closed" on its second call."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            if self._loop is not None:
                self._client = self._new_client()
            self._loop = loop
        return self._client

    def _redact(self, text: str) -> str:
        """Error text without the key or URL password (servers echo keys in 401 bodies)."""
        return redact(text, self._secrets)

    def _where(self) -> str:
        return f"model {self.name!r} at {self.base_url or 'the OpenAI API'}"


def retry_after(exc: Exception | None) -> float | None:
    """Seconds the server asked to wait before the next attempt (``retry-after-ms``,
    else ``Retry-After`` as seconds or an HTTP date), capped at
    :data:`MAX_RETRY_AFTER_S`; None when it asked nothing (or nonsense)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    seconds: float | None = None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            seconds = float(ms) / 1000
        else:
            value = headers.get("retry-after")
            if value is None:
                return None
            try:
                seconds = float(value)
            except ValueError:
                when = email.utils.parsedate_to_datetime(value)
                seconds = when.timestamp() - time.time()
    except (TypeError, ValueError, OverflowError, IndexError):
        return None
    if seconds is None or not math.isfinite(seconds):
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


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


def _error_text(exc: Exception | None) -> str:
    """An exception as the end of an error message: its type, HTTP status, text."""
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
                    "arguments": _arguments_text(c.arguments, c.raw_arguments),
                },
            }
            for c in m.tool_calls
        ]
    if m.role == "tool":
        d["tool_call_id"] = m.tool_call_id
    return d


class MalformedReply(LLMError):
    """A 200 reply that is not a chat completion (retried like a server error)."""


def _arguments_text(arguments: dict[str, Any] | None, raw: str) -> str:
    if arguments is None:
        return raw
    try:
        return json.dumps(arguments)
    except (ValueError, RecursionError, TypeError):
        return raw


def _completion(response: Any, model: str, latency: float) -> Completion:
    """Our completion from the client's parsed reply, checking every field a server
    (or a proxy in front of it) may have left out or filled with the wrong kind."""
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise MalformedReply(f"model {model!r} returned no choices ({_shape(response)})")
    choice = choices[0]
    msg = getattr(choice, "message", None)
    if msg is None:
        raise MalformedReply(f"model {model!r} returned a choice without a message")
    content = getattr(msg, "content", None)
    if content is not None and not isinstance(content, str):
        raise MalformedReply(f"model {model!r} returned non-text content")
    calls = []
    for c in getattr(msg, "tool_calls", None) or []:
        function = getattr(c, "function", None)
        name = getattr(function, "name", None)
        raw = getattr(function, "arguments", None)
        if not isinstance(name, str) or not isinstance(raw, str | None):
            raise MalformedReply(f"model {model!r} returned a tool call without a name")
        raw = clean_text(raw or "")
        try:
            parsed = json.loads(raw) if raw.strip() else {}
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            parsed = None
        calls.append(
            ToolCall(
                id=str(getattr(c, "id", None) or f"call_{len(calls)}"),
                name=clean_text(name),
                arguments=clean(parsed)
                if isinstance(parsed, dict) and not too_deep(parsed)
                else None,
                raw_arguments=raw,
            )
        )
    usage = getattr(response, "usage", None)
    fingerprint = getattr(response, "system_fingerprint", None)
    prompt_tokens = as_int(getattr(usage, "prompt_tokens", 0)) or 0
    completion_tokens = as_int(getattr(usage, "completion_tokens", 0)) or 0
    details = getattr(usage, "prompt_tokens_details", None)
    reused = max(0, min(as_int(getattr(details, "cached_tokens", 0)) or 0, prompt_tokens))
    return Completion(
        message=Message(
            role="assistant", content=clean_text(content or ""), tool_calls=tuple(calls)
        ),
        usage=Usage(prompt_tokens, completion_tokens),
        model=getattr(response, "model", None) or model,
        latency_s=latency,
        finish_reason=str(getattr(choice, "finish_reason", None) or "stop"),
        system_fingerprint=clean_text(fingerprint) if isinstance(fingerprint, str) else None,
        # What the server says: tokens (cached ones where it reports them) and the wall
        # time; how its seconds split between prompt and decoding it does not say.
        profile=CallProfile(
            prompt_tokens=prompt_tokens,
            evaluated_tokens=prompt_tokens - reused,
            reused_tokens=reused,
            generated_tokens=completion_tokens,
            wall_s=latency,
        ),
    )


def _shape(response: Any) -> str:
    if isinstance(response, str):
        return f"a text reply: {response[:80]!r}"
    return f"a {type(response).__name__}"
