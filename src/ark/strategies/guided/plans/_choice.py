"""Two plans the reading leaves close, put in words for the model to choose between.

When the reading's plan is not sure enough to run by itself but it and its rival (the
best reading that reaches other nodes, :func:`ark.reading.read_chain_and_rival`) are
sure together, which of the two answers is the one decision left. The model is asked
only that: each plan as the path it takes in the schema's words and the nodes it
reaches, its reply constrained to the number of one of them. That is a few tokens
instead of a whole run of calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ark.llm import Message
from ark.strategies.guided.hints import ChainHints
from ark.strategies.guided.plans._run import PlanRun

#: The answers named per plan; the rest are counted.
NAMED_ANSWERS = 3

CHOICE_SYSTEM = (
    "You choose how a question is read over a knowledge graph. Each reading starts at "
    "the node the question names and follows relations to the nodes it gives. Reply "
    "with the number of the reading that answers the question."
)


def plan_words(hints: ChainHints, run: PlanRun) -> str:
    """A plan as the model reads it: the node it starts from, each relation by its
    described label (a relation followed backwards says so), and the nodes it adds
    (``Joel_CAMPBELL → plays in club → is in country → gives: Spain``)."""
    index = hints.index
    g, described = index.graph, index.described
    chain = hints.chain
    if chain is None:
        raise ValueError("a plan without a chain has no words")
    parts = [g.name(chain.anchor)]
    for relation, way in chain.steps:
        doc = described.relation(relation)
        label = doc.label if doc is not None and doc.label else relation
        parts.append(label if way == "out" else f"{label} (backwards)")
    answer = run.answer
    names = ", ".join(g.name(n) for n in answer[:NAMED_ANSWERS])
    more = len(answer) - NAMED_ANSWERS
    gives = f"{names} and {more} more" if more > 0 else names
    return " → ".join(parts) + f" → gives: {gives}"


def choice_schema(n: int) -> dict[str, Any]:
    """The reply's JSON schema: ``{"reading": k}`` with ``k`` one of 1..``n``."""
    return {
        "type": "object",
        "properties": {"reading": {"type": "integer", "enum": list(range(1, n + 1))}},
        "required": ["reading"],
    }


def choice_messages(question: str, readings: Sequence[str]) -> list[Message]:
    """The conversation of a plan choice: the question and its readings, numbered."""
    listed = "\n".join(f"{i}. {words}" for i, words in enumerate(readings, 1))
    user = f"Question: {question}\n\nReadings:\n{listed}\n\nWhich reading answers the question?"
    return [Message(role="system", content=CHOICE_SYSTEM), Message(role="user", content=user)]


def read_choice(data: Any, n: int) -> int | None:
    """The 0-based plan the reply chose, or None for a reply that chose none of the
    ``n`` (the model then runs the steps, as without a choice)."""
    value = data.get("reading") if isinstance(data, dict) else None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= n:
        return None
    return value - 1
