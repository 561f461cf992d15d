"""Answers in words: after retrieval, a model writes a short answer from the retrieved
nodes' text only, citing node indices, or says the evidence does not answer.

:func:`write_answer` reads in one call; ``Retriever.answer`` (retrieval, then this
step over the ranking and its evidence passages), GraphSearch's final step and the
evaluation's naive-RAG baseline call it. :func:`write_answer_in_steps` reads the same
nodes in lookups of one fact each (for multi-hop questions and small models), falling
back to the one call.
"""

from ark.answer._steps import DEFAULT_READER, READERS, reader_named, write_answer_in_steps
from ark.answer._support import check_citations, recited_note, unsupported_terms
from ark.answer._write import (
    ANSWER_SCHEMA,
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_NODE_CHARS,
    MAX_ANSWER_CHARS,
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
    "DEFAULT_READER",
    "MAX_ANSWER_CHARS",
    "MAX_CHARS_LIMIT",
    "MAX_QUESTION_CHARS",
    "READERS",
    "Answer",
    "AnswerStatus",
    "Edge",
    "answer_prompt",
    "check_citations",
    "reader_named",
    "recited_note",
    "unsupported_terms",
    "write_answer",
    "write_answer_in_steps",
    "write_answer_sync",
]
