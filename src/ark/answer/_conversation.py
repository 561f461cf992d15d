"""The answer written at the end of the agent's own conversation.

Why: the other writers show the model the retrieved nodes again in a prompt of their
own, so a local model reads the passages a second time (the agent read them in its
tool results) before it writes a word: on a graph built from documents that is most
of the answer step's seconds (``docs/decisions/answer-and-tools.md``). When one agent
retrieved, its conversation (the system turn with the tools, the question, every call
and tool result, as the model read them) is a prefix the backend's cache still holds;
one more user turn asks for the answer, and only that turn and the reply are new
tokens. The reply is :data:`ark.answer.ANSWER_SCHEMA`'s JSON, read as every writer's
(:func:`read_reply`): citations kept among the nodes the tool results showed, the
claim checked against their text.

Where the conversation cannot answer (several agents, a strategy with no
conversation, a model error, a bad reply, or an answer that is not ``answered``), the
reading in steps (:func:`ark.answer.write_answer_in_steps`) answers from the retrieved
nodes instead, so this writer never has less to go on than that one; the first try is
kept in :attr:`Answer.steps`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from ark.answer._steps import write_answer_in_steps
from ark.answer._write import (
    ANSWER_SCHEMA,
    DEFAULT_MAX_TOKENS,
    MAX_QUESTION_CHARS,
    Answer,
    Edge,
    _graph,
    read_reply,
)
from ark.graph import Graph
from ark.index import Index
from ark.llm import ChatModel, LLMError, Message
from ark.retrieval import RetrievalResult
from ark.tools import ToolConfig, tool_specs
from ark.trajectory import Trajectory

#: The user turn that ends the conversation: the question again (the conversation's
#: first turn may be far above), and the answer's JSON.
ANSWER_TURN = (
    "The search is over. Answer the question from the tool results above only, using "
    "no outside knowledge: the shortest phrase that answers it (a name, a date, a "
    "number, a few words; not a sentence), citing the [index] of each node it comes "
    "from. If the results do not answer it, set answerable to false and say what is "
    "missing. Reply with JSON only: "
    '{{"answerable": true, "answer": "...", "citations": [12, 34]}}.\n'
    "Question: {question}"
)


@dataclass(frozen=True)
class Conversation:
    """One agent's conversation as its model read it, and the nodes it was shown."""

    messages: tuple[Message, ...]
    #: The tool specs the conversation offered (rendered in its system turn).
    tools: tuple[dict[str, Any], ...]
    #: Nodes its tool results showed (returned, explored or added), first seen first.
    shown: tuple[int, ...]


def conversation_of(result: RetrievalResult, index: Index | Graph) -> Conversation | None:
    """The conversation of ``result``'s one agent, or None: several agents (their
    answers are fused, no one conversation holds them), no messages recorded (a
    strategy that is not a tool-calling agent), or an agent that ended in an error."""
    if len(result.trajectories) != 1:
        return None
    return trajectory_conversation(result.trajectories[0], index)


def trajectory_conversation(trajectory: Trajectory, index: Index | Graph) -> Conversation | None:
    """:func:`conversation_of` for one trajectory: its messages, and the tools its
    agent offered, rebuilt from its recorded tool settings and the graph's schema
    (what the agent loop renders; ``ark.strategies.ark``)."""
    recorded = trajectory.config.get("tools")
    if trajectory.error or not trajectory.messages or not isinstance(recorded, dict):
        return None
    messages = tuple(Message.from_dict(m) for m in trajectory.messages)
    if messages[0].role != "system" or not any(m.tool_calls for m in messages):
        return None
    known = {f.name for f in fields(ToolConfig)}
    config = ToolConfig(**{k: v for k, v in recorded.items() if k in known})
    graph = _graph(index)
    tools = tool_specs(index.schema, config, answer_tools=True)  # as the agent's
    shown: dict[int, None] = {}
    for step in trajectory.steps:
        for call in step.tool_calls:
            ends = [call.center, *(call.centers or ()), *call.nodes, *(call.added or ())]
            for node in ends:
                if node is not None and 0 <= node < graph.n_nodes:
                    shown[int(node)] = None
    return Conversation(messages, tuple(tools), tuple(shown))


async def write_answer_in_conversation(
    model: ChatModel,
    question: str,
    index_or_graph: Index | Graph,
    nodes: Sequence[int],
    *,
    edges: Sequence[Edge] = (),
    conversation: Conversation | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    seed: int | None = 0,
    **options: Any,
) -> Answer:
    """``model``'s short answer to ``question`` as one more turn of ``conversation``
    (greedy), citing the nodes its tool results showed; without a conversation, or
    where it gives no answer, :func:`ark.answer.write_answer_in_steps` over ``nodes``
    and ``edges`` (``options`` go to it: the text budget, ``temperature``)."""

    async def in_steps(why: str | None, first: Answer | None = None) -> Answer:
        answer = await write_answer_in_steps(
            model,
            question,
            index_or_graph,
            nodes,
            edges=edges,
            max_tokens=max_tokens,
            seed=seed,
            **options,
        )
        if why is None:
            return answer
        spent = (0, 0) if first is None else (first.prompt_tokens, first.completion_tokens)
        return replace(
            answer,
            steps=[{"conversation": why}, *answer.steps],
            prompt_tokens=answer.prompt_tokens + spent[0],
            completion_tokens=answer.completion_tokens + spent[1],
            latency_s=round(answer.latency_s + (first.latency_s if first else 0.0), 4),
        )

    if conversation is None:
        return await in_steps(None)
    started = time.perf_counter()
    q = question if len(question) <= MAX_QUESTION_CHARS else question[:MAX_QUESTION_CHARS]
    turn = Message(role="user", content=ANSWER_TURN.format(question=q))
    try:
        completion = await model.complete(
            [*conversation.messages, turn],
            list(conversation.tools),
            temperature=0.0,
            max_tokens=max_tokens,
            seed=seed,
            response_schema=ANSWER_SCHEMA,
        )
    except LLMError as exc:
        failed = Answer("", [], False, "model_error", str(exc))
        return await in_steps(
            f"the model failed: {exc}", replace(failed, latency_s=time.perf_counter() - started)
        )
    seen = {"nodes": list(conversation.shown)}
    answer = read_reply(completion, question, index_or_graph, set(conversation.shown), seen)
    if answer.status != "answered":
        return await in_steps(answer.reason or answer.status, answer)
    return replace(answer, steps=[{"conversation": "answered"}])


#: The writers that take the retrieval's ``conversation=`` (:func:`conversation_of`).
READS_CONVERSATION = frozenset({write_answer_in_conversation})
