"""GraphSearch's workflow as an ARK strategy: decompose, then per step ground,
retrieve and refine in two channels, draft, verify, and expand while verification
rejects (bounded), all through one tool session and the ChatModel protocol.

Each module's model call is a step of the trajectory (``StepRecord.module``); the
tool calls of a sub-query's retrieval are a step of their own (module ``retrieval``,
no model call). The answer is the drafted chain's answer nodes, then the nodes the
last step of each channel kept, fused across the two channels by vote.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from ark.agent._fusion import fuse_vote
from ark.agent._session import ToolSession
from ark.agent._strategy import (
    AgentConfig,
    AgentEvent,
    EventHandler,
    StrategyContext,
    start_trajectory,
)
from ark.agent.graphsearch import modules as m
from ark.errors import ArkError
from ark.index import Index
from ark.llm import ChatModel, Message
from ark.tools import GraphTools
from ark.trajectory import StepRecord, ToolCallRecord, Trajectory

EVIDENCE_NODES = 12  # nodes listed per step in the evidence the drafter and judge read


@dataclass(frozen=True)
class GraphSearchConfig:
    """The workflow's own knobs. ``expansions``: verify-expand rounds after the first
    draft (the public code does one); ``channels``: which retrieval channels run."""

    expansions: int = 1
    channels: tuple[str, ...] = (m.SEMANTIC, m.RELATIONAL)

    def to_dict(self) -> dict[str, Any]:
        return {"expansions": self.expansions, "channels": list(self.channels)}


class _OutOfBudget(Exception):
    """``max_steps`` model calls were made; rank what was found."""


class GraphSearch:
    """One GraphSearch workflow for one question (``run`` never raises)."""

    strategy_name = "graphsearch"

    def __init__(
        self,
        index: Index,
        llm: ChatModel,
        config: AgentConfig | None = None,
        *,
        tools: GraphTools | None = None,
        agent_number: int = 0,
        on_event: EventHandler | None = None,
        workflow: GraphSearchConfig | None = None,
    ) -> None:
        self.index = index
        self.llm = llm
        self.config = config or AgentConfig()
        self.tools = tools or GraphTools(index)
        self.agent_number = agent_number
        self.on_event = on_event
        self.workflow = workflow or GraphSearchConfig()

    @classmethod
    def from_context(
        cls, ctx: StrategyContext, workflow: GraphSearchConfig | None = None
    ) -> GraphSearch:
        return cls(ctx.index, ctx.llm, ctx.config, workflow=workflow, **ctx.shared())

    async def run(self, query: str, query_id: str | None = None) -> Trajectory:
        """Run the workflow; any failure ends it with ``stop_reason="error"`` and the
        error recorded, keeping what was found (one agent failing must not cost the
        others' answers). Only cancellation and interpreter exits propagate."""
        started = time.perf_counter()
        self._traj = start_trajectory(
            query,
            query_id,
            self.llm.name,
            {
                **self.config.to_dict(),
                "agent": self.agent_number,
                "strategy": self.strategy_name,
                "graphsearch": self.workflow.to_dict(),
            },
        )
        self._session = ToolSession(
            self.index,
            tools=self.tools,
            config=self.config.tools,
            answer_tools=False,
            detect_repeats=False,  # a workflow re-asks deliberately; no one to nudge
        )
        self._calls = 0
        self._steps: dict[str, list[m.Step]] = {m.SEMANTIC: [], m.RELATIONAL: []}
        self._draft: tuple[str, list[int]] = ("", [])
        stop = "max_steps"
        try:
            if await self._workflow(query):
                stop = "finish"
        except _OutOfBudget:
            pass
        except ArkError as exc:  # the backend gave up after its retries
            self._traj.error = str(exc)
            stop = "error"
        except Exception as exc:  # a backend or module bug: this agent ends, its work is kept
            self._traj.error = f"{type(exc).__name__}: {exc}"
            stop = "error"
        traj = self._traj
        traj.stop_reason = stop  # type: ignore[assignment]
        try:
            traj.answer = self._ranking()
        except Exception as exc:  # never raise (the docstring's promise): rank nothing
            traj.answer = []
            traj.error = traj.error or f"ranking failed: {type(exc).__name__}: {exc}"
            traj.stop_reason = "error"
        traj.extra["graphsearch"] = {
            "steps": [s.to_dict() for c in self._steps.values() for s in c],
            "chain": self._draft[0],
            "drafted": self._draft[1],
        }
        traj.wall_s = round(time.perf_counter() - started, 4)
        return traj

    # -- the workflow ------------------------------------------------------------------

    async def _workflow(self, question: str) -> bool:
        """True when verification accepted a draft."""
        semantic, relational = await m.decompose(self._ask, question, self.index.schema)
        new = self._adopt(semantic, relational)
        for round_ in range(self.workflow.expansions + 1):
            for step in new:
                await self._answer_step(question, step)
            evidence, candidates = self._evidence()
            chain, answer = await m.draft(self._ask, question, evidence, candidates)
            self._draft = (chain, answer)
            names = "; ".join(f"[{n}] {self.index.graph.name(n)}" for n in answer)
            accepted, missing = await m.verify(self._ask, question, evidence, chain, names)
            if accepted:
                return True
            if round_ == self.workflow.expansions:
                break
            first = (self._next(m.SEMANTIC), self._next(m.RELATIONAL))
            semantic, relational = await m.expand(
                self._ask, question, self.index.schema, evidence, missing, first
            )
            new = self._adopt(semantic, relational)
            if not new:
                break
        return False

    def _adopt(self, semantic: list[m.Step], relational: list[m.Step]) -> list[m.Step]:
        new = []
        for channel, steps in ((m.SEMANTIC, semantic), (m.RELATIONAL, relational)):
            if channel in self.workflow.channels:
                self._steps[channel].extend(steps)
                new.extend(steps)
        return new

    def _next(self, channel: str) -> int:
        steps = self._steps[channel]
        return steps[-1].number + 1 if steps else 1

    async def _answer_step(self, question: str, step: m.Step) -> None:
        """Ground, retrieve and refine one sub-query."""
        done = {s.number: s for s in self._steps[step.channel] if s.number < step.number}
        names = {n: [self.index.graph.name(x) for x in s.nodes] for n, s in done.items()}
        if step.channel == m.SEMANTIC:
            text = m.ground_text(step.text, names, step.number)
            if text is None:
                text = (
                    await m.ground(self._ask, step, self._history(step.channel), question)
                    or step.text
                )
            step.grounded = text
            calls = m.retrieve_semantic(self._session, text)
        else:
            nodes = {n: s.nodes for n, s in done.items()}
            grounded_name = None
            refs = [r for r in m.references(step.text) if r < step.number]
            if refs and not any(nodes.get(r) for r in refs):
                grounded_name = await m.ground(
                    self._ask, step, self._history(step.channel), question
                )
            step.grounded = grounded_name or m.ground_text(step.text, names, step.number)
            calls = m.retrieve_relational(self._session, step, nodes, grounded_name)
        self._record_retrieval(step, calls)
        step.nodes = await m.refine(self._ask, question, step, step.grounded or step.text, calls)

    # -- evidence and the answer ---------------------------------------------------------

    def _describe(self, step: m.Step) -> str:
        g = self.index.graph
        found = "; ".join(
            f"[{n}] {g.name(n)} ({g.type_name(n)})" for n in step.nodes[:EVIDENCE_NODES]
        )
        more = len(step.nodes) - EVIDENCE_NODES
        found += f"; and {more} more" if more > 0 else ""
        return f"{step.label} {step.grounded or step.text} -> {found or 'nothing found'}"

    def _history(self, channel: str) -> str:
        return "\n".join(self._describe(s) for s in self._steps[channel] if s.grounded)

    def _evidence(self) -> tuple[str, list[int]]:
        lines, candidates = [], []
        for channel in (m.SEMANTIC, m.RELATIONAL):
            for s in self._steps[channel]:
                if s.grounded is None:
                    continue
                lines.append(self._describe(s))
                candidates += [n for n in s.nodes[:EVIDENCE_NODES] if n not in candidates]
        return "\n".join(lines), candidates

    def _chain_end(self, channel: str) -> list[int]:
        """The nodes of the channel's last answered step that no later step builds on."""
        steps = self._steps[channel]
        used = {r for s in steps for r in m.references(s.text) if r < s.number}
        for s in reversed(steps):
            if s.nodes and s.number not in used:
                return s.nodes
        return []

    def _ranking(self) -> list[int]:
        ends = [self._chain_end(m.RELATIONAL), self._chain_end(m.SEMANTIC)]
        fused = [n for n, _ in fuse_vote([e for e in ends if e], top_k=10**6)]
        out = list(self._draft[1])
        return out + [n for n in fused if n not in out]

    # -- recording -----------------------------------------------------------------------

    async def _ask(
        self, module: str, system: str, user: str, schema: dict[str, Any], max_tokens: int
    ) -> Any:
        if self._calls >= self.config.max_steps:
            raise _OutOfBudget
        cfg = self.config
        messages = [Message(role="system", content=system), Message(role="user", content=user)]
        completion = await self.llm.complete(
            messages,
            (),
            temperature=cfg.temperature,
            max_tokens=max_tokens,
            seed=None if cfg.seed is None else cfg.seed + self._calls,
            response_schema=schema,
        )
        self._calls += 1
        traj = self._traj
        record = StepRecord(
            index=len(traj.steps),
            llm_latency_s=round(completion.latency_s, 4),
            prompt_tokens=completion.usage.prompt_tokens,
            completion_tokens=completion.usage.completion_tokens,
            content=completion.message.content,
            module=module,
            profile=completion.profile.to_dict() if completion.profile else None,
        )
        data = completion.data
        if data is None:
            record.note = (
                "output cut at max_tokens"
                if completion.finish_reason == "length"
                else "reply is not JSON"
            )
        traj.steps.append(record)
        traj.usage["prompt_tokens"] += completion.usage.prompt_tokens
        traj.usage["completion_tokens"] += completion.usage.completion_tokens
        traj.messages += [msg.to_dict() for msg in messages] + [completion.message.to_dict()]
        self._emit(module, {}, data is not None, completion.message.content)
        return data

    def _record_retrieval(self, step: m.Step, calls: list[m.Call]) -> None:
        traj = self._traj
        index = len(traj.steps)
        self._session.step = index
        record = StepRecord(
            index=index,
            llm_latency_s=0.0,
            prompt_tokens=0,
            completion_tokens=0,
            content="",
            module="retrieval",
            note=f"{step.label}: {step.grounded or step.text}",
        )
        for i, (name, args, outcome) in enumerate(calls):
            record.tool_calls.append(
                ToolCallRecord(
                    id=f"gs_{index}_{i}",
                    name=name,
                    arguments=args,
                    raw_arguments=json.dumps(args),
                    observation=outcome.observation,
                    ok=outcome.ok,
                    error_code=outcome.code,
                    nodes=outcome.nodes,
                    duration_s=round(outcome.duration_s, 6),
                    center=outcome.center,
                    relations=outcome.relations(),
                    centers=outcome.centers,
                    added=outcome.added,
                )
            )
            self._emit(name, args, outcome.ok, outcome.observation, step=index)
        traj.steps.append(record)

    def _emit(
        self, tool: str, args: dict[str, Any], ok: bool, text: str, step: int | None = None
    ) -> None:
        if self.on_event:
            first = text.splitlines()[0] if text else ""
            self.on_event(
                AgentEvent(
                    self.agent_number,
                    len(self._traj.steps) - 1 if step is None else step,
                    tool,
                    args,
                    ok,
                    first[:160],
                )
            )


def graphsearch_factory(workflow: GraphSearchConfig | None = None) -> Any:
    """A strategy factory with the workflow's own settings (``Retriever(strategy=...)``)."""

    def factory(ctx: StrategyContext) -> GraphSearch:
        return GraphSearch.from_context(ctx, workflow)

    factory.strategy_name = GraphSearch.strategy_name  # type: ignore[attr-defined]
    return factory
