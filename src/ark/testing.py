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
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Sequence
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


__all__ = [
    "Script",
    "ScriptedChatModel",
    "calls",
    "json_reply",
    "prose",
    "tool_call",
]
