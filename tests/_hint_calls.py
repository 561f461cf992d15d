"""The calls a hint's text writes, parsed back from the text: the tests' check that a
hint's prose writes exactly the calls its part carries (:class:`ark.session.NextCall`),
so the call a model copies is the call the plans run.

Every ``tool(...)`` written in the text whose arguments are all literal values (a
template such as ``edge_type=R`` or ``node_index=<one of them>`` is no call), parsed
as Python's call syntax (:mod:`ast`), nothing of the prose around it. The plans once
read their calls this way; they read the parts now.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from typing import Any

from ark.session import Part
from ark.tools import ANSWER_TOOL_SPECS, TOOL_SPECS

#: A call written in a text: a tool name and its arguments.
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


def written_calls(part: Part) -> list[Call]:
    """The calls ``part`` carries, as :func:`calls_in` reads them from a text."""
    out: list[Call] = []
    for call in part.calls:
        if (call.tool, call.arguments) not in out:
            out.append((call.tool, call.arguments))
    return out


def writes_its_calls(part: Part) -> bool:
    """Whether the text of ``part``, as the model reads it, writes exactly the calls
    the part carries, in order."""
    return calls_in(part.render()) == written_calls(part)


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
