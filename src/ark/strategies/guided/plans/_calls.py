"""The calls a hint offers, as the plans run them.

The hints write their next move as a call in the tools' own syntax
(``search_in_neighborhood(node_index=[3, 7], edge_type="has_genre")``): a small model
copies it. The plan runner runs that same call without the model, and it reads the
call from the hint's part (:class:`ark.session.NextCall`), never from the prose: the
text is written from the part, so the call the model reads is the call the plan runs.
"""

from __future__ import annotations

import copy
from typing import Any

from ark.session import NextCall, Part

#: The call the plan runs: a tool name and its arguments.
Call = tuple[str, dict[str, Any]]


def as_call(call: NextCall) -> Call:
    """``call`` as the plan runs it: its arguments copied, so a run never changes the
    part it came from."""
    return call.tool, copy.deepcopy(call.arguments)


def calls_in(part: Part | None) -> list[Call]:
    """Every call ``part`` offers ready to copy, in the order written (none for no
    part)."""
    return [as_call(c) for c in part.calls] if part is not None else []


def ready_call(part: Part | None) -> Call | None:
    """The one call ``part`` offers, or None when it offers none or a choice of
    several (a choice is the model's)."""
    call = part.call if part is not None else None
    return as_call(call) if call is not None else None


def concluding_add(part: Part | None) -> Call | None:
    """The add a choice offers beside another call (a hop for words the reading leaves
    unexplained, then *only if nothing more is asked, add these*), or None. The chain
    the reading scored best ends there, the words it leaves unexplained already
    weighed, so the add is the reading's own conclusion: the plan may take it, and its
    confidence, told so, decides whether the plan is sure of it."""
    calls = part.calls if part is not None else ()
    if len(calls) > 1 and calls[-1].tool == "add_to_answer":
        return as_call(calls[-1])
    return None
