"""The answer writers by name, as ``--writer`` and ``writer=`` name them."""

from __future__ import annotations

from typing import Any

from ark.answer._conversation import write_answer_in_conversation
from ark.answer._steps import write_answer_in_steps
from ark.answer._write import write_answer
from ark.errors import ArkError

#: The answer writers by name: ``one`` (one call over every node), ``steps``
#: (:func:`write_answer_in_steps`) and ``conversation``
#: (:func:`write_answer_in_conversation`: one more turn of the agent's conversation,
#: else in steps). All take the same arguments.
WRITERS = {
    "one": write_answer,
    "steps": write_answer_in_steps,
    "conversation": write_answer_in_conversation,
}

#: The writer ``ark.answer.answer_question``, ``ark ask --answer`` and ``ark eval
#: --answer`` use unless told: in steps (why: docs/decisions/answer-and-tools.md).
DEFAULT_WRITER = "steps"


def writer_named(name: str) -> Any:
    """The answer writer called ``name`` (see :data:`WRITERS`)."""
    try:
        return WRITERS[name]
    except KeyError:
        known = ", ".join(WRITERS)
        raise ArkError(f"unknown answer writer {name!r}; use one of {known}") from None
