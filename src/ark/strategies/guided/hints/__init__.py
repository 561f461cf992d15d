"""Hints: session observers that add lines to a small model's observations.

:class:`ChainHints` (strategy ``ark-guided``, its ``GuidedAgent``) reads the
question's chain against the schema and, after each call, gives the next move ready
to copy; :mod:`ark.strategies.guided.hints._lines` writes its lines. A strategy composes it
(``ToolSession(index, observers=[ChainHints(index, question)])``); the session knows
only :class:`ark.session.SessionObserver`.
"""

from ark.strategies.guided.hints._chain import (
    READINGS_KEPT,
    ChainHints,
    QuestionReading,
    question_reading,
)

__all__ = ["READINGS_KEPT", "ChainHints", "QuestionReading", "question_reading"]
