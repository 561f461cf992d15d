"""A scripted chat model for testing your own strategies, tools and pipelines.

:class:`ScriptedChatModel` implements :class:`ark.llm.ChatModel` without a model: a
list of replies (one per turn) or a Python function of the conversation (as
pydantic-ai's ``FunctionModel``) decides each assistant message, so a test drives
ARK's agent loop, a strategy of your own or an evaluation run through any path, in
milliseconds and offline. :func:`tool_call`, :func:`calls`, :func:`prose` and
:func:`json_reply` build the replies::

    from ark import Retriever
    from ark.testing import ScriptedChatModel, tool_call

    zemeckis = ...  # the node index of Robert Zemeckis in your index
    model = ScriptedChatModel([
        tool_call("search_in_graph", query="Robert Zemeckis"),
        tool_call("add_to_answer", node_indices=[zemeckis]),
        tool_call("finish"),
    ])
    result = Retriever(index, model, n_agents=1).retrieve("Who directed Forrest Gump?")

ARK's own test suite uses the same class.

:class:`SchemaChatModel` needs no script at all (as pydantic-ai's ``TestModel``): it
reads the tool schemas it is offered, calls every tool once with arguments generated
from its JSON schema, then calls ``finish`` (or replies with text), so a test checks
that a pipeline runs end to end, whatever tools it offers::

    from ark.testing import SchemaChatModel

    model = SchemaChatModel(arguments={"search_in_graph": {"query": "Robert Zemeckis"}})
    result = Retriever(index, model, n_agents=1).retrieve("Who directed Forrest Gump?")
    assert "search_in_graph" in result.trajectories[0].tool_names()

:func:`schema_value` is its generator: a value valid under a JSON schema.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ark.llm import Completion, Message, ToolCall, Usage, parse_json_reply

Script = Callable[[list[Message]], Message | Exception]
_ids = itertools.count()


def tool_call(name: str, raw: str | None = None, **arguments: Any) -> Message:
    """An assistant message calling one tool (``raw`` overrides the argument text)."""
    text = raw if raw is not None else json.dumps(arguments)
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError:
        parsed = None
    call = ToolCall(
        id=f"call_{next(_ids)}",
        name=name,
        arguments=parsed if isinstance(parsed, dict) else None,
        raw_arguments=text,
    )
    return Message(role="assistant", content="", tool_calls=(call,))


def calls(*messages: Message) -> Message:
    """Merge several single-call messages into one assistant message."""
    return Message(
        role="assistant", content="", tool_calls=tuple(c for m in messages for c in m.tool_calls)
    )


def prose(text: str) -> Message:
    return Message(role="assistant", content=text)


def json_reply(obj: Any) -> Message:
    """An assistant message holding ``obj`` as JSON text: a structured reply to a call
    made with ``response_schema=`` (the double parses it into ``Completion.data``)."""
    return Message(role="assistant", content=json.dumps(obj))


class ScriptedChatModel:
    """Replies from a list (one per call) or from a function of the messages."""

    def __init__(
        self,
        script: Script | Sequence[Message | Exception],
        *,
        delay: float = 0.0,
        name: str = "scripted-test-model",
        per_call: bool = False,
    ) -> None:
        """``per_call=True``: a list is replied in call order, for workflows whose every
        call is a fresh conversation (by default, by the conversation's turn)."""
        self.name = name
        self.delay = delay
        self.calls: list[list[Message]] = []
        self.schemas: list[dict[str, Any] | None] = []  # response_schema of each call
        self.temperatures: list[float] = []  # the temperature each call asked for
        if callable(script):
            self._script: Script = script
        else:
            replies = list(script)

            def from_list(messages: list[Message]) -> Message | Exception:
                turn = (
                    len(self.calls) - 1
                    if per_call
                    else sum(1 for m in messages if m.role == "assistant")
                )
                if turn >= len(replies):
                    return tool_call("finish")
                return replies[turn]

            self._script = from_list

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
        history = list(messages)
        self.calls.append(history)
        self.schemas.append(response_schema)
        self.temperatures.append(temperature)
        if self.delay:
            await asyncio.sleep(self.delay)
        reply = self._script(history)
        if isinstance(reply, Exception):
            raise reply
        return Completion(
            message=reply,
            usage=Usage(prompt_tokens=10 * len(history), completion_tokens=5),
            model=self.name,
            latency_s=self.delay,
            data=None if response_schema is None else parse_json_reply(reply.content),
        )


def schema_value(schema: Mapping[str, Any], *, text: str = "test") -> Any:
    """A value that is valid under the JSON schema ``schema``, the same at every call.

    Covers what tool and response schemas use: ``const`` and ``enum`` (the first
    value), ``anyOf``/``oneOf`` (the first option that is not ``null``), ``allOf`` of
    objects, local ``$ref`` into ``$defs``/``definitions``, objects (every required
    property, and the optional ones too: a call that omits nothing exercises the most),
    arrays (``minItems`` items, at least one, at most ``maxItems``), strings
    (``text``, cut or padded to ``minLength``/``maxLength``), integers and numbers
    (0 moved into ``minimum``/``maximum``, exclusive bounds included), booleans
    (``False``) and ``null``. A ``pattern`` or ``format`` is not read: a schema that
    needs one is given its value through :class:`SchemaChatModel`'s ``arguments``.
    """
    return _value(schema, schema, text)


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    while "$ref" in schema:
        ref = schema["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/"):
            raise ValueError(f"only local $ref are supported, not {ref!r}")
        target: Any = root
        for part in ref[2:].split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        schema = target
    return schema


def _value(schema: Mapping[str, Any], root: Mapping[str, Any], text: str) -> Any:
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            options = [_resolve(o, root) for o in schema[key]]
            chosen = next((o for o in options if o.get("type") != "null"), options[0])
            return _value(chosen, root, text)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            value = _value(part, root, text)
            if not isinstance(value, dict):
                return value
            merged.update(value)
        return merged
    kind = schema.get("type")
    if isinstance(kind, list):  # ["string", "null"]: the first kind that is not null
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    if kind == "object":
        props = schema.get("properties", {})
        return {name: _value(sub, root, text) for name, sub in props.items()}
    if kind == "array":
        n = max(int(schema.get("minItems", 1)), 1)
        n = min(n, int(schema.get("maxItems", n)))
        items = schema.get("items", {})
        if isinstance(items, list):  # tuple form: one schema per position
            return [_value(item, root, text) for item in items]
        return [_value(items, root, text) for _ in range(n)]
    if kind == "string":
        value = text
        if "maxLength" in schema:
            value = value[: int(schema["maxLength"])]
        return value.ljust(int(schema.get("minLength", 0)), "x")
    if kind in ("integer", "number"):
        number = _number(schema, integer=kind == "integer")
        return int(number) if kind == "integer" else float(number)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    raise ValueError(f"no value for a schema of type {kind!r}")


def _number(schema: Mapping[str, Any], *, integer: bool) -> float:
    """0, moved inside the bounds (an exclusive bound is left by one for an integer)."""
    step = 1 if integer else 1e-6
    low = schema.get("minimum")
    if "exclusiveMinimum" in schema and not isinstance(schema["exclusiveMinimum"], bool):
        low = schema["exclusiveMinimum"] + step
    high = schema.get("maximum")
    if "exclusiveMaximum" in schema and not isinstance(schema["exclusiveMaximum"], bool):
        high = schema["exclusiveMaximum"] - step
    value: float = 0
    if low is not None and value < low:
        value = math.ceil(low) if integer else low
    if high is not None and value > high:
        value = math.floor(high) if integer else high
    return value


class SchemaChatModel:
    """Writes valid tool calls from the tool schemas it is offered, with no script.

    The first reply calls every offered tool once (all in one message, or one per reply
    with ``parallel=False``), except the ``final_tools``, with arguments from
    :func:`schema_value` over the tool's ``parameters``; ``arguments`` fixes some of
    them per tool (``{"search_in_graph": {"query": "Robert Zemeckis"}}``), since a
    generated query or node index is valid but finds nothing in particular. Then it
    calls the first final tool offered (``finish`` for ARK's agent), again at every
    later turn, or, with none offered, replies with ``text``. A call made with a
    ``response_schema`` is answered with a value generated from that schema (in
    ``Completion.data``), so structured calls — a relation description, an answer —
    run as well. ``calls`` and ``schemas`` record what it was asked, as
    :class:`ScriptedChatModel` does.
    """

    def __init__(
        self,
        *,
        arguments: Mapping[str, Mapping[str, Any]] | None = None,
        final_tools: Sequence[str] = ("finish",),
        parallel: bool = True,
        text: str = "test",
        name: str = "schema-test-model",
    ) -> None:
        self.name = name
        self.arguments = {tool: dict(args) for tool, args in (arguments or {}).items()}
        self.final_tools = tuple(final_tools)
        self.parallel = parallel
        self.text = text
        self.calls: list[list[Message]] = []
        self.schemas: list[dict[str, Any] | None] = []

    def tool_arguments(self, tool: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments this model writes for one OpenAI-style tool definition."""
        function = tool.get("function", tool)
        parameters = function.get("parameters") or {"type": "object", "properties": {}}
        generated = schema_value(parameters, text=self.text)
        if not isinstance(generated, dict):
            raise ValueError(f"tool {function.get('name')!r}: parameters are not an object")
        return {**generated, **self.arguments.get(function["name"], {})}

    def reply(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> Message:
        """The next assistant message for this conversation and these tools."""
        called = {c.name for m in messages if m.role == "assistant" for c in m.tool_calls}
        offered = [t.get("function", t) for t in tools]
        todo = [t for t in offered if t["name"] not in self.final_tools and t["name"] not in called]
        if todo:
            chosen = todo if self.parallel else todo[:1]
            return calls(*(tool_call(t["name"], **self.tool_arguments(t)) for t in chosen))
        final = next((t for t in offered if t["name"] in self.final_tools), None)
        if final is not None:
            return tool_call(final["name"], **self.tool_arguments(final))
        return prose(self.text)

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
        history = list(messages)
        self.calls.append(history)
        self.schemas.append(response_schema)
        if response_schema is not None:
            data = schema_value(response_schema, text=self.text)
            message = json_reply(data)
        else:
            data = None
            message = self.reply(history, tools)
        return Completion(
            message=message,
            usage=Usage(prompt_tokens=10 * len(history), completion_tokens=5),
            model=self.name,
            latency_s=0.0,
            data=data,
        )


__all__ = [
    "SchemaChatModel",
    "Script",
    "ScriptedChatModel",
    "calls",
    "json_reply",
    "prose",
    "schema_value",
    "tool_call",
]
