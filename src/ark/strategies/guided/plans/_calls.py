"""The calls a hint line offers, read back as calls.

The hints write their next move as a call in the tools' own syntax
(``search_in_neighborhood(node_index=[3, 7], edge_type="has_genre")``): a small model
copies it. The plan runner runs that same call without the model, so it reads the
call back from the line: every ``tool(...)`` written there whose arguments are all
literal values (a template such as ``edge_type=R`` or ``node_index=<one of them>``
is no call). This parses the tools' call syntax (Python's, by :mod:`ast`), nothing of
the prose around it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from typing import Any

from ark.tools import ANSWER_TOOL_SPECS, TOOL_SPECS

#: The call the plan runs: a tool name and its arguments.
Call = tuple[str, dict[str, Any]]


def _pattern(names: Iterable[str]) -> re.Pattern[str]:
    return re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\(")


#: A tool's name followed by its opening parenthesis.
_CALL_START = _pattern([*TOOL_SPECS, *ANSWER_TOOL_SPECS])


def calls_in(text: str) -> list[Call]:
    """Every complete call written in ``text``, in order (a call written twice counts
    once)."""
    out: list[Call] = []
    for match in _CALL_START.finditer(text):
        call = _parse_at(text, match.start(), match.group(1))
        if call is not None and call not in out:
            out.append(call)
    return out


def ready_call(text: str) -> Call | None:
    """The one call ``text`` offers, or None when it offers none or a choice of
    several (a choice is the model's)."""
    calls = calls_in(text)
    return calls[0] if len(calls) == 1 else None


def _parse_at(text: str, start: int, name: str) -> Call | None:
    """The call starting at ``start``: its text up to the parenthesis that closes it,
    parsed; None when it does not parse or an argument is not a literal."""
    depth, quote = 0, ""
    for end in range(start + len(name), len(text)):
        ch = text[end]
        if quote:
            if ch == quote and text[end - 1] != "\\":
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return _literal_call(text[start : end + 1])
    return None


def _literal_call(source: str) -> Call | None:
    try:
        node = ast.parse(source, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
        return None
    arguments: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            return None
        try:
            value = ast.literal_eval(keyword.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
        if not _json_value(value):  # ``edge_type=...`` is Python's Ellipsis: a template
            return None
        arguments[keyword.arg] = value
    return node.func.id, arguments


def _json_value(value: Any) -> bool:
    """Whether ``value`` is what a tool call's JSON arguments can hold (no Ellipsis,
    tuple, set, bytes or complex, which :func:`ast.literal_eval` also reads)."""
    if value is None or isinstance(value, str | bool | int | float):
        return True
    if isinstance(value, list):
        return all(_json_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_value(v) for k, v in value.items())
    return False
