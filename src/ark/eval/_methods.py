"""Retrieval methods the runner can evaluate on the same queries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from ark.agent import Retriever
from ark.index import DenseEncoder, DenseIndex, Index
from ark.trajectory import Trajectory


@dataclass
class MethodOutput:
    ranking: list[int]
    trajectories: list[Trajectory] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None  # set when the method failed on this query


class Method(Protocol):
    name: str

    async def __call__(self, query_id: str, text: str) -> MethodOutput: ...


class BM25Method:
    """Baseline: global BM25 top-k of the query text (the same index ARK searches)."""

    name = "bm25"

    def __init__(self, index: Index, k: int = 100) -> None:
        self.index = index
        self.k = k

    async def __call__(self, query_id: str, text: str) -> MethodOutput:
        terms = self.index.bm25.query_terms(text)
        docs, _ = self.index.bm25.top_k(terms, self.k)
        return MethodOutput(ranking=[int(d) for d in docs])


class DenseMethod:
    """Baseline: exact cosine top-k between the query's and the nodes' embeddings."""

    name = "dense"

    def __init__(self, dense: DenseIndex, encoder: DenseEncoder, k: int = 100) -> None:
        self.dense = dense
        self.encoder = encoder
        self.k = k

    async def __call__(self, query_id: str, text: str) -> MethodOutput:
        docs, _ = self.dense.top_k(self.encoder.encode([text])[0], self.k)
        return MethodOutput(ranking=[int(d) for d in docs])


class RetrieverMethod:
    """Agents of any strategy (ARK's loop by default), run and fused by a retriever."""

    name = "ark"

    def __init__(self, retriever: Retriever) -> None:
        self.retriever = retriever
        self.strategy = retriever.strategy_name

    async def __call__(self, query_id: str, text: str) -> MethodOutput:
        result = await self.retriever.aretrieve(text, query_id)
        trajectories = result.trajectories
        return MethodOutput(
            ranking=[r.index for r in result.ranking],
            trajectories=trajectories,
            prompt_tokens=sum(t.usage["prompt_tokens"] for t in trajectories),
            completion_tokens=sum(t.usage["completion_tokens"] for t in trajectories),
            error=result.errors[0] if result.failed else None,
        )


#: The name it had when ARK's loop was the only strategy.
ArkMethod = RetrieverMethod
