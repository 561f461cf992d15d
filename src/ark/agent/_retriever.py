"""Parallel agents and fusion: ARK's retriever (SPEC §5), over any strategy."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path

from ark._coerce import as_int
from ark.agent._evidence import NodeEvidence, explain
from ark.agent._fusion import FUSIONS, fuse_random, fuse_vote_late
from ark.agent._strategy import (
    AgentConfig,
    EventHandler,
    StrategyContext,
    StrategyFactory,
    resolve_strategy,
)
from ark.errors import ArkError
from ark.index import Index, open_index
from ark.llm import ChatModel
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
    query: str
    ranking: list[RankedNode]
    trajectories: list[Trajectory]
    wall_s: float
    query_id: str | None = None
    errors: list[str] = field(default_factory=list)
    #: Per node of ``ranking`` (same order): the agents that added it and the recorded
    #: paths that reached it (:mod:`ark.agent._evidence`).
    evidence: list[NodeEvidence] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """Every agent stopped on an error: nothing is fused, the ranking is empty."""
        return bool(self.trajectories) and all(t.stop_reason == "error" for t in self.trajectories)

    def why(self, node: int) -> NodeEvidence | None:
        """The evidence of ``node`` when it is in the ranking (else ``None``)."""
        return next((e for e in self.evidence if e.node == node), None)

    def to_dict(self) -> dict[str, object]:
        return {
            "query": self.query,
            "query_id": self.query_id,
            "ranking": [r.to_dict() for r in self.ranking],
            "evidence": [e.to_dict() for e in self.evidence],
            "trajectories": [t.to_dict() for t in self.trajectories],
            "wall_s": self.wall_s,
        }


class Retriever:
    """``n_agents`` independent agents run concurrently; their answers fused by vote.

    Each agent is built by ``strategy`` — a registered name (``"ark"``, the paper's
    loop) or a factory taking a :class:`StrategyContext` — so every strategy shares
    the tools, the fusion and the trajectory record. Latency is that of the slowest
    agent, not the sum: agents await the model concurrently (a local in-process model
    serialises them, a server does not).
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
    ) -> None:
        if n_agents < 1:
            raise ArkError("n_agents must be at least 1")
        if max_steps < 1:
            raise ArkError("max_steps must be at least 1")
        if fusion not in FUSIONS:
            raise ArkError(f"unknown fusion {fusion!r}; choose one of {sorted(FUSIONS)}")
        import ark.agent._agent  # noqa: F401  (registers the "ark" strategy)

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
        self.config = AgentConfig(
            max_steps=max_steps,
            temperature=temperature,
            tools=tools or ToolConfig(),
            prompt=prompt,
        )
        self._tools = GraphTools(self.index)

    async def aretrieve(self, query: str, query_id: str | None = None) -> RetrievalResult:
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
            *(a.run(query, query_id) for a in agents), return_exceptions=True
        )
        trajectories = [
            o if isinstance(o, Trajectory) else self._crashed(query, query_id, i, o)
            for i, o in enumerate(outcomes)
        ]
        for t in trajectories:
            t.config.setdefault("strategy", self.strategy_name)
        # Only the agents that ended normally vote: a failed agent's partial list is
        # kept in its trajectory but is not an answer (the query fails when all failed).
        voters = [t for t in trajectories if t.stop_reason != "error"]
        lists = [t.answer for t in voters]
        if self.fusion == "random":
            fused = fuse_random(lists, self.top_k, random.Random(self.seed or 0))
        elif self.fusion == "late":  # the batches of the same agents as the lists
            fused = fuse_vote_late(lists, self.top_k, [add_batches(t) for t in voters])
        else:
            fused = FUSIONS[self.fusion](lists, self.top_k)
        g = self.index.graph
        ranking = [RankedNode(n, g.name(n), g.type_name(n), v) for n, v in fused]
        return RetrievalResult(
            query=query,
            ranking=ranking,
            trajectories=trajectories,
            wall_s=round(time.perf_counter() - started, 4),
            query_id=query_id,
            errors=[t.error for t in trajectories if t.error],
            evidence=explain(trajectories, fused),
        )

    def _crashed(
        self, query: str, query_id: str | None, agent: int, exc: BaseException
    ) -> Trajectory:
        """The record of an agent whose strategy raised instead of returning."""
        if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: not ours to keep
            raise exc
        return Trajectory(
            query=query,
            model=getattr(self.llm, "name", "unknown"),
            config={**self.config.to_dict(), "agent": agent},
            id=uuid.uuid4().hex,
            query_id=query_id,
            created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            stop_reason="error",
            error=f"{type(exc).__name__}: {exc}",
        )

    def retrieve(self, query: str, query_id: str | None = None) -> RetrievalResult:
        """Synchronous entry point (runs its own event loop)."""
        return asyncio.run(self.aretrieve(query, query_id))


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
