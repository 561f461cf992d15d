"""The MCP ``answer`` tool: an answer in words, from the graph's text only, with citations.

A client that ran its own agent over ARK's tools passes the question and the nodes it
retrieved (best first): the server's model writes a short answer from their text
(the default answer writer, :data:`ark.answer.DEFAULT_WRITER`: in lookups of one fact
each), citing node indices, or says the evidence does not answer. A client that
passes only the question gets ARK's own retrieval first (:func:`ark.answer.answer_question`:
the ranking, its evidence passages, and each citation's evidence paths) — slower,
since the agent makes several model calls.

The model is the server's: one given to :func:`~ark.serve.mcp_server.make_server`, or
else :func:`ark.llm.make_chat_model`'s default — the local model, offline, unless
``ARK_BASE_URL``/``OPENAI_BASE_URL`` point at a server — loaded on the first ``answer``
call. Answers are written one at a time (a local model decodes one sequence). Like the
other tools it reads the index and changes nothing; a bad model reply or a model that
fails comes back as an unanswered answer that says why, not as a tool error.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ark._coerce import as_int
from ark._safe import short_repr
from ark.answer import DEFAULT_WRITER, Answer, answer_question, writer_named
from ark.index import Index
from ark.llm import ChatModel, LLMError
from ark.retrieval import Retriever
from ark.serve._service import CallError
from ark.tools import ErrorCode

__all__ = ["ANSWER_SPEC", "MAX_ANSWER_NODES", "AnswerError", "AnswerService", "AnswerSettings"]

#: Most nodes one ``answer`` call reads.
MAX_ANSWER_NODES = 50

ANSWER_SPEC: dict[str, Any] = {
    "name": "answer",
    "description": (
        "A short answer in words to a question, written by ARK's model from the text of "
        "graph nodes only, citing node indices - or saying the evidence does not answer "
        "it. Pass the nodes you retrieved (node_indices, best first) to have them read; "
        "without them ARK's own agent retrieves first (slower: several model calls) and "
        "the reply adds its ranking, evidence passages and each citation's paths."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "question": {"type": "string", "description": "The question to answer."},
            "node_indices": {
                "type": "array",
                "items": {"type": "integer", "minimum": 0},
                "maxItems": MAX_ANSWER_NODES,
                "description": "Nodes to answer from, best first (default: ARK retrieves).",
            },
        },
        "required": ["question"],
        "additionalProperties": False,
    },
}


class AnswerError(CallError):
    """A bad ``answer`` call: its error code and message."""


@dataclass(frozen=True)
class AnswerSettings:
    """How the server retrieves when a client passes no nodes: ``ark-guided`` with one
    agent by default (the strategy made for small local models), greedy-seeded."""

    strategy: str = "ark-guided"
    agents: int = 1
    max_steps: int = 12
    seed: int = 0


class AnswerService:
    """The server's model, made on first use, and the ``answer`` tool over it."""

    def __init__(
        self,
        llm: ChatModel | None = None,
        settings: AnswerSettings | None = None,
        make_model: Callable[[], ChatModel] | None = None,
    ) -> None:
        self._llm = llm
        self._make = make_model
        self.settings = settings or AnswerSettings()
        self._lock = threading.Lock()  # one answer at a time: one model

    def _model(self) -> ChatModel:
        if self._llm is None:
            if self._make is None:
                from ark.llm import make_chat_model

                self._llm = make_chat_model()
            else:
                self._llm = self._make()
        return self._llm

    def answer(self, index: Index, args: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """``(text, structured)`` for the tool; raises :class:`AnswerError` on a bad
        argument (the server returns it as a tool error with its code)."""
        question, nodes = _arguments(index, args)
        with self._lock:
            try:
                llm = self._model()
            except (LLMError, OSError, ValueError) as exc:
                reason = f"the model could not be loaded: {exc}"
                answer = Answer("", [], False, "model_error", reason)
                return _render(index, answer, {}), {
                    "question": question,
                    "answer": answer.to_dict(),
                }
            if nodes is not None:
                write = writer_named(DEFAULT_WRITER)
                answer = asyncio.run(write(llm, question, index, nodes))
                structured = {"question": question, "answer": answer.to_dict()}
                return _render(index, answer, {}), structured
            s = self.settings
            retriever = Retriever(
                index, llm, strategy=s.strategy, n_agents=s.agents, max_steps=s.max_steps,
                seed=s.seed,
            )  # fmt: skip
            answered = answer_question(retriever, question)
        result = answered.retrieval
        structured = {
            "question": question,
            "answer": answered.answer_dict(),
            "ranking": [r.to_dict() for r in result.ranking],
            "passages": [p.to_dict() for p in result.passages],
        }
        return _render(index, answered.answer, answered.cited_paths()), structured


def _arguments(index: Index, args: Mapping[str, Any]) -> tuple[str, list[int] | None]:
    unknown = set(args) - {"question", "node_indices"}
    if unknown:
        raise AnswerError(
            ErrorCode.BAD_ARGUMENT,
            f"unknown argument(s) {short_repr(sorted(unknown))}; this tool takes "
            "['node_indices', 'question'].",
        )
    question = args.get("question")
    if not isinstance(question, str) or not question.strip():
        raise AnswerError(ErrorCode.EMPTY_QUERY, "question must be a non-blank string.")
    raw = args.get("node_indices")
    if raw is None:
        return question, None
    if not isinstance(raw, list) or not 0 < len(raw) <= MAX_ANSWER_NODES:
        raise AnswerError(
            ErrorCode.BAD_ARGUMENT,
            f"node_indices must be a list of 1 to {MAX_ANSWER_NODES} node indices.",
        )
    nodes = [as_int(v) for v in raw]
    n = index.graph.n_nodes
    for value, node in zip(raw, nodes, strict=True):
        if node is None:
            raise AnswerError(
                ErrorCode.BAD_ARGUMENT, f"node_indices holds {short_repr(value)}, not an integer."
            )
        if not 0 <= node < n:
            raise AnswerError(
                ErrorCode.UNKNOWN_NODE, f"node {node} is not in the graph (indices 0..{n - 1})."
            )
    return question, [n for n in nodes if n is not None]


def _render(index: Index, answer: Answer, paths: Mapping[int, list[Any]]) -> str:
    g = index.graph
    if answer.answerable:
        lines = [f"Answer: {answer.text}"]
    else:
        said = f" (the model: {answer.text})" if answer.text else ""
        lines = [f"No answer: {answer.reason}{said}"]
    for c in answer.citations:
        n_paths = len(paths.get(c, []))
        more = f"; {n_paths} evidence path(s)" if n_paths else ""
        lines.append(f"- cites [{c}] {g.name(c)} ({g.type_name(c)}){more}")
    return "\n".join(lines)
