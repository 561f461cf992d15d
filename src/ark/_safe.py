"""Writing what models and graphs send, safely: no lone surrogate, no secret.

A model (or a command line decoded with ``surrogateescape``) can hand ARK strings
that hold lone UTF-16 surrogates such as ``"\\ud800"``; they are legal Python strings
but cannot be encoded as UTF-8, so one of them would make every write of a run
raise. Every JSON line and every file ARK writes goes through :func:`dumps`, which
replaces them with U+FFFD. Secrets (API keys echoed by a server, a password in a
base URL) are removed with :func:`redact` and :func:`redact_url` before anything
is recorded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"
REDACTED = "[redacted]"
# Shapes of API keys that servers echo back in error bodies (OpenAI, Anthropic,
# Hugging Face, bearer tokens).
_KEY_SHAPES = re.compile(
    r"(?:sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{8,}|hf_[A-Za-z0-9]{8,}|(?i:bearer)\s+[A-Za-z0-9._\-]{8,})"
)


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (fast when there is none)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(REPLACEMENT, text)
    return text


def clean(value: Any) -> Any:
    """A JSON-like value with every string (keys included) cleaned."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean(k): clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    return value


def dumps(data: Any, **kwargs: Any) -> str:
    """``json.dumps`` (UTF-8 text kept readable) whose result always encodes as UTF-8."""
    kwargs.setdefault("ensure_ascii", False)
    return clean_text(json.dumps(data, **kwargs))


def redact(text: str, secrets: tuple[str | None, ...] = ()) -> str:
    """``text`` without the given secrets and without anything shaped like an API key."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, REDACTED)
    return _KEY_SHAPES.sub(REDACTED, text)


def redact_url(url: str | None) -> str | None:
    """A URL with its password (``http://user:pass@host``) replaced; other URLs as given."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return REDACTED
    if parts.password is None and "@" not in parts.netloc:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host += f":{parts.port}"
    user = parts.username or ""
    netloc = f"{user}:{REDACTED}@{host}" if user else f"{REDACTED}@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters (observations echo model input, which
    has no size limit); the cut is marked with its full length."""
    try:
        text = repr(value)
    except (RecursionError, ValueError):  # deep nesting; huge ints refuse repr
        return f"<{type(value).__name__}>"
    if len(text) <= limit:
        return text
    return f"{text[: limit - 1]}… ({len(text):,} characters)"


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the cut marked with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: Deepest nesting accepted in a model's tool arguments. Real calls nest two or three
#: levels; thousands of levels would overflow the recursion of every later copy,
#: comparison or write of the arguments.
MAX_NESTING = 32


def too_deep(value: Any, limit: int = MAX_NESTING) -> bool:
    """Whether ``value`` (JSON-like) nests lists/dicts deeper than ``limit`` (iterative,
    so it cannot itself overflow)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list | tuple):
            if depth >= limit:
                return True
            stack.extend((v, depth + 1) for v in item)
    return False


def jsonl_lines(text: str) -> Iterator[tuple[int, str]]:
    """The lines of a JSON Lines text, numbered from 1, split on ``\n`` alone (a
    ``\r`` before it dropped). Why not ``str.splitlines``: it also splits at U+2028,
    U+2029, U+0085 and other separators that JSON allows raw inside a string, so a
    valid record was cut in two and refused as invalid JSON."""
    for lineno, line in enumerate(text.split("\n"), start=1):
        yield lineno, line[:-1] if line.endswith("\r") else line


#: What a JSON parser may raise on hostile input besides a syntax error: nesting past
#: the recursion limit, an integer past Python's 4,300-digit limit.
JSON_ERRORS = (ValueError, RecursionError)


def json_problem(exc: BaseException) -> str:
    """What is wrong with a JSON text that raised ``exc`` (one of :data:`JSON_ERRORS`),
    in words for an error that names the file: a syntax error's message, or why a
    valid-looking value could not be read."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON ({exc.msg})"
    if isinstance(exc, RecursionError):
        return "not readable JSON (nested too deep)"
    return f"not readable JSON ({exc})"


#: C0 and C1 control characters but tab and newline: a node name holding ``ESC [``
#: sequences would drive the user's terminal (issue 67).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with every control character but tab and newline written as ``\\xNN``:
    for terminal output and tool observations (graph text is the user's data, not
    commands for their terminal)."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
