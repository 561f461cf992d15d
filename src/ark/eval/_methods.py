"""Retrieval methods the runner can evaluate on the same queries.

Over a graph built from documents the baselines rank passages only (``passages_only``):
BM25 over the passage nodes' texts alone — its own term statistics, as a BM25 over the
corpus would have — and dense over the passage nodes' embeddings. BM25 with ``linked``
lists after its best passage the passages linked to it through a bridge entity
(``bm25-linked`` in ``benchmarks/bench_documents.py``): what the graph gives without a
model. ARK's retriever
reports the passages that support its answers (:func:`evidence_passages`), which is
what passage recall reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ark.answer import DEFAULT_WRITER, AnsweredRetrieval, aanswer_question
from ark.eval._answer_record import answer_record
from ark.graph import PASSAGE_TYPE, passage_ids
from ark.index import BM25Index, DenseEncoder, DenseIndex, Index, build_bm25
from ark.retrieval import RetrievalResult, Retriever, linked_passages, question_relevance
from ark.trajectory import Trajectory


@dataclass
class MethodOutput:
    ranking: list[int]
    trajectories: list[Trajectory] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None  # set when the method failed on this query
    #: The ranked passages a reader would get (None: the ranking's passage nodes).
    passages: list[int] | None = None
    #: The written answer (``--answer``): ``text``, ``citations``, ``answerable``, and
    #: ``error`` when the answer step failed (scored as an empty answer).
    answer: dict[str, Any] | None = None


def evidence_passages(result: RetrievalResult, index: Index) -> list[int]:
    """The ranked passages of a retrieval: its evidence passages (the passages that
    support its answers) when the retriever reports them, else the passage nodes of
    its ranking in rank order. The one place passage recall of an agent is read from."""
    passages = getattr(result, "passages", None)
    if passages is not None:
        return [int(getattr(p, "node", p)) for p in passages]
    code = index.graph.type_id(PASSAGE_TYPE)
    if code is None:
        return []
    types = index.graph.node_type
    return [r.index for r in result.ranking if int(types[r.index]) == code]


class Method(Protocol):
    """A way to retrieve for one question of a set: the runner calls it with the
    question's id and the question."""

    name: str

    async def __call__(self, question_id: str, question: str) -> MethodOutput: ...


class BM25Method:
    """Baseline: global BM25 top-k of the query text (the same index ARK searches), or
    with ``passages_only`` a BM25 over the passage nodes' texts alone (built in memory
    with the index's tokenizer and parameters when the method is made)."""

    name = "bm25"

    def __init__(
        self, index: Index, k: int = 100, *, passages_only: bool = False, linked: int = 0
    ) -> None:
        self.index = index
        self.k = k
        self.passages_only = passages_only
        #: With ``passages_only``: after the best passage, up to this many passages
        #: sharing a bridge entity with it (:func:`ark.retrieval.linked_passages`), the
        #: graph's one step a model-free retriever can take.
        self.linked = linked
        self._docs: np.ndarray | None = None
        self._bm25: BM25Index = index.bm25
        if passages_only:
            self._docs = passage_ids(index.graph)
            self._bm25 = build_bm25(
                index.graph.texts.take(self._docs.tolist()),
                len(self._docs),
                index.bm25.tokenizer,
                index.bm25.params,
            )

    def search(self, text: str, k: int | None = None) -> list[int]:
        """The top ``k`` (default: the method's) node indices for ``text``."""
        docs, _ = self._bm25.top_k(self._bm25.query_terms(text), self.k if k is None else k)
        if self._docs is not None:
            docs = self._docs[docs]
        return [int(d) for d in docs]

    async def __call__(self, question_id: str, question: str) -> MethodOutput:
        ranking = self.search(question)
        if self.passages_only and self.linked and ranking:
            lead = ranking[0]
            relevance = question_relevance(self.index, question)
            links = linked_passages(self.index.graph, lead, relevance, limit=self.linked)
            ranking = list(dict.fromkeys([lead, *links, *ranking]))
        return MethodOutput(ranking=ranking, passages=ranking if self.passages_only else None)


class DenseMethod:
    """Baseline: exact cosine top-k between the query's and the nodes' embeddings."""

    name = "dense"

    def __init__(
        self,
        dense: DenseIndex,
        encoder: DenseEncoder,
        k: int = 100,
        *,
        passages: np.ndarray | None = None,
    ) -> None:
        self.dense = dense
        self.encoder = encoder
        self.k = k
        #: With node indices (the passage nodes), only those rows are searched.
        self.passages = passages
        self._rows = (
            None
            if passages is None
            else DenseIndex(dense.path, np.asarray(dense.embeddings[passages]), dense.meta)
        )

    async def __call__(self, question_id: str, question: str) -> MethodOutput:
        vector = self.encoder.encode([question])[0]
        if self._rows is None or self.passages is None:
            docs, _ = self.dense.top_k(vector, self.k)
            return MethodOutput(ranking=[int(d) for d in docs])
        rows, _ = self._rows.top_k(vector, self.k)
        ranking = [int(d) for d in self.passages[rows]]
        return MethodOutput(ranking=ranking, passages=ranking)


class RetrieverMethod:
    """Agents of any strategy (ARK's loop by default), run and fused by a retriever."""

    name = "ark"

    def __init__(self, retriever: Retriever, *, answer: bool = False) -> None:
        self.retriever = retriever
        self.strategy = retriever.strategy_name
        #: Retrieve and answer in words (``ark.answer.aanswer_question``), as ``ark ask
        #: --answer``, written by the writer of this name (``ark.answer.WRITERS``).
        self.answer = answer
        self.answer_writer = DEFAULT_WRITER

    async def __call__(self, question_id: str, question: str) -> MethodOutput:
        answered: AnsweredRetrieval | None = None
        if self.answer:
            answered = await aanswer_question(
                self.retriever, question, question_id, writer=self.answer_writer
            )
            result = answered.retrieval
        else:
            result = await self.retriever.aretrieve(question, question_id)
        trajectories = result.trajectories
        out = MethodOutput(
            ranking=[r.index for r in result.ranking],
            trajectories=trajectories,
            prompt_tokens=sum(t.usage["prompt_tokens"] for t in trajectories),
            completion_tokens=sum(t.usage["completion_tokens"] for t in trajectories),
            error=result.errors[0] if result.failed else None,
            passages=evidence_passages(result, self.retriever.index),
        )
        if answered is not None:
            out.answer = answer_record(answered.answer)
            if not answered.recorded:  # else a trajectory's usage counts it already
                out.prompt_tokens += answered.answer.prompt_tokens
                out.completion_tokens += answered.answer.completion_tokens
        return out
