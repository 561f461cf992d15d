"""One pipeline for every strategy: retrieve, then answer in words from what was retrieved.

Answering sits above retrieval (the ``layers`` contract in ``pyproject.toml``): the
retriever only retrieves, and the answer step reads a finished retrieval. What it
reads depends on the retrieval, not on who calls it:

- one agent whose strategy recorded an :class:`~ark.strategies.AnswerBasis`
  (GraphSearch: its answer nodes, the edges it followed, the seed) has its answer
  written from that basis in one call (:func:`~ark.answer.write_answer`, greedy), and
  the call recorded as the last step of its trajectory (module ``answer_generation``)
  and under ``extra[strategy]["answer"]``, where the cost report, the viewer and a
  reader of the run find it, as when the workflow wrote it itself;
- otherwise the writer chosen (:data:`~ark.answer.WRITERS`) reads the first ranked
  nodes, then the evidence passages not among them, and the relations of their
  evidence paths (several agents are fused, so no one agent's basis is theirs).

:func:`answer_question` (and :func:`aanswer_question`) retrieve with a
:class:`~ark.retrieval.Retriever` and answer; :func:`answer_retrieval` answers a
retrieval already made (a stored run's, ``benchmarks/bench_answers.py``).
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from ark.answer._steps import DEFAULT_WRITER, writer_named
from ark.answer._write import Answer, Edge, write_answer
from ark.cost import PriceTable
from ark.graph import MENTIONS, Graph
from ark.index import Index
from ark.llm import ChatModel
from ark.retrieval import EvidencePath, RetrievalResult, Retriever
from ark.strategies import AgentEvent, AnswerBasis, EventHandler, recorded_basis
from ark.trajectory import StepRecord, Trajectory

#: Ranked nodes, evidence passages and path relations the answer step reads by default.
ANSWER_NODES = 10
ANSWER_PASSAGES = 10
ANSWER_EDGES = 40

#: The options of the one-call writer a basis's answer takes from the caller (its
#: temperature is 0 and its seed the basis's).
_BASIS_OPTIONS = ("max_chars", "max_node_chars", "max_tokens")


@dataclass
class AnsweredRetrieval:
    """A question answered: the retrieval, and the answer in words written from it."""

    retrieval: RetrievalResult
    answer: Answer
    #: Seconds for the whole question: the retrieval, then the answer.
    wall_s: float
    #: The answer's model call is a step of the trajectory whose strategy recorded the
    #: basis it was written from, so its tokens are in that trajectory's usage already
    #: (a sum over the trajectories must not add :attr:`answer`'s tokens again).
    recorded: bool = False

    def cited_paths(self) -> dict[int, list[EvidencePath]]:
        """Per citation of :attr:`answer` (in its order): the evidence paths behind it
        (:meth:`ark.retrieval.RetrievalResult.paths_of`)."""
        return {c: self.retrieval.paths_of(c) for c in self.answer.citations}

    def answer_dict(self) -> dict[str, object]:
        """:attr:`answer` as JSON, with each cited node's evidence paths."""
        paths = self.cited_paths()
        return {
            **self.answer.to_dict(),
            "evidence": {str(c): [p.to_dict() for p in ps] for c, ps in paths.items()},
        }

    def to_dict(
        self, graph: Graph | None = None, prices: PriceTable | None = None
    ) -> dict[str, object]:
        """The retrieval's JSON (:meth:`ark.retrieval.RetrievalResult.to_dict`) with the
        answer after the passages, and the whole question's seconds (``ark ask --answer
        --json`` prints it)."""
        out: dict[str, object] = {}
        for key, value in self.retrieval.to_dict(graph, prices).items():
            out[key] = value
            if key == "passages":
                out["answer"] = self.answer_dict()
        out["wall_s"] = self.wall_s
        return out


async def aanswer_question(
    retriever: Retriever,
    question: str,
    question_id: str | None = None,
    *,
    writer: str = DEFAULT_WRITER,
    max_nodes: int = ANSWER_NODES,
    max_passages: int = ANSWER_PASSAGES,
    **options: Any,
) -> AnsweredRetrieval:
    """Retrieve with ``retriever``, then have its model answer in words from what was
    retrieved (:func:`answer_retrieval`, at temperature 0 with the retriever's seed).

    ``writer``: ``"steps"`` (the default, :func:`ark.answer.write_answer_in_steps`: the
    question split into lookups of one fact, each read from the nodes that fit it; a
    question of one fact falls back to the one call) or ``"one"`` (one call over every
    node); a strategy's own answer basis is written in one call whatever ``writer``
    says. ``options`` go to the writer (``max_chars``, ``max_node_chars``,
    ``max_tokens``). :meth:`AnsweredRetrieval.cited_paths` gives each citation's
    evidence paths.
    """
    write = writer_named(writer)  # an unknown name fails before the retrieval
    retrieval = await retriever.aretrieve(question, question_id)
    options.setdefault("seed", 0 if retriever.seed is None else retriever.seed)
    return await answer_retrieval(
        retriever.llm,
        retriever.index,
        retrieval,
        writer=write,
        max_nodes=max_nodes,
        max_passages=max_passages,
        on_event=retriever.on_event,
        **options,
    )


def answer_question(
    retriever: Retriever, question: str, question_id: str | None = None, **options: Any
) -> AnsweredRetrieval:
    """Synchronous :func:`aanswer_question` (runs its own event loop)."""
    return asyncio.run(aanswer_question(retriever, question, question_id, **options))


