"""What an observer adds to an observation, as data: the parts of the session's
observer protocol.

An aid (the hints of ``ark-guided``) returns a :class:`Part` — a :class:`Hint` after
a search or a refused repeat, a :class:`Note` after an add — that carries what the
line says as data: its ``kind`` (the aid's own name for what the line does), the
calls it offers ready to copy (:class:`NextCall`, the arguments a dict), and the
nodes it names by index. The session renders each part to the text the model reads
(:meth:`Part.render`) and keeps the parts beside it (``CallOutcome.parts``): code
that needs the offered call (the plans of ``ark-guided``, a drafted prediction) and
tests read the parts, never the prose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True)
class NextCall:
    """A call a line offers ready to copy: the tool and its JSON arguments, in the
    order the line writes them. A template (``edge_type=R``) is no call."""

    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Part:
    """A line an observer adds to a call's observation: ``text`` as the model reads
    it after the part's label (none here: the text alone), ``kind`` what the line
    does, ``calls`` the calls it writes ready to copy, in order, and ``nodes`` the
    nodes it names by index (``[i] name``), in order."""

    text: str
    kind: str = ""
    calls: tuple[NextCall, ...] = ()
    nodes: tuple[int, ...] = ()
    #: Written before the text (``"Hint: ..."``); none for a plain part.
    label: ClassVar[str] = ""

    @property
    def call(self) -> NextCall | None:
        """The one call the line offers, or None when it offers none or a choice of
        several (a choice is the model's)."""
        return self.calls[0] if len(self.calls) == 1 else None

    def render(self) -> str:
        """The line as the model reads it."""
        return f"{self.label}: {self.text}" if self.label else self.text


@dataclass(frozen=True)
class Hint(Part):
    """Guidance after a search or a refused repeat (``Hint: ...``): what the results
    are and the next move."""

    label: ClassVar[str] = "Hint"


@dataclass(frozen=True)
class Note(Part):
    """A reminder after an add (``Note: ...``): the node was a step on the way, or
    the question needs more."""

    label: ClassVar[str] = "Note"
