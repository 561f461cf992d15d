"""Session observers: what watches a tool session and adds lines to its observations.

The session dispatches calls and keeps the answer; aids for a model (the chain hints
of ``ark-guided``, :mod:`ark.agent.hints`) watch what it did and append lines to what
the model reads next. A strategy composes them
(``ToolSession(index, observers=[...])``); the session knows only this protocol, so a
new aid needs no change to the session.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ark.agent._session import ToolSession
    from ark.tools import MultiNeighborhoodResult, SearchResult


class SessionObserver:
    """Subclass and override the hooks you need; each returns a line to append to the
    call's observation, or ``None`` (or ``""``) for none.

    Hooks run after the session has updated its own state (``seen``, ``explored``,
    ``answer``), in the order the observers were given; each sees the session.
    """

    #: Nodes this aid wrote by index in its lines (a hint naming the question's
    #: nodes) that no result has shown: the model has read them, so a session that
    #: refuses unseen nodes (``ToolSession(refuse_unseen=True)``) lets it explore them.
    shown: Set[int] = frozenset()

    def after_search(
        self,
        session: ToolSession,
        name: str,
        arguments: Mapping[str, Any],
        result: SearchResult | MultiNeighborhoodResult,
        centers: list[int],
    ) -> str | None:
        """After a retrieval call that ran (with or without hits; a tool error is not
        a search). ``centers``: the nodes a neighborhood call explored (empty after a
        global search). The line goes on a line of its own after the results."""
        return None

    def after_repeat(
        self, session: ToolSession, name: str, arguments: Mapping[str, Any]
    ) -> str | None:
        """After a call the session refused as a repeat of an earlier one; the line
        continues the refusal's sentence."""
        return None

    def after_add(self, session: ToolSession, added: list[int]) -> str | None:
        """After an ``add_to_answer`` that appended ``added`` (never empty); the line
        continues the call's report."""
        return None
