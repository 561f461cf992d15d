"""The text a tool call's format fixes next: drafts that need no guess.

Why: most of a tool call is format, not decision. Once a reply has begun
``<tool_call>\\n{"name": "search_in_n``, the rest of the tool's name, ``", "arguments":
{"`` and the first required key follow from the tool specs alone; so does a key once
its first letters leave one candidate, and ``}\\n</tool_call>`` once the arguments
close. Decoded one token at a time, each of those characters costs a full decode of the
model. :class:`ToolCallSkeleton` says which text is fixed; the lookup decoder
(``_lookup.py``) decodes its tokens as a draft in one batch, and the sampler still
checks every position, so the output is exactly what token-by-token decoding writes
(SGLang's "jump-forward" appends such text unchecked; re-tokenising it can change what
the model writes, which this never does).

The format is the one the grammar (``tool_call_grammar``) and the chat template share:
``json.dumps`` spacing (``", "`` and ``": "``), keys in the grammar's order (required
properties first, in the schema's order, then optional ones). Where the model spaces
differently, nothing is drafted.

A reply under a ``response_schema`` (the answer step's plan, lookups and one call,
GraphSearch's modules) is one JSON object whose keys the schema fixes the same way:
:class:`SchemaSkeleton` drafts its opening ``{"key":`` and each later required key, as
the tool-call skeleton drafts a call's arguments. Only the top-level object's keys: an
object nested in a value (``ark index describe``'s items) is the model's to write.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ark.llm.local._chat_format import TOOL_CALL_CLOSE, TOOL_CALL_OPEN

_HEAD = TOOL_CALL_OPEN + '{"name": "'
_ARGUMENTS = ', "arguments": {'


class ToolCallSkeleton:
    """For a set of tool specs (OpenAI-style ``{"type": "function", "function": ...}``):
    :meth:`forced` gives the text that must follow a reply so far."""

    def __init__(self, tools: Sequence[dict[str, Any]]) -> None:
        self.names = [t["function"]["name"] for t in tools]
        #: Per tool, its argument keys in the grammar's order, and which are required.
        self.keys: dict[str, list[str]] = {}
        self.required: dict[str, set[str]] = {}
        for t in tools:
            params = t["function"].get("parameters") or {}
            props = list(params.get("properties") or {})
            required = set(params.get("required") or ())
            self.keys[t["function"]["name"]] = [k for k in props if k in required] + [
                k for k in props if k not in required
            ]
            self.required[t["function"]["name"]] = required

    def forced(self, text: str) -> str:
        """The continuation of ``text`` (the reply so far) that the format fixes; empty
        where the next character is the model's choice."""
        if len(text) < len(_HEAD):
            return _HEAD[len(text) :] if _HEAD.startswith(text) else ""
        if not text.startswith(_HEAD):
            return ""
        body = text[len(_HEAD) :]
        quote = body.find('"')
        if quote < 0:  # the tool's name so far
            names = [n for n in self.names if n.startswith(body)]
            after = f'"{_ARGUMENTS}{self._first_key(names[0])}' if len(names) == 1 else ""
            return _completion(body, names, after)
        name, rest = body[:quote], body[quote + 1 :]
        if name not in self.keys:
            return ""
        after = _ARGUMENTS + self._first_key(name)
        if len(rest) < len(after):
            return after[len(rest) :] if after.startswith(rest) else ""
        if not rest.startswith(_ARGUMENTS):
            return ""
        return self._in_arguments(name, rest[len(_ARGUMENTS) - 1 :])

    def _first_key(self, name: str) -> str:
        keys = self.keys[name]
        if not keys:
            return "}}" + TOOL_CALL_CLOSE
        if keys[0] in self.required[name]:
            return f'"{keys[0]}":'
        return ""  # every key optional: "}" or a key, the model's choice

    def _in_arguments(self, name: str, args: str, end: str = "}" + TOOL_CALL_CLOSE) -> str:
        """``args`` starts at the arguments' ``{``: what follows it, if fixed (``end``:
        the text after the object closes)."""
        depth, in_string, escaped = 0, False, False
        key_at: int | None = None  # where the key being written starts
        used: list[str] = []
        expecting_key = False
        closed_at: int | None = None
        for i, ch in enumerate(args):
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
                    if key_at is not None:
                        used.append(args[key_at:i])
                        key_at = None
                continue
            if ch == '"':
                in_string = True
                if depth == 1 and expecting_key:
                    key_at, expecting_key = i + 1, False
            elif ch in "{[":
                depth += 1
                expecting_key = depth == 1
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    closed_at = i
                    break
            elif ch == "," and depth == 1:
                expecting_key = True
        if closed_at is not None:  # the arguments are closed: the call's end is fixed
            tail = args[closed_at + 1 :]
            return end[len(tail) :] if end.startswith(tail) and len(tail) < len(end) else ""
        if in_string and key_at is not None:  # a key being written
            partial = args[key_at:]
            return _completion(partial, self._next_keys(name, used, partial), '":')
        if expecting_key and not in_string and depth == 1:
            after_comma = args[args.rfind(",") + 1 :]
            candidates = self._next_keys(name, used, "")
            if len(candidates) == 1 and after_comma in ("", " "):
                return (" " if after_comma == "" else "") + f'"{candidates[0]}":'
        return ""

    def _next_keys(self, name: str, used: list[str], partial: str) -> list[str]:
        """The keys the grammar allows after ``used``: the next required one if any is
        left, else any optional key after the last one used."""
        keys = self.keys[name]
        required = self.required[name]
        left = [k for k in keys if k in required and k not in used]
        if left:
            candidates = left[:1]
        else:
            start = max((keys.index(k) + 1 for k in used if k in keys), default=0)
            candidates = [k for k in keys[start:] if k not in required]
        return [k for k in candidates if k.startswith(partial)]


