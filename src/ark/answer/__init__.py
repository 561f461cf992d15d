"""Answers in words: after retrieval, a model writes a short answer from the retrieved
nodes' text only, citing node indices, or says the evidence does not answer.

Answering sits above retrieval: :func:`answer_question` (and :func:`aanswer_question`)
is the one pipeline, retrieve then answer, for every strategy; it returns an
:class:`AnsweredRetrieval` (the retrieval and its :class:`Answer`).
:func:`answer_retrieval` is its answer step on a retrieval already made: GraphSearch's
answer from the basis its workflow recorded, any other retrieval's from its ranking
and evidence passages. The writers: :func:`write_answer` writes in one call (the
pipeline, a strategy's basis and the evaluation's naive-RAG baseline call it);
:func:`write_answer_in_steps` reads the same nodes in lookups of one fact each (for
multi-hop questions and small models), falling back to the one call. "Reading" is
the linker's word for a question; the answer step *writes*.
"""

from ark.answer._pipeline import (
    ANSWER_EDGES,
    ANSWER_NODES,
    ANSWER_PASSAGES,
    AnsweredRetrieval,
    aanswer_question,
    answer_nodes,
    answer_question,
    answer_retrieval,
    path_edges,
    record_answer,
    write_from_basis,
)
from ark.answer._steps import DEFAULT_WRITER, WRITERS, write_answer_in_steps, writer_named
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
    "ANSWER_EDGES",
    "ANSWER_NODES",
    "ANSWER_PASSAGES",
    "ANSWER_SCHEMA",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_NODE_CHARS",
    "DEFAULT_WRITER",
    "MAX_ANSWER_CHARS",
    "MAX_CHARS_LIMIT",
    "MAX_QUESTION_CHARS",
    "WRITERS",
    "Answer",
    "AnswerStatus",
    "AnsweredRetrieval",
    "Edge",
    "aanswer_question",
    "answer_nodes",
    "answer_prompt",
    "answer_question",
    "answer_retrieval",
    "check_citations",
    "path_edges",
    "recited_note",
    "record_answer",
    "unsupported_terms",
    "write_answer",
    "write_answer_in_steps",
    "write_answer_sync",
    "write_from_basis",
    "writer_named",
]