async def answer_retrieval(
    llm: ChatModel,
    index: Index,
    result: RetrievalResult,
    *,
    writer: str | Any = DEFAULT_WRITER,
    max_nodes: int = ANSWER_NODES,
    max_passages: int = ANSWER_PASSAGES,
    on_event: EventHandler | None = None,
    **options: Any,
) -> AnsweredRetrieval:
    """``llm``'s answer in words to ``result``'s question from what it retrieved: from
    the basis its one agent's strategy recorded (then recorded in that agent's
    trajectory, and ``on_event`` told, as the strategy's other steps), else from the
    text of the first ``max_nodes`` ranked nodes and ``max_passages`` evidence
    passages, with their path relations. ``writer`` is a name of
    :data:`ark.answer.WRITERS` or the writer itself; ``options`` go to it."""
    write = writer_named(writer) if isinstance(writer, str) else writer
    started = time.perf_counter()
    found = _single_basis(result)
    if found is not None:
        trajectory, key, basis = found
        answer = await write_from_basis(llm, result.question, index, basis, **options)
        elapsed = time.perf_counter() - started
        record_answer(trajectory, key, answer, elapsed, on_event)
        wall = round(result.wall_s + elapsed, 4)
        return AnsweredRetrieval(result, answer, wall, recorded=True)
    nodes = answer_nodes(result, max_nodes, max_passages)
    edges = path_edges(result, nodes)
    answer = await write(llm, result.question, index, nodes, edges=edges, **options)
    wall = round(result.wall_s + time.perf_counter() - started, 4)
    return AnsweredRetrieval(result, answer, wall)


async def write_from_basis(
    llm: ChatModel, question: str, index: Index, basis: AnswerBasis, **options: Any
) -> Answer:
    """The answer a strategy's ``basis`` gives: :func:`ark.answer.write_answer` over its
    nodes and edges, greedily, with its seed (of ``options``, only the text budget and
    ``max_tokens`` apply)."""
    kept = {k: v for k, v in options.items() if k in _BASIS_OPTIONS}
    return await write_answer(
        llm,
        question,
        index,
        basis.nodes,
        edges=basis.edges,
        temperature=0.0,
        seed=basis.seed,
        **kept,
    )


def record_answer(
    trajectory: Trajectory,
    key: str,
    answer: Answer,
    elapsed_s: float = 0.0,
    on_event: EventHandler | None = None,
) -> None:
    """Record ``answer``, written from the basis under ``trajectory.extra[key]``, in the
    trajectory: under ``extra[key]["answer"]``, and (when a model call was made) as its
    last step, module ``answer_generation``, whose tokens count in its usage and whose
    time in its ``wall_s``."""
    trajectory.extra[key]["answer"] = answer.to_dict()
    if answer.status == "no_evidence":  # no model call was made
        return
    replied = answer.status in ("answered", "not_answerable")
    # The reply as checked (citations not shown are dropped); the raw text stays
    # inside write_answer, which reports a reply that did not fit by its reason.
    checked = {"answerable": answer.answerable, "answer": answer.text}
    trajectory.steps.append(
        StepRecord(
            index=len(trajectory.steps),
            llm_latency_s=answer.latency_s,
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
            content=json.dumps({**checked, "citations": answer.citations}) if replied else "",
            module="answer_generation",
            note=None if replied else answer.reason,
        )
    )
    trajectory.usage["prompt_tokens"] += answer.prompt_tokens
    trajectory.usage["completion_tokens"] += answer.completion_tokens
    trajectory.wall_s = round(trajectory.wall_s + elapsed_s, 4)
    if on_event is not None:
        first = answer.text.splitlines()[0] if answer.text else ""
        agent = trajectory.config.get("agent", 0)
        step = len(trajectory.steps) - 1
        on_event(AgentEvent(agent, step, "answer_generation", {}, answer.answerable, first[:160]))


def _single_basis(result: RetrievalResult) -> tuple[Trajectory, str, AnswerBasis] | None:
    """The basis a single agent's strategy recorded for its answer (GraphSearch's, from
    its own workflow's evidence). Several agents are fused, so no one basis is theirs."""
    if len(result.trajectories) != 1:
        return None
    trajectory = result.trajectories[0]
    found = recorded_basis(trajectory)
    return None if found is None else (trajectory, *found)


def answer_nodes(result: RetrievalResult, max_nodes: int, max_passages: int) -> list[int]:
    """The nodes the answer step reads: the first ``max_nodes`` of the ranking, then the
    first ``max_passages`` evidence passages not among them."""
    nodes = [r.index for r in result.ranking[:max_nodes]]
    shown = set(nodes)
    nodes += [p.node for p in result.passages if p.node not in shown][:max_passages]
    return nodes


def path_edges(result: RetrievalResult, nodes: list[int]) -> list[Edge]:
    """``(head, relation, tail)`` of every recorded hop on the evidence paths of the
    ranked nodes among ``nodes`` (at most :data:`ANSWER_EDGES`), as the answer step
    shows them: a hop's direction decides which end is the head. ``mentions`` hops
    are left out (the passage's own text is shown), as are hops whose relation or
    center the record does not have."""
    wanted = set(nodes)
    edges: dict[Edge, None] = {}
    for ev in result.evidence:
        if ev.node not in wanted:
            continue
        for path in ev.paths:
            for h in path.hops:
                if h.center is None or h.relation is None or h.relation == MENTIONS:
                    continue
                edge = (
                    (h.neighbor, h.relation, h.center)
                    if h.direction == "in"
                    else (h.center, h.relation, h.neighbor)
                )
                edges[edge] = None
    return list(edges)[:ANSWER_EDGES]
