"""Answers in words: after retrieval, a model writes a short answer from the retrieved
nodes' text only, citing node indices, or says the evidence does not answer.

:func:`write_answer` is the one entry point; ``Retriever.answer`` (retrieval, then
this step over the ranking and its evidence passages), GraphSearch's final step and
the evaluation's naive-RAG baseline call it.
"""

from ark.answer._write import (
    ANSWER_SCHEMA,
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_NODE_CHARS,
    MAX_CHARS_LIMIT,
    MAX_QUESTION_CHARS,
    Answer,
    AnswerStatus,
    Edge,
    answer_prompt,
    write_answer,
    write_answer_sync,
)

__all__ = [
    "ANSWER_SCHEMA",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_NODE_CHARS",
    "MAX_CHARS_LIMIT",
    "MAX_QUESTION_CHARS",
    "Answer",
    "AnswerStatus",
    "Edge",
    "answer_prompt",
    "write_answer",
    "write_answer_sync",
]
