"""Parallel agents and fusion: ARK's retriever (SPEC §5), over any strategy.

It only retrieves: the answer in words is a step above (``ark.answer``, the pipeline
retrieve -> answer), reading the :class:`RetrievalResult` this returns."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path

from ark._coerce import as_int
from ark.cost import PriceTable, query_cost
from ark.errors import ArkError
from ark.fusion import FUSIONS, fuse_random, fuse_vote_late
from ark.graph import Graph
from ark.index import Index, open_index
from ark.llm import ChatModel
from ark.profile import query_profile
from ark.retrieval._evidence import EvidencePath, NodeEvidence, evidence_names, explain
from ark.retrieval._passages import (
    MAX_LINKED,
    EvidencePassage,
    evidence_passages,
    question_relevance,
)
from ark.strategies import (  # importing it registers the built-in strategies
    AgentConfig,
    EventHandler,
    StrategyContext,
    StrategyFactory,
    resolve_strategy,
)
from ark.strategies.guided.plans import DEFAULT_THRESHOLD
from ark.tools import GraphTools, ToolConfig
from ark.trajectory import Trajectory


@dataclass(frozen=True)
class RankedNode:
    index: int
    name: str
    type: str
    votes: int

    def to_dict(self) -> dict[str, object]:
        return {"index": self.index, "name": self.name, "type": self.type, "votes": self.votes}


@dataclass
class RetrievalResult:
    """What the agents found for ``question`` (with the caller's ``question_id``, a
    question set's, say): the fused ranking, its evidence and the trajectories."""

    question: str
    ranking: list[RankedNode]
    trajectories: list[Trajectory]
    wall_s: float
    question_id: str | None = None
    errors: list[str] = field(default_factory=list)
    #: Per node of ``ranking`` (same order): the agents that added it and the recorded
    #: paths that reached it (:mod:`ark.retrieval._evidence`).
    evidence: list[NodeEvidence] = field(default_factory=list)
    #: The passages supporting the ranking, ranked by the answers they support (empty
    #: on a graph without passages; :mod:`ark.retrieval._passages`).
    passages: list[EvidencePassage] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """Every agent stopped on an error: nothing is fused, the ranking is empty."""
        return bool(self.trajectories) and all(t.stop_reason == "error" for t in self.trajectories)

    def why(self, node: int) -> NodeEvidence | None:
        """The evidence of ``node`` when it is in the ranking (else ``None``)."""
        return next((e for e in self.evidence if e.node == node), None)

    def paths_of(self, node: int) -> list[EvidencePath]:
        """The evidence paths behind ``node``: a ranked node's own (:meth:`why`), an
        evidence passage's (the paths it lies on or supports), else the ranking's paths
        that pass through ``node`` (an anchor or a center shown to the answer step)."""
        ev = self.why(node)
        if ev is not None:
            return list(ev.paths)
        passage = next((p for p in self.passages if p.node == node), None)
        if passage is not None:
            return list(passage.paths)
        out: list[EvidencePath] = []
        for e in self.evidence:
            for path in e.paths:
                ends = {path.anchor, *(x for h in path.hops for x in (h.center, h.neighbor))}
                if node in ends and path not in out:
                    out.append(path)
        return out

    def to_dict(
        self, graph: Graph | None = None, prices: PriceTable | None = None
    ) -> dict[str, object]:
        """The whole result as JSON, the one payload every reader gets (``ark ask
        --json`` prints it): the ranking, its evidence and passages, the trajectories,
        what the query cost (:func:`ark.cost.query_cost` under ``prices``: calls,
        tokens, seconds, USD when priced) and where its time went
        (:func:`ark.profile.query_profile`); with the ``graph``, ``evidence_nodes``
        names every node on the evidence paths, so a reader needs no index."""
        out: dict[str, object] = {
            "query": self.question,  # the record's name for the question (as a trajectory's)
            "query_id": self.question_id,
            "ranking": [r.to_dict() for r in self.ranking],
            "evidence": [e.to_dict() for e in self.evidence],
        }
        if graph is not None:
            out["evidence_nodes"] = evidence_names(self.evidence, graph)
        out["passages"] = [p.to_dict() for p in self.passages]
        out["trajectories"] = [t.to_dict() for t in self.trajectories]
        out["wall_s"] = self.wall_s
        out["cost"] = query_cost(self.trajectories, prices, annotate=False)
        out["profile"] = query_profile(self.trajectories)
        return out


class Retriever:
    """``n_agents`` independent agents run concurrently; their answers fused by vote.

    Each agent is built by ``strategy`` — a registered name (``"ark"``, the paper's
    loop) or a factory taking a :class:`StrategyContext` — so every strategy shares
    the tools, the fusion and the trajectory record. Latency is that of the slowest
    agent, not the sum: agents await the model concurrently (a local in-process model
    serialises them, a server does not).

    On a graph built from documents the result's passages end with up to
    ``linked_passages`` passages that share a bridge entity with the lead evidence
    passage (:mod:`ark.retrieval._passages`); ``0`` lists only what the agents reached.

    A strategy that reads a plan (``ark-guided``) runs it without the model when its
    fitted confidence is at least ``plan_threshold`` (:mod:`ark.strategies.guided.plans`; None:
    the model runs every step).
    """

    def __init__(
        self,
        index: Index | str | Path,
        llm: ChatModel | None = None,
        *,
        strategy: str | StrategyFactory = "ark",
        n_agents: int = 3,
        max_steps: int = 20,
        temperature: float = 0.7,
        fusion: str = "vote",
        top_k: int = 20,
        tools: ToolConfig | None = None,
        seed: int | None = None,
        on_event: EventHandler | None = None,
        prompt: str = "full",
        linked_passages: int = MAX_LINKED,
        plan_threshold: float | None = DEFAULT_THRESHOLD,
    ) -> None:
        if n_agents < 1:
            raise ArkError("n_agents must be at least 1")
        if max_steps < 1:
            raise ArkError("max_steps must be at least 1")
        if fusion not in FUSIONS:
            raise ArkError(f"unknown fusion {fusion!r}; choose one of {sorted(FUSIONS)}")
        if linked_passages < 0:
            raise ArkError("linked_passages must be 0 (none) or more")
        self.strategy_name, self.strategy = resolve_strategy(strategy)
        self.index = index if isinstance(index, Index) else open_index(index)
        if llm is None:
            from ark.llm import make_chat_model

            llm = make_chat_model()
        self.llm = llm
        self.n_agents = n_agents
        self.fusion = fusion
        self.top_k = top_k
        self.seed = seed
        self.on_event = on_event
        #: On a graph built from documents, the passages linked to the lead evidence
        #: passage that the result lists after it (:mod:`ark.retrieval._passages`).
        self.linked_passages = linked_passages
        self.config = AgentConfig(
            max_steps=max_steps,
            temperature=temperature,
            tools=tools or ToolConfig(),
            prompt=prompt,
            plan_threshold=plan_threshold,
        )
        self._tools = GraphTools(self.index, phrase_encoder=self.config.tools.phrase_encoder)

    async def aretrieve(self, question: str, question_id: str | None = None) -> RetrievalResult:
        started = time.perf_counter()
        agents = [
            self.strategy(
                StrategyContext(
                    index=self.index,
                    llm=self.llm,
                    tools=self._tools,
                    config=replace(
                        self.config, seed=None if self.seed is None else self.seed + 1000 * i
                    ),
                    agent_number=i,
                    on_event=self.on_event,
                )
            )
            for i in range(self.n_agents)
        ]
        # Every agent runs to its end whatever the others do: one agent raising must
        # not discard (or leave running unobserved) the others' work.
        outcomes = await asyncio.gather(
            *(a.run(question, question_id) for a in agents), return_exceptions=True
        )
        trajectories = [
            o if isinstance(o, Trajectory) else self._crashed(question, question_id, i, o)
            for i, o in enumerate(outcomes)
        ]
        for t in trajectories:
            t.config.setdefault("strategy", self.strategy_name)
        result = fuse_trajectories(
            self.index,
            question,
            trajectories,
            question_id=question_id,
            fusion=self.fusion,
            top_k=self.top_k,
            linked_passages=self.linked_passages,
            seed=self.seed,
        )
        result.wall_s = round(time.perf_counter() - started, 4)
        return result

    def _crashed(
        self, question: str, question_id: str | None, agent: int, exc: BaseException
    ) -> Trajectory:
        """The record of an agent whose strategy raised instead of returning."""
        if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: not ours to keep
            raise exc
        return Trajectory(
            question=question,
            model=getattr(self.llm, "name", "unknown"),
            config={**self.config.to_dict(), "agent": agent},
            id=uuid.uuid4().hex,
            question_id=question_id,
            created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            stop_reason="error",
            error=f"{type(exc).__name__}: {exc}",
        )

    def retrieve(self, question: str, question_id: str | None = None) -> RetrievalResult:
        """Synchronous entry point (runs its own event loop)."""
        return asyncio.run(self.aretrieve(question, question_id))


def shown_nodes(trajectories: list[Trajectory]) -> list[int]:
    """The nodes the agents' tool results showed, each once, in the order shown (the
    agents interleaved node by node, so no agent's reading comes first)."""
    per_agent = [
        [n for step in t.steps for call in step.tool_calls for n in call.nodes]
        for t in trajectories
    ]
    out: dict[int, None] = {}
    for i in range(max((len(nodes) for nodes in per_agent), default=0)):
        for nodes in per_agent:
            if i < len(nodes):
                out.setdefault(nodes[i], None)
    return list(out)


def fuse_trajectories(
    index: Index,
    question: str,
    trajectories: list[Trajectory],
    *,
    question_id: str | None = None,
    fusion: str = "vote",
    top_k: int = 20,
    linked_passages: int = MAX_LINKED,
    seed: int | None = None,
) -> RetrievalResult:
    """The retrieval the agents' ``trajectories`` make: their answer lists fused, each
    node's evidence, the evidence passages. What :meth:`Retriever.aretrieve` returns
    after its agents ran, and what a stored run's trajectories give back, so that a
    later step (the answer) can be rerun on a recorded retrieval without its agents
    (``benchmarks/bench_answers.py``). ``wall_s`` is 0: no agent ran here."""
    if fusion not in FUSIONS:
        raise ArkError(f"unknown fusion {fusion!r}; choose one of {sorted(FUSIONS)}")
    # Only the agents that ended normally vote: a failed agent's partial list is
    # kept in its trajectory but is not an answer (the question fails when all failed).
    voters = [t for t in trajectories if t.stop_reason != "error"]
    lists = [t.answer for t in voters]
    if fusion == "random":
        fused = fuse_random(lists, top_k, random.Random(seed or 0))
    elif fusion == "late":  # the batches of the same agents as the lists
        fused = fuse_vote_late(lists, top_k, [add_batches(t) for t in voters])
    else:
        fused = FUSIONS[fusion](lists, top_k)
    g = index.graph
    ranking = [RankedNode(n, g.name(n), g.type_name(n), v) for n, v in fused]
    evidence = explain(trajectories, fused)
    return RetrievalResult(
        question=question,
        ranking=ranking,
        trajectories=trajectories,
        wall_s=0.0,
        question_id=question_id,
        errors=[t.error for t in trajectories if t.error],
        evidence=evidence,
        passages=evidence_passages(
            g,
            evidence,
            seen=shown_nodes(trajectories),
            relevance=question_relevance(index, question),
            max_linked=linked_passages,
        ),
    )


def add_batches(trajectory: Trajectory) -> list[list[int]]:
    """The answer nodes each ``add_to_answer`` call of ``trajectory`` appended, in order."""
    answer = set(trajectory.answer)
    placed: set[int] = set()
    batches: list[list[int]] = []
    for step in trajectory.steps:
        for call in step.tool_calls:
            if call.name != "add_to_answer" or not isinstance(call.arguments, dict):
                continue
            raw = call.arguments.get("node_indices")
            batch = []
            for value in raw if isinstance(raw, list) else [raw]:
                node = as_int(value)
                if node is not None and node in answer and node not in placed:
                    placed.add(node)
                    batch.append(node)
            if batch:
                batches.append(batch)
    rest = [n for n in trajectory.answer if n not in placed]
    return [rest, *batches] if rest else batches