def _completion(partial: str, candidates: list[str], suffix: str) -> str:
    """What the candidates that begin with ``partial`` share after it (all of the one
    left, and ``suffix``, when only one is)."""
    if not candidates:
        return ""
    if len(candidates) == 1:
        return candidates[0][len(partial) :] + suffix
    shared = min(candidates)
    for other in candidates:  # the longest prefix every candidate has
        while not other.startswith(shared):
            shared = shared[:-1]
    return shared[len(partial) :]


class SchemaSkeleton(ToolCallSkeleton):
    """For a ``response_schema`` whose reply is one JSON object with named properties:
    :meth:`forced` gives the text its keys fix next (the opening ``{"key":``, each
    later required key once the model writes the comma before it); empty where the
    schema is no such object."""

    _NAME = ""  # the one "tool": the object's keys are kept as a tool's arguments

    def __init__(self, schema: dict[str, Any]) -> None:
        props = schema.get("properties") if schema.get("type") == "object" else None
        params = schema if isinstance(props, dict) and props else {}
        super().__init__([{"function": {"name": self._NAME, "parameters": params}}])
        self.has_keys = bool(params)

    def forced(self, text: str) -> str:
        if not self.has_keys:
            return ""
        first = self._first_key(self._NAME)
        head = "{" + (first if first.startswith('"') else "")
        if len(text) < len(head):
            return head[len(text) :] if head.startswith(text) else ""
        if not text.startswith("{"):
            return ""
        return self._in_arguments(self._NAME, text, end="")


def _drafter(
    llm: Any, skeleton: ToolCallSkeleton, prompt: Sequence[int]
) -> Callable[[list[int]], list[int]]:
    """The tokens generated after ``prompt`` -> the tokens of the text ``skeleton``
    fixes next, tokenized as the whole reply would be (so a draft continues the
    model's own tokens where they are the usual ones)."""

    def draft(tokens: list[int]) -> list[int]:
        text = llm.detokenize(tokens, prev_tokens=prompt).decode("utf-8", errors="ignore")
        more = skeleton.forced(text)
        if not more:
            return []
        ids = llm.tokenize((text + more).encode(), add_bos=False, special=True)
        if ids[: len(tokens)] == list(tokens):
            return ids[len(tokens) :]
        return llm.tokenize(more.encode(), add_bos=False, special=True)

    return draft


def schema_drafter(
    llm: Any, schema: dict[str, Any], prompt: Sequence[int]
) -> Callable[[list[int]], list[int]] | None:
    """For ``decode_with_lookup(forced=...)`` on a ``response_schema`` reply: the keys
    :class:`SchemaSkeleton` fixes, as :func:`format_drafter` drafts a call's; None
    where the schema is not an object with named properties."""
    skeleton = SchemaSkeleton(schema)
    return _drafter(llm, skeleton, prompt) if skeleton.has_keys else None


def format_drafter(
    llm: Any, tools: Sequence[dict[str, Any]], prompt: Sequence[int]
) -> Callable[[list[int]], list[int]]:
    """For ``decode_with_lookup(forced=...)``: the tokens generated after ``prompt`` ->
    the tokens of the text the call's format fixes next, tokenized as the whole reply
    would be (so a draft continues the model's own tokens where they are the usual
    ones). ``llm``: a ``llama_cpp.Llama`` (its vocabulary is enough)."""
    return _drafter(llm, ToolCallSkeleton(tools), prompt)


def predicted_text(tools: Sequence[dict[str, Any]], name: str, arguments: dict[str, Any]) -> str:
    """The reply that calls ``name`` with ``arguments`` as the grammar has the model
    write it (keys in the grammar's order, ``json.dumps`` spacing), or "" when the
    grammar could not write it (a tool or key it does not offer)."""
    skeleton = ToolCallSkeleton(tools)
    keys = skeleton.keys.get(name)
    if keys is None or any(k not in keys for k in arguments):
        return ""
    ordered = {k: arguments[k] for k in keys if k in arguments}
    try:
        body = json.dumps({"name": name, "arguments": ordered}, ensure_ascii=False)
    except (TypeError, ValueError):  # not JSON: nothing the grammar could write
        return ""
    return TOOL_CALL_OPEN + body + TOOL_CALL_CLOSE


def prediction_drafter(
    llm: Any, text: str, prompt: Sequence[int]
) -> Callable[[list[int]], list[int]]:
    """For ``decode_with_lookup(predicted=...)``: the tokens generated after ``prompt``
    -> the rest of the predicted reply ``text`` while the reply so far is a prefix of
    it (tokenized as the whole reply would be), else nothing."""

    def draft(tokens: list[int]) -> list[int]:
        so_far = llm.detokenize(tokens, prev_tokens=prompt).decode("utf-8", errors="ignore")
        if len(so_far) >= len(text) or not text.startswith(so_far):
            return []
        ids = llm.tokenize(text.encode(), add_bos=False, special=True)
        if ids[: len(tokens)] == list(tokens):
            return ids[len(tokens) :]
        return llm.tokenize(text[len(so_far) :].encode(), add_bos=False, special=True)

    return draft
