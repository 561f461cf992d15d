"""One ARK agent: the tool-calling loop of the paper (SPEC §4).

The model sees the question, calls tools, adds nodes it has seen to an ordered
answer list, and finishes (or runs out of steps). Every failure short of the model
backend giving up — a bad tool, malformed arguments, an unknown or unseen node, a
reply in prose — becomes an observation the model can act on; the loop never raises
for them. A backend failure (after its own retries) ends this agent with
``stop_reason="error"`` and keeps what it had found.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ark._coerce import as_int
from ark.agent._prompt import system_prompt
from ark.agent._specs import MAX_ADD, ToolConfig, agent_tool_specs, allowed_arguments
from ark.errors import ArkError
from ark.index import Index
from ark.llm import ChatModel, Message, ToolCall
from ark.tools import GraphTools, SearchResult, ToolError
from ark.trajectory import StepRecord, ToolCallRecord, Trajectory

NO_TOOL_CALL = (
    "You replied without calling a tool. Continue the search with search_in_graph or "
    "search_in_neighborhood, add the nodes that answer the question with add_to_answer, "
    "and call finish when the answer list is complete."
)


@dataclass(frozen=True)
class AgentConfig:
    max_steps: int = 20
    temperature: float = 0.7
    tools: ToolConfig = field(default_factory=ToolConfig)
    max_tokens: int | None = 1024
    seed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "max_steps": self.max_steps,
            "temperature": self.temperature,
            "tools": self.tools.to_dict(),
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }


@dataclass
class _RunState:
    """What one run has seen and selected so far."""

    seen: set[int] = field(default_factory=set)
    answer: list[int] = field(default_factory=list)
    warned_empty: bool = False
    calls: dict[str, int] = field(default_factory=dict)  # search call -> step first made
    step: int = 0


@dataclass
class _Outcome:
    """The result of one tool call as the loop records it."""

    observation: str
    ok: bool = True
    code: str | None = None
    nodes: list[int] = field(default_factory=list)
    finish: bool = False


def _error(observation: str, code: str) -> _Outcome:
    return _Outcome(observation, ok=False, code=code)


@dataclass(frozen=True)
class AgentEvent:
    """Emitted after every tool call, for live display."""

    agent: int
    step: int
    tool: str
    arguments: dict[str, Any] | None
    ok: bool
    summary: str


EventHandler = Callable[[AgentEvent], None]


class Agent:
    """Runs one trajectory for one question."""

    def __init__(
        self,
        index: Index,
        llm: ChatModel,
        config: AgentConfig | None = None,
        *,
        tools: GraphTools | None = None,
        agent_number: int = 0,
        on_event: EventHandler | None = None,
    ) -> None:
        self.index = index
        self.llm = llm
        self.config = config or AgentConfig()
        self.tools = tools or GraphTools(index)
        self.agent_number = agent_number
        self.on_event = on_event
        self.specs = agent_tool_specs(index.schema, self.config.tools)
        self._allowed = allowed_arguments(self.specs)
        self.system = system_prompt(index.schema, self.config.tools, self.config.max_steps)

    async def run(self, query: str, query_id: str | None = None) -> Trajectory:
        cfg = self.config
        started = time.perf_counter()
        traj = Trajectory(
            query=query,
            model=self.llm.name,
            config={**cfg.to_dict(), "agent": self.agent_number},
            id=uuid.uuid4().hex,
            query_id=query_id,
            created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        )
        messages = [
            Message(role="system", content=self.system),
            Message(role="user", content=query),
        ]
        state = _RunState()
        stop = "max_steps"
        for step in range(cfg.max_steps):
            try:
                completion = await self.llm.complete(
                    messages,
                    self.specs,
                    temperature=cfg.temperature,
                    max_tokens=cfg.max_tokens,
                    seed=None if cfg.seed is None else cfg.seed + step,
                )
            except ArkError as exc:  # the backend gave up after its retries
                traj.error = str(exc)
                stop = "error"
                break
            msg = completion.message
            messages.append(msg)
            state.step = step
            record = StepRecord(
                index=step,
                llm_latency_s=round(completion.latency_s, 4),
                prompt_tokens=completion.usage.prompt_tokens,
                completion_tokens=completion.usage.completion_tokens,
                content=msg.content,
            )
            traj.usage["prompt_tokens"] += completion.usage.prompt_tokens
            traj.usage["completion_tokens"] += completion.usage.completion_tokens
            traj.steps.append(record)
            if not msg.tool_calls:
                record.note = "no tool call"
                messages.append(Message(role="user", content=NO_TOOL_CALL))
                continue
            finished = False
            for call in msg.tool_calls:
                t0 = time.perf_counter()
                outcome = self._dispatch(call, state)
                observation = outcome.observation
                finished = finished or outcome.finish
                steps_left = cfg.max_steps - step - 1
                if not outcome.finish and 0 < steps_left <= 2 and call is msg.tool_calls[-1]:
                    observation += f"\n({steps_left} step{'s' if steps_left > 1 else ''} left.)"
                record.tool_calls.append(
                    ToolCallRecord(
                        id=call.id,
                        name=call.name,
                        arguments=call.arguments,
                        raw_arguments=call.raw_arguments,
                        observation=observation,
                        ok=outcome.ok,
                        error_code=outcome.code,
                        nodes=outcome.nodes,
                        duration_s=round(time.perf_counter() - t0, 6),
                    )
                )
                messages.append(
                    Message(role="tool", content=observation, tool_call_id=call.id, name=call.name)
                )
                if self.on_event:
                    self.on_event(
                        AgentEvent(
                            self.agent_number,
                            step,
                            call.name,
                            call.arguments,
                            outcome.ok,
                            observation.splitlines()[0][:160],
                        )
                    )
            if finished:
                stop = "finish"
                break
        traj.stop_reason = stop  # type: ignore[assignment]
        traj.answer = state.answer
        traj.messages = [m.to_dict() for m in messages]
        traj.wall_s = round(time.perf_counter() - started, 4)
        return traj

    # -- one tool call -----------------------------------------------------------------

    def _dispatch(self, call: ToolCall, state: _RunState) -> _Outcome:
        """Run one call of the model's; every failure is an observation, never a raise."""
        name = call.name
        if name not in self._allowed:
            offered = ", ".join(self._allowed)
            return _error(f"Error: there is no tool {name!r}. Tools: {offered}.", "unknown_tool")
        if call.arguments is None:
            raw = call.raw_arguments[:200]
            return _error(
                f"Error in {name}: the arguments are not a JSON object: {raw!r}.", "bad_arguments"
            )
        unknown = set(call.arguments) - self._allowed[name]
        if unknown:
            return _error(
                f"Error in {name}: unknown argument(s) {sorted(unknown)}; "
                f"this tool takes {sorted(self._allowed[name])}.",
                "bad_arguments",
            )
        if name == "finish":
            if not state.answer and not state.warned_empty:
                state.warned_empty = True
                return _error(
                    "Your answer list is empty. Add the answer nodes with add_to_answer, or "
                    "call finish again to end with an empty answer.",
                    "empty_answer",
                )
            return _Outcome(
                f"Finished with {len(state.answer)} node(s) in the answer.", finish=True
            )
        if name == "add_to_answer":
            return self._add(call.arguments.get("node_indices"), state)
        signature = name + json.dumps(call.arguments, sort_keys=True, default=str)
        if signature in state.calls:
            return _error(
                f"You already made this exact {name} call at step {state.calls[signature] + 1}; "
                "its result is above and has not changed. Use a different node, filter or "
                "query, add the nodes that answer the question, or finish.",
                "repeated_call",
            )
        state.calls[signature] = state.step
        result = self.tools.call(name, call.arguments)
        if isinstance(result, ToolError):
            return _error(result.render(), result.code)
        assert isinstance(result, SearchResult)
        nodes = [h.index for h in result.hits]
        state.seen.update(nodes)
        if result.center is not None:
            state.seen.add(result.center.index)
        return _Outcome(result.render(), nodes=nodes)

    def _add(self, raw: object, state: _RunState) -> _Outcome:
        seen, answer = state.seen, state.answer
        values = raw if isinstance(raw, list) else [raw]
        if raw is None or not values:
            return _error(
                "Error in add_to_answer: node_indices must be a non-empty list of integers.",
                "bad_arguments",
            )
        if len(values) > MAX_ADD:
            return _error(
                f"Error in add_to_answer: {len(values)} node indices given, at most "
                f"{MAX_ADD} per call. Add the best {MAX_ADD} first, then call again.",
                "bad_arguments",
            )
        added, already, unseen, invalid = [], [], [], []
        for v in values:
            node = as_int(v)
            if node is None:
                invalid.append(v)
            elif node not in seen:
                unseen.append(node)
            elif node in answer:
                already.append(node)
            else:
                answer.append(node)
                added.append(node)
        g = self.index.graph
        parts = []
        if added:
            parts.append("Added " + ", ".join(f"[{n}] {g.name(n)}" for n in added) + ".")
        if already:
            parts.append(f"Already in the answer: {already}.")
        if unseen:
            parts.append(
                f"Not added, never returned by a search: {unseen}. Only nodes shown in tool "
                "results can be added."
            )
        if invalid:
            parts.append(f"Not node indices: {invalid!r}.")
        parts.append(f"The answer has {len(answer)} node(s).")
        ok = not unseen and not invalid
        code = None if ok else ("unseen_node" if unseen else "bad_arguments")
        return _Outcome(" ".join(parts), ok=ok, code=code)
