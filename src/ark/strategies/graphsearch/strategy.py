"""GraphSearch's workflow as an ARK strategy: decompose, then per step ground,
retrieve and refine in two channels, draft, verify, and expand while verification
rejects (bounded), then record what the answer in words is to be written from, all
through one tool session and the ChatModel protocol.

On a graph built from documents (passage nodes, ``ark.graph._documents``) the
channels are the paper's: the semantic one reads passages, the relational one the
extracted triples, and refinement writes a summary and a sub-answer per sub-query
(``documents.py``); on a curated graph they search node text and follow typed edges.

Each module's model call is a step of the trajectory (``StepRecord.module``); the
tool calls of a sub-query's retrieval are a step of their own (module ``retrieval``,
no model call). The ranking is the drafted chain's answer nodes, then the nodes the
last step of each channel kept, fused across the two channels by vote. The workflow's
answer in words is written by the answer step above retrieval (``ark.answer``), from
the basis recorded under the trajectory's ``graphsearch.answer_basis`` (the nodes the
workflow found, the edges it followed, the seed); the answer step then records it as
the trajectory's last step (module ``answer_generation``) and under
``graphsearch.answer``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from ark.errors import ArkError
from ark.fusion import fuse_vote
from ark.graph import ENTITY_TYPE, MENTIONS, entity_key
from ark.index import Index
from ark.llm import ChatModel, Message
from ark.session import ToolSession
from ark.strategies._basis import BASIS_KEY, AnswerBasis, Edge
from ark.strategies._protocol import (
    AgentConfig,
    AgentEvent,
    EventHandler,
    StrategyContext,
    start_trajectory,
)
from ark.strategies.graphsearch import modules as m
from ark.strategies.graphsearch import prompts
from ark.strategies.graphsearch.documents import PASSAGE_K, DocumentGraph, render_passages
from ark.tools import GraphTools
from ark.trajectory import StepRecord, ToolCallRecord, Trajectory

EVIDENCE_NODES = 12  # nodes listed per step in the evidence the drafter and judge read
ANSWER_NODES = 12  # nodes whose text the final answer step reads (the basis's nodes)
ANSWER_EDGES = 40  # edges followed to them, shown as facts


@dataclass(frozen=True)
class GraphSearchConfig:
    """The workflow's own knobs. ``expansions``: verify-expand rounds after the first
    draft (the public code does one); ``channels``: which retrieval channels run;
    ``answer``: record the basis of the workflow's own answer in words, which the
    answer step (``ark.answer``) writes from in one model call past ``max_steps``
    (off: it reads the fused retrieval as for any strategy);
    on a graph built from documents, ``passages``: passages per semantic sub-query, and
    ``dense``: fuse dense retrieval in when the index has embeddings (``ark index
    embed``): a retrieval channel, not a switch of the sentence encoder that the tools
    (``ToolConfig.phrase_encoder``) and the reading (``ark.reading``'s ``encoder``)
    use."""

    expansions: int = 1
    channels: tuple[str, ...] = (m.SEMANTIC, m.RELATIONAL)
    answer: bool = True
    passages: int = PASSAGE_K
    dense: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "expansions": self.expansions,
            "channels": list(self.channels),
            "answer": self.answer,
            "passages": self.passages,
            "dense": self.dense,
        }


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
        self.tools = tools or GraphTools(index, phrase_encoder=self.config.tools.phrase_encoder)
        self.agent_number = agent_number
        self.on_event = on_event
        self.workflow = workflow or GraphSearchConfig()

    @classmethod
    def from_context(
        cls, ctx: StrategyContext, workflow: GraphSearchConfig | None = None
    ) -> GraphSearch:
        return cls(ctx.index, ctx.llm, ctx.config, workflow=workflow, **ctx.shared())

    async def run(self, question: str, question_id: str | None = None) -> Trajectory:
        """Run the workflow; any failure ends it with ``stop_reason="error"`` and the
        error recorded, keeping what was found (one agent failing must not cost the
        others' answers). Only cancellation and interpreter exits propagate."""
        started = time.perf_counter()
        self._traj = start_trajectory(
            question,
            question_id,
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
        self._steps: dict[str, list[m.SubQuery]] = {m.SEMANTIC: [], m.RELATIONAL: []}
        self._draft: tuple[str, list[int]] = ("", [])
        self._verdicts: list[Any] = []
        self._basis: AnswerBasis | None = None
        self._answer_error: str | None = None
        self._doc: DocumentGraph | None = None
        self._free = False
        stop = "max_steps"
        try:
            self._doc = DocumentGraph.of(self.index, self.workflow.dense)
            self._free = prompts.free_relations(self.index.schema, self._doc is not None)
            try:
                if await self._workflow(question):
                    stop = "finish"
            except _OutOfBudget:
                pass
        except ArkError as exc:  # the backend gave up after its retries
            self._traj.error = str(exc)
            stop = "error"
        except Exception as exc:  # a backend or module bug: this agent ends, its work is kept
            self._traj.error = f"{type(exc).__name__}: {exc}"
            stop = "error"
        if self.workflow.answer and stop != "error":
            try:
                self._basis = self._answer_basis()
            except Exception as exc:  # the retrieval stands, with no answer in words
                self._answer_error = f"{type(exc).__name__}: {exc}"
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
            "verdicts": self._verdicts,
            "answer": None,  # the answer step writes it (ark.answer), from the basis
        }
        if self._basis is not None:
            traj.extra["graphsearch"][BASIS_KEY] = self._basis.to_dict()
        if self._answer_error:
            traj.extra["graphsearch"]["answer_error"] = self._answer_error
        traj.wall_s = round(time.perf_counter() - started, 4)
        return traj

    # -- the workflow ------------------------------------------------------------------

    async def _workflow(self, question: str) -> bool:
        """True when verification accepted a draft."""
        free, phrases = self._free, self._doc is not None
        semantic, relational = await m.decompose(
            self._ask, question, self.index.schema, free, phrases
        )
        new = self._adopt(semantic, relational)
        for round_ in range(self.workflow.expansions + 1):
            for step in new:
                await self._answer_step(question, step)
            evidence, candidates = self._evidence()
            chain, answer = await m.draft(self._ask, question, evidence, candidates)
            self._draft = (chain, answer)
            names = "; ".join(f"[{n}] {self.index.graph.name(n)}" for n in answer)
            verdict = await m.verify(self._ask, question, evidence, chain, names)
            self._verdicts.append(verdict.raw)
            if not verdict.valid and self._traj.steps[-1].note is None:
                self._traj.steps[-1].note = "verdict is neither yes nor no"
            if verdict.accepted:
                return True
            if round_ == self.workflow.expansions:
                break
            first = (self._next(m.SEMANTIC), self._next(m.RELATIONAL))
            semantic, relational = await m.expand(
                self._ask, question, self.index.schema, evidence, verdict.missing, first,
                free, phrases,
            )  # fmt: skip
            new = self._adopt(semantic, relational)
            if not new:
                break
        return False

    def _adopt(self, semantic: list[m.SubQuery], relational: list[m.SubQuery]) -> list[m.SubQuery]:
        new = []
        for channel, steps in ((m.SEMANTIC, semantic), (m.RELATIONAL, relational)):
            if channel in self.workflow.channels:
                self._steps[channel].extend(steps)
                new.extend(steps)
        return new

    def _next(self, channel: str) -> int:
        steps = self._steps[channel]
        return steps[-1].number + 1 if steps else 1

    async def _answer_step(self, question: str, step: m.SubQuery) -> None:
        """Ground, retrieve and refine one sub-query."""
        if self._doc is not None:
            await self._read_step(question, step)
            return
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
            if grounded_name is None and not m.has_anchor(step, nodes):
                # Both ends are placeholders no earlier step answers (a plan such as
                # ("#1", rel, "#2") at step 1): the model names the known end, so the
                # channel still searches instead of making no call at all.
                grounded_name = await m.ground(
                    self._ask, step, self._history(step.channel), question
                )
            step.grounded = grounded_name or m.ground_text(step.text, names, step.number)
            calls = m.retrieve_relational(self._session, step, nodes, grounded_name)
        self._record_retrieval(step, calls)
        step.nodes = await m.refine(self._ask, question, step, step.grounded or step.text, calls)
        step.answer = "; ".join(self.index.graph.name(n) for n in step.nodes[: m.NAMES_PER_REF])

    async def _read_step(self, question: str, step: m.SubQuery) -> None:
        """One sub-query on a graph built from documents: placeholders filled with the
        earlier steps' sub-answers, passages (semantic) or the anchor's triples and the
        passages that mention it (relational) retrieved, then read into a summary, a
        sub-answer and the nodes kept."""
        doc = self._doc
        assert doc is not None
        g = self.index.graph
        done = {s.number: s for s in self._steps[step.channel] if s.number < step.number}
        subs = {
            n: [s.answer] if m.known(s.answer) else [g.name(x) for x in s.nodes]
            for n, s in done.items()
        }
        text = m.ground_text(step.text, subs, step.number)
        if text is None:  # an earlier step found nothing: the model fills the placeholder
            text = (
                await m.ground(self._ask, step, self._history(step.channel), question) or step.text
            )
        step.grounded = text
        calls: list[m.Call] = []
        if step.channel == m.SEMANTIC or step.triple is None:
            calls.append(doc.search_passages(text, self.workflow.passages))
            shown, candidates = calls[0][2].observation, list(calls[0][2].nodes)
        else:
            shown, candidates = await self._relational_read(question, step, done, calls)
        self._record_retrieval(step, calls)
        step.summary, step.answer, step.nodes = await m.read(
            self._ask, question, step, text, shown, candidates
        )

    async def _relational_read(
        self, question: str, step: m.SubQuery, done: dict[int, m.SubQuery], calls: list[m.Call]
    ) -> tuple[str, list[int]]:
        """The relational channel on a document graph: the anchor entity (an earlier
        step's entities or sub-answer, else the triple's named end, else a name the
        model gives), its triples ranked by the step's relation phrase, and the passages
        mentioning it. No anchor at all: passages for the step's words instead."""
        doc, g, session = self._doc, self.index.graph, self._session
        assert doc is not None and step.triple is not None
        t = step.triple
        ends = [t.subject, t.object]
        refs = [[r for r in m.references(e)] for e in ends]
        side = next((i for i in (0, 1) if any(0 < r < step.number for r in refs[i])), None)
        if side is None:
            side = next((i for i in (0, 1) if not refs[i]), 0)
        other = ends[1 - side]
        anchors: list[int] = []
        earlier = [r for r in refs[side] if 0 < r < step.number]
        if earlier and earlier[0] in done:
            # The earlier step's sub-answer names the entity: a kept entity spelt like
            # it, else the entity found by that name; the kept entities only when the
            # step gave no answer in words (a kept entity may be a stop on the way).
            prev = done[earlier[0]]
            kept = [n for n in prev.nodes if g.type_name(n) == ENTITY_TYPE]
            if m.known(prev.answer):
                key = entity_key(prev.answer)
                anchors = [n for n in kept if entity_key(g.name(n)) == key]
                anchors = anchors or doc.anchors(session, prev.answer, calls) or kept
            else:
                anchors = kept
        elif not refs[side]:
            anchors = doc.anchors(session, ends[side], calls)
        if not anchors:
            name = await m.ground(self._ask, step, self._history(step.channel), question)
            anchors = doc.anchors(session, name, calls) if name else []
        if not anchors:
            call = doc.search_passages(step.grounded or step.text, self.workflow.passages)
            calls.append(call)
            return call[2].observation, list(call[2].nodes)
        calls += doc.explore(session, anchors, t.relation, None if m.references(other) else other)
        triples = doc.triples(calls, t.relation)
        passages: list[int] = []
        for name, args, outcome in calls:
            if name == "search_in_neighborhood" and args.get("node_type") != ENTITY_TYPE:
                passages += [n for n in outcome.nodes if n not in passages]
        facts = "\n".join(line for _, line in triples) or "(no facts)"
        shown = f"Facts about {', '.join(g.name(a) for a in anchors)}:\n{facts}"
        if passages:
            shown += "\n\n" + render_passages(self.index, passages, "Passages mentioning it")
        candidates = [n for n, _ in triples]
        candidates += [n for n in passages if n not in candidates]
        return shown, candidates

    # -- evidence and the answer ---------------------------------------------------------

    def _evidence_line(self, step: m.SubQuery) -> str:
        g = self.index.graph
        if self._doc is not None:  # a sub-answer and summary in words, then the nodes kept
            kept = "; ".join(
                f"[{n}] {g.name(n)} ({g.type_name(n)})" for n in step.nodes[:EVIDENCE_NODES]
            )
            return (
                f"{step.label} {step.grounded or step.text} -> "
                f"{step.answer if m.known(step.answer) else 'unknown'}"
                + (f". {step.summary}" if step.summary else "")
                + (f" (from {kept})" if kept else "")
            )
        found = "; ".join(
            f"[{n}] {g.name(n)} ({g.type_name(n)})" for n in step.nodes[:EVIDENCE_NODES]
        )
        more = len(step.nodes) - EVIDENCE_NODES
        found += f"; and {more} more" if more > 0 else ""
        return f"{step.label} {step.grounded or step.text} -> {found or 'nothing found'}"

    def _history(self, channel: str) -> str:
        return "\n".join(self._evidence_line(s) for s in self._steps[channel] if s.grounded)

    def _evidence(self) -> tuple[str, list[int]]:
        lines, candidates = [], []
        for channel in (m.SEMANTIC, m.RELATIONAL):
            for s in self._steps[channel]:
                if s.grounded is None:
                    continue
                lines.append(self._evidence_line(s))
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

    def _answer_nodes(self) -> list[int]:
        """What the answer step reads, best first: the draft's answer, the nodes each
        step kept (on a document graph, the passages the sub-answers came from), then
        the rest of the ranking; at most :data:`ANSWER_NODES`."""
        order = list(self._draft[1])
        for channel in (m.SEMANTIC, m.RELATIONAL):
            for step in self._steps[channel]:
                order += step.nodes
        order += self._ranking()
        return list(dict.fromkeys(order))[:ANSWER_NODES]

    def _followed(self, nodes: list[int]) -> list[Edge]:
        """``(head, relation, tail)`` of the edges the relational channel followed to
        ``nodes`` (as the answer step shows them: a name-only node needs its edge to
        say anything), not ``mentions`` (the passage's own text is shown)."""
        wanted = set(nodes)
        edges: dict[Edge, None] = {}
        for record in self._traj.steps:
            for call in record.tool_calls:
                if call.center is None or not call.relations:
                    continue
                for node, rels in zip(call.nodes, call.relations, strict=False):
                    if node not in wanted:
                        continue
                    for rel in rels:
                        if rel["type"] == MENTIONS:
                            continue
                        out = rel["direction"] == "out"
                        edge = (
                            (call.center, rel["type"], node)
                            if out
                            else (node, rel["type"], call.center)
                        )
                        edges[edge] = None
        return list(edges)[:ANSWER_EDGES]

    def _answer_basis(self) -> AnswerBasis:
        """What the workflow's answer in words is to be written from: its answer nodes,
        the edges followed to them, and the seed of the call that writes it (the one
        after the workflow's last). The answer step (``ark.answer``) writes it with
        ``ark.answer.write_answer``, one model call past ``max_steps``: the paper's
        workflow ends with an answer however its rounds ended. Written greedily
        whatever the workflow's temperature, as every answer step writes: rows of an
        answer table then differ by what was retrieved, not by a sampled writer."""
        nodes = self._answer_nodes()
        cfg = self.config
        seed = 0 if cfg.seed is None else cfg.seed + self._calls
        return AnswerBasis(nodes, self._followed(nodes), seed)

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

    def _record_retrieval(self, step: m.SubQuery, calls: list[m.Call]) -> None:
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
                ToolCallRecord.from_outcome(
                    f"gs_{index}_{i}", name, args, outcome, raw_arguments=json.dumps(args)
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
