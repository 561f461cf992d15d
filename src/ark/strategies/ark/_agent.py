"""One ARK agent: the tool-calling loop of the paper (SPEC §4), as a strategy.

The model sees the question, calls tools, adds nodes it has seen to an ordered
answer list, and finishes (or runs out of steps). The answer state, repeat detection
and every fault short of the model backend giving up — a bad tool, malformed
arguments, an unknown or unseen node — are the tool session's; the loop turns its
outcomes into observations. A reply in prose, or one cut at the token limit, is
answered with a nudge. A backend failure (after its own retries) ends this agent with
``stop_reason="error"`` and keeps what it had found; so does any other exception
the backend raises (a bug there must not lose the trajectory).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, replace

from ark._safe import too_deep
from ark.errors import ArkError
from ark.index import Index
from ark.llm import ChatModel, Completion, Message, ToolCall
from ark.session import ANSWER_TOOLS, CallOutcome, ToolSession
from ark.strategies._protocol import (
    AgentConfig,
    AgentEvent,
    EventHandler,
    StrategyContext,
    register_strategy,
    start_trajectory,
)
from ark.strategies.ark._prompt import system_prompt, worked_example
from ark.tools import ErrorCode, GraphTools, tool_specs
from ark.trajectory import StepRecord, ToolCallRecord, Trajectory

__all__ = [
    "Agent",
    "AgentConfig",
    "AgentEvent",
    "AgentOptions",
    "EventHandler",
    "steps_left_note",
]


@dataclass(frozen=True)
class AgentOptions:
    """How ARK's loop talks to the model (each measured on MetaQA dev:
    ``journal/quality-log.md``). ``example``: a worked two-hop example built from
    the graph's own schema and nodes. The prompt variant is :attr:`AgentConfig.prompt`
    (recorded with the run's config); the hints and plans are ``ark-guided``'s
    (:class:`ark.strategies.guided.GuidedAgent`)."""

    example: bool = False
    #: A node's text (a passage's) is printed in the first observation that lists it;
    #: later ones list the node by index and name and point to it: the conversation
    #: holds it already, and reading it again is the step's cost.
    texts_once: bool = False

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def steps_left_note(steps_left: int, *, answer_empty: bool = False) -> str:
    """The note appended to a step's last observation when one or two steps are left
    (``"\\n(2 steps left.)"``; with ``answer_empty``, also the reminder to add and
    finish), else ``""``. One home, because the training oracle
    (:mod:`ark.distill.synthesize`) appends it too: a student must train on the very
    text the agent will show it."""
    if not 0 < steps_left <= 2:
        return ""
    left = f"{steps_left} step{'s' if steps_left > 1 else ''} left"
    if answer_empty:
        left += (
            " and your answer is empty: add the nodes from the results above "
            "that answer the question, then finish"
        )
    return f"\n({left}.)"


#: The note of a step offered only the answer tools (:meth:`Agent._step_tools`).
LAST_STEP_NOTE = "last step: only add_to_answer and finish offered"

NO_TOOL_CALL = (
    "You replied without calling a tool. Continue the search with search_in_graph or "
    "search_in_neighborhood, add the nodes that answer the question with add_to_answer, "
    "and call finish when the answer list is complete."
)


def _cut_message(max_tokens: int | None) -> str:
    limit = f" ({max_tokens} tokens)" if max_tokens else ""
    return (
        f"Your reply was cut off at the output limit{limit} before the tool call was "
        "complete, so nothing was run. Make one short tool call."
    )


def _writable(msg: Message) -> Message:
    """``msg`` with tool-call arguments nested past :data:`MAX_NESTING` levels dropped
    (their raw text kept): a backend may parse thousands of levels, and every later
    copy, comparison or write of the history would overflow the recursion limit."""
    if not any(too_deep(c.arguments) for c in msg.tool_calls):
        return msg
    calls = tuple(
        replace(c, arguments=None) if too_deep(c.arguments) else c for c in msg.tool_calls
    )
    return replace(msg, tool_calls=calls)


class Agent:
    """ARK's strategy: runs one trajectory for one question."""

    strategy_name = "ark"

    def __init__(
        self,
        index: Index,
        llm: ChatModel,
        config: AgentConfig | None = None,
        *,
        tools: GraphTools | None = None,
        agent_number: int = 0,
        on_event: EventHandler | None = None,
        options: AgentOptions | None = None,
    ) -> None:
        self.options = options or AgentOptions()
        self.index = index
        self.llm = llm
        self.config = config or AgentConfig()
        self.tools = tools or GraphTools(index, phrase_encoder=self.config.tools.phrase_encoder)
        self.agent_number = agent_number
        self.on_event = on_event
        self.specs = tool_specs(index.schema, self.config.tools, answer_tools=True)
        #: The tools of a last step (:meth:`_step_tools`).
        self.answer_specs = [s for s in self.specs if s["function"]["name"] in ANSWER_TOOLS]
        example = worked_example(index, self.config.tools) if self.options.example else None
        self.system = system_prompt(
            index.schema,
            self.config.tools,
            self.config.max_steps,
            self.config.prompt,
            example=example,
        )

    @classmethod
    def from_context(cls, ctx: StrategyContext, options: AgentOptions | None = None) -> Agent:
        return cls(ctx.index, ctx.llm, ctx.config, options=options, **ctx.shared())

    def new_session(self, question: str | None = None) -> ToolSession:
        """The session of one run (no observers: the paper's loop has no aids)."""
        return ToolSession(
            self.index,
            tools=self.tools,
            config=self.config.tools,
            question=question,
            texts_once=self.options.texts_once,
        )

    async def run(self, question: str, question_id: str | None = None) -> Trajectory:
        cfg = self.config
        started = time.perf_counter()
        traj = start_trajectory(
            question,
            question_id,
            self.llm.name,
            {**cfg.to_dict(), "agent": self.agent_number, **self._options_record()},
        )
        messages = [
            Message(role="system", content=self.system),
            Message(role="user", content=question),
        ]
        planned = await self._planned(question, traj, messages)
        session = planned if planned is not None else self.new_session(question)
        stop = "finish" if session.finished else "max_steps"
        # The model goes on after the steps already taken: a plan's handed over part
        # way, or a choice's call that chose no plan (a model call of the budget).
        first = cfg.max_steps if session.finished else len(traj.steps)
        for step in range(first, cfg.max_steps):
            specs, extra = self._step_tools(step, session)
            extra.update(self._prediction(session, extra))
            redrawn: Completion | None = None
            try:
                completion = await self._ask(messages, specs, extra, step)
                again = self._redraw(session, completion.message, specs, extra)
                if again is not None:  # the reply is not run; the model is asked again
                    redrawn = completion
                    completion = await self._ask(messages, *again, step)
            except ArkError as exc:  # the backend gave up after its retries
                traj.error = str(exc)
                stop = "error"
                break
            except Exception as exc:  # a backend bug: this agent ends, its work is kept
                traj.error = f"{type(exc).__name__}: {exc}"
                stop = "error"
                break
            msg = _writable(completion.message)
            messages.append(msg)
            session.step = step
            record = self._step_record(step, completion, redrawn)
            traj.usage["prompt_tokens"] += record.prompt_tokens
            traj.usage["completion_tokens"] += record.completion_tokens
            traj.steps.append(record)
            if specs is self.answer_specs or "allowed_tools" in extra:
                record.note = LAST_STEP_NOTE
            cut = completion.finish_reason == "length"
            if not msg.tool_calls:
                record.note = "output cut at max_tokens" if cut else "no tool call"
                nudge = _cut_message(cfg.max_tokens) if cut else NO_TOOL_CALL
                messages.append(Message(role="user", content=nudge))
                continue
            if cut:
                record.note = "output cut at max_tokens"
                cut_outcome = CallOutcome(
                    _cut_message(cfg.max_tokens), ok=False, code=str(ErrorCode.OUTPUT_CUT)
                )
                outcomes = [cut_outcome for _ in msg.tool_calls]
            else:
                outcomes = session.run_reply(msg.tool_calls)
            steps_left = cfg.max_steps - step - 1
            for i, (call, outcome) in enumerate(zip(msg.tool_calls, outcomes, strict=True)):
                observation = outcome.observation
                if not session.finished and i == len(msg.tool_calls) - 1:
                    empty = self._reminds_empty(session)
                    observation += steps_left_note(steps_left, answer_empty=empty)
                self._keep_call(record, messages, step, call, outcome, observation)
            if session.finished or self._finish_read(session, msg, outcomes, traj, messages):
                stop = "finish"
                break
        traj.stop_reason = stop  # type: ignore[assignment]
        traj.answer = list(session.answer)
        traj.messages = [m.to_dict() for m in messages]
        traj.wall_s = round(time.perf_counter() - started, 4)
        return traj

    async def _ask(
        self,
        messages: list[Message],
        specs: list[dict[str, object]],
        extra: dict[str, object],
        step: int,
    ) -> Completion:
        """The model's reply at ``step`` (``extra``: the backend's keywords, e.g.
        ``allowed_tools``, ``prediction``)."""
        cfg = self.config
        return await self.llm.complete(
            messages,
            specs,
            temperature=cfg.temperature,
            max_tokens=cfg.max_tokens,
            seed=None if cfg.seed is None else cfg.seed + step,
            **extra,  # type: ignore[arg-type]
        )

    # -- what a strategy built on this loop may change (ark-guided:
    #    :class:`ark.strategies.guided.GuidedAgent`); here, the paper's loop ------------

    async def _planned(
        self, question: str, traj: Trajectory, messages: list[Message]
    ) -> ToolSession | None:
        """A session whose first steps ran before the model's, recorded in ``traj``
        and ``messages``; None: the model runs every step (the paper's loop)."""
        return None

    def _finish_read(
        self,
        session: ToolSession,
        msg: Message,
        outcomes: list[CallOutcome],
        traj: Trajectory,
        messages: list[Message],
    ) -> bool:
        """After the model's step, whether a step run without the model finished the
        session; the paper's loop runs none."""
        return False

    def _step_tools(
        self, step: int, session: ToolSession
    ) -> tuple[list[dict[str, object]], dict[str, object]]:
        """The tools offered at ``step`` and the keywords that restrict the reply
        (``allowed_tools``); the paper's loop offers every tool at every step."""
        return self.specs, {}

    def _prediction(self, session: ToolSession, restrict: dict[str, object]) -> dict[str, ToolCall]:
        """``{"prediction": call}`` for a backend that drafts a call it expects; none here."""
        return {}

    def _redraw(
        self,
        session: ToolSession,
        reply: Message,
        specs: list[dict[str, object]],
        extra: dict[str, object],
    ) -> tuple[list[dict[str, object]], dict[str, object]] | None:
        """The tools and keywords to ask the model again with, its ``reply`` left
        unrun; None: the reply runs. The paper's loop runs every reply (a repeat is
        refused by the session and the refusal read as the step's observation)."""
        return None

    def _reminds_empty(self, session: ToolSession) -> bool:
        """Whether the budget note also reminds the model that its answer is empty."""
        return False

    def _keep_call(
        self,
        record: StepRecord,
        messages: list[Message],
        step: int,
        call: ToolCall,
        outcome: CallOutcome,
        observation: str,
        by: str = "model",
    ) -> None:
        """One call of ``step`` kept: in its step's record, as the tool message the
        model reads next, and as an event for live display."""
        record.tool_calls.append(
            ToolCallRecord.from_outcome(
                call.id,
                call.name,
                call.arguments,
                outcome,
                raw_arguments=call.raw_arguments,
                observation=observation,
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
                    by=by,
                )
            )

    def _options_record(self) -> dict[str, object]:
        """The options that differ from the defaults (none: the record is unchanged)."""
        default = AgentOptions().to_dict()
        changed = {k: v for k, v in self.options.to_dict().items() if default[k] != v}
        return {"options": changed} if changed else {}

    @staticmethod
    def _step_record(
        step: int, completion: Completion, redrawn: Completion | None = None
    ) -> StepRecord:
        """The step's record: the kept reply's content; its latency, tokens and profile
        those of both calls where a reply was ``redrawn`` (its call kept in
        :attr:`StepRecord.redrawn`), so a step's seconds are all its model calls'."""
        calls = [completion] if redrawn is None else [redrawn, completion]
        profiles = [c.profile for c in calls if c.profile]
        return StepRecord(
            index=step,
            llm_latency_s=round(sum(c.latency_s for c in calls), 4),
            prompt_tokens=sum(c.usage.prompt_tokens for c in calls),
            completion_tokens=sum(c.usage.completion_tokens for c in calls),
            content=completion.message.content,
            cached=completion.cached,
            profile=sum(profiles[1:], profiles[0]).to_dict() if profiles else None,
            redrawn=None if redrawn is None else _redrawn_record(redrawn),
        )


def _redrawn_record(completion: Completion) -> dict[str, object]:
    """What a step keeps of a reply it did not run: the calls, tokens and seconds."""
    return {
        "tool_calls": [
            {"name": c.name, "arguments": c.arguments} for c in completion.message.tool_calls
        ],
        "latency_s": round(completion.latency_s, 4),
        "prompt_tokens": completion.usage.prompt_tokens,
        "completion_tokens": completion.usage.completion_tokens,
    }


# ARK fuses three agents (the paper's n).
register_strategy("ark", Agent.from_context, default_agents=3)
