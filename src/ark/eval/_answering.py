"""The answer step of a run (``ark eval --answer``): after a method retrieves, the model
writes a short answer from the retrieved nodes' text (:func:`ark.answer.write_answer`),
scored by exact match and F1.

An agent answers as :func:`ark.answer.answer_question` does for a user (its ranking and
its evidence passages, or its strategy's own answer basis); a baseline answers from its
first ``k`` passages, so that
BM25 with the answer step is "naive RAG" (the same model reading BM25's top 5). The
score reads the answer's text only when the model answered: an answer saying the
evidence does not answer, a reply that could not be read, or a failed model call is
scored as an empty answer (0), recorded with its status, and never stops the run.
"""

from __future__ import annotations

from ark.answer import DEFAULT_WRITER, writer_named
from ark.errors import ArkError
from ark.eval._answer_record import answer_record, no_answer
from ark.eval._methods import Method, MethodOutput
from ark.index import Index
from ark.llm import ChatModel

#: Passages a baseline's answer is written from (naive RAG's top 5).
ANSWER_PASSAGES = 5


class AnsweringMethod:
    """A baseline, then the answer step with ``model`` over its first ``k`` passages
    (``writer``: the name of the answer writer, ``ark.answer.WRITERS``; None: the
    default, ``ark.answer.DEFAULT_WRITER``)."""

    def __init__(
        self,
        method: Method,
        model: ChatModel,
        index: Index,
        k: int = ANSWER_PASSAGES,
        writer: str | None = None,
    ) -> None:
        self.write = writer_named(writer or DEFAULT_WRITER)
        self.method = method
        self.name = method.name
        self.model = model
        self.index = index
        self.k = k

    async def __call__(self, question_id: str, question: str) -> MethodOutput:
        out = await self.method(question_id, question)
        if out.error is not None:  # nothing retrieved: no answer, scored as an empty one
            out.answer = no_answer(f"retrieval failed: {out.error}")
            return out
        passages = out.passages if out.passages is not None else out.ranking
        try:
            answer = await self.write(self.model, question, self.index, passages[: self.k])
        except ArkError as exc:  # a node the answer step refuses: this question only
            out.answer = no_answer(f"{type(exc).__name__}: {exc}")
            return out
        out.answer = answer_record(answer)
        out.prompt_tokens += answer.prompt_tokens
        out.completion_tokens += answer.completion_tokens
        return out
