"""The tool session: one retrieval's state behind the tools.

A :class:`ToolSession` dispatches the model's calls to the tools, keeps the answer
list, the nodes seen and explored, and refuses repeats and unseen nodes with error
codes; every strategy runs its calls through one. Aids (the hints of ``ark-guided``)
watch it as :class:`SessionObserver` objects a strategy composes; the session knows
only that protocol. Observers return typed parts (:class:`Hint`, :class:`Note`, with the
calls they offer as :class:`NextCall`): the session renders them into the observation
and keeps them in :attr:`CallOutcome.parts`, where code and tests read them.
"""

from ark.session._parts import Hint, NextCall, Note, Part
from ark.session._session import (
    ANSWER_TOOLS,
    CallOutcome,
    SessionObserver,
    ToolSession,
    normalise_arguments,
)

__all__ = [
    "ANSWER_TOOLS",
    "CallOutcome",
    "Hint",
    "NextCall",
    "Note",
    "Part",
    "SessionObserver",
    "ToolSession",
    "normalise_arguments",
]
