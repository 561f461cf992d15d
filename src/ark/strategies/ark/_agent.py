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

import json
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
from ark.strategies.guided.hints import ChainHints
from ark.strategies.guided.plans import (
    PlanModel,
    PlanRun,
    choice_messages,
    choice_schema,
    plan_features,
    plan_model,
    plan_words,
    read_choice,
    reading_finishes,
    ready_call,
    run_plan,
)
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
    the graph's own schema and nodes; ``hints``: observations that name the returned
    types and give the next call ready to copy — the relation the question names and
    the search has not followed yet, or the add once all are followed — and remind the
    question when the answer gets a node already explored past. The prompt variant is
    :attr:`AgentConfig.prompt` (recorded with the run's config)."""

    example: bool = False
    hints: bool = False
    #: With ``hints`` and plans on: where the plan is not sure by itself but it and its
    #: rival are together, the model chooses between the two in one short call
    #: (:func:`ark.strategies.guided.plans.plan_words`) and the chosen plan runs; False: the model
    #: runs the steps. Off by default: the local 1.5B chooses little better than chance
    #: (``docs/decisions/plan-threshold.md``).
    choose_plans: bool = False
    #: With ``hints`` and plans on: a plan that stops before its finish hands the
    #: session over part way (its steps kept, the model going on from there);
    #: False: the model starts afresh.
    hand_over_plans: bool = True
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
LAST_STEP_NOTE = "last step with an empty answer: only add_to_answer and finish offered"

#: The tokens a plan choice's reply may take (``{"reading": 2}`` is about six).
CHOICE_TOKENS = 16

#: The note of a ``finish`` the reading ran after the model's add (:meth:`Agent._finish_read`).
FINISH_READ_NOTE = "the reading's plan ends with this add: finish run without the model"

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
        #: The tools of a last step with an empty answer (:meth:`_step_tools`).
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

    def new_session(self, query: str | None = None, *, rival: bool = False) -> ToolSession:
        """The session of one run, with the hints observing it when the options ask
        (``rival``: hints following the reading's rival chain, for a plan choice)."""
        hints = [ChainHints(self.index, query, rival=rival)] if self.options.hints else []
        return ToolSession(
            self.index,
            tools=self.tools,
            config=self.config.tools,
            question=query,
            observers=hints,
            refuse_unseen=self.options.hints,
            texts_once=self.options.texts_once,
        )

    async def run(self, query: str, query_id: str | None = None) -> Trajectory:
        cfg = self.config
        started = time.perf_counter()
        traj = start_trajectory(
            query,
            query_id,
            self.llm.name,
            {**cfg.to_dict(), "agent": self.agent_number, **self._options_record()},
        )
        messages = [
            Message(role="system", content=self.system),
            Message(role="user", content=query),
        ]
        planned = await self._planned(query, traj, messages)
        session = planned if planned is not None else self.new_session(query)
        stop = "finish" if session.finished else "max_steps"
        # The model goes on after the steps already taken: a plan's handed over part
        # way, or a choice's call that chose no plan (a model call of the budget).
        first = cfg.max_steps if session.finished else len(traj.steps)
        for step in range(first, cfg.max_steps):
            specs, extra = self._step_tools(step, session)
            extra.update(self._prediction(session, extra))
            try:
                completion = await self.llm.complete(
                    messages,
                    specs,
                    temperature=cfg.temperature,
                    max_tokens=cfg.max_tokens,
                    seed=None if cfg.seed is None else cfg.seed + step,
                    **extra,
                )
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
            record = self._step_record(step, completion)
            traj.usage["prompt_tokens"] += completion.usage.prompt_tokens
            traj.usage["completion_tokens"] += completion.usage.completion_tokens
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
                    empty = self.options.hints and not session.answer
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

    async def _planned(
        self, query: str, traj: Trajectory, messages: list[Message]
    ) -> ToolSession | None:
        """The session of the reading's plan, run without the model, when the plan runs
        to its finish with a confidence of at least ``plan_threshold``, or when the
        model chose it over its rival (:meth:`_chosen`): its steps are recorded
        (``by="plan"``) and its calls and observations written into ``messages`` as a
        model's would be. On a graph built from documents, the plan's sure part, handed
        over (:meth:`_document_plan`). Else None, and the model runs every step as
        before. What was decided is kept in ``traj.config["plan"]``."""
        threshold = self.config.plan_threshold
        if threshold is None or not self.options.hints:
            return None
        session = self.new_session(query)
        hints = _hints(session)
        assert hints is not None
        if hints.documents:
            return self._document_plan(session, hints, traj, messages)
        model, why = plan_model(self.index)
        if model is None:
            traj.config["plan"] = {"threshold": threshold, "ran": False, "why": why}
            return None
        started = time.perf_counter()
        run = run_plan(session, hints, self.config.max_steps)
        confidence = model.confidence(plan_features(hints, run)) if run.complete else None
        sure = confidence is not None and confidence >= threshold
        traj.config["plan"] = {
            "threshold": threshold,
            "ran": sure,
            "stop": run.stop,
            "confidence": None if confidence is None else round(confidence, 4),
            "seconds": round(time.perf_counter() - started, 4),
        }
        if sure:
            self._record_plan(run, traj, messages)
            return session
        if confidence is None:
            return self._handed_over(session, run, traj, messages)
        if not self.options.choose_plans:
            return None
        return await self._chosen(query, traj, messages, model, (session, hints, run), confidence)

    async def _chosen(
        self,
        query: str,
        traj: Trajectory,
        messages: list[Message],
        model: PlanModel,
        first: tuple[ToolSession, ChainHints, PlanRun],
        confidence: float,
    ) -> ToolSession | None:
        """A plan not sure by itself, and its rival's (the best reading to other
        nodes): when both run to their finish and their confidences together reach the
        threshold, one of the two is the answer as surely as a plan that runs alone, and
        which one is the decision left: the model is asked it in one call whose reply
        is a number (:func:`ark.strategies.guided.plans.choice_messages`), and the chosen plan's
        steps are the run's. After a reply that chooses neither, the model runs the
        steps, the choice's call counted as the first of them."""
        threshold = self.config.plan_threshold
        assert threshold is not None
        record = traj.config["plan"]
        other = self.new_session(query, rival=True)
        rival_hints = _hints(other)
        if rival_hints is None or rival_hints.chain is None:
            return None
        rival_run = run_plan(other, rival_hints, self.config.max_steps)
        if not rival_run.complete:
            return None
        rival_confidence = model.confidence(plan_features(rival_hints, rival_run))
        record["rival_confidence"] = round(rival_confidence, 4)
        if confidence + rival_confidence < threshold:
            return None
        plans = [first, (other, rival_hints, rival_run)]
        readings = [plan_words(h, r) for _, h, r in plans]
        try:
            completion = await self.llm.complete(
                choice_messages(query, readings),
                (),
                temperature=self.config.temperature,
                max_tokens=CHOICE_TOKENS,
                seed=self.config.seed,
                response_schema=choice_schema(len(plans)),
            )
        except ArkError as exc:  # the backend gave up: the model runs the steps instead
            record["choice"] = {"error": str(exc)}
            return None
        chosen = read_choice(completion.data, len(plans))
        step = self._step_record(0, completion)
        step.module = "choose_plan"
        step.note = (
            "the reply chose no reading: the model runs the steps"
            if chosen is None
            else f"the model chose reading {chosen + 1} of {len(plans)}"
        )
        traj.steps.append(step)
        traj.usage["prompt_tokens"] += completion.usage.prompt_tokens
        traj.usage["completion_tokens"] += completion.usage.completion_tokens
        record["choice"] = {"readings": readings, "chosen": chosen}
        if chosen is None:
            return None
        session, _, run = plans[chosen]
        record["ran"] = True
        self._record_plan(run, traj, messages, first_index=1)
        return session

    def _document_plan(
        self, session: ToolSession, hints: ChainHints, traj: Trajectory, messages: list[Message]
    ) -> ToolSession | None:
        """On a graph built from documents, the plan's sure part (the search for the
        nodes the question names, the hop to the passages that mention them) run
        without the model and handed over before its first add: no confidence is
        needed for calls that only read."""
        started = time.perf_counter()
        run = run_plan(session, hints, self.config.max_steps)
        traj.config["plan"] = {
            "threshold": self.config.plan_threshold,
            "ran": False,
            "stop": run.stop,
            "documents": True,
            "seconds": round(time.perf_counter() - started, 4),
        }
        return self._handed_over(session, run, traj, messages)

    def _handed_over(
        self, session: ToolSession, run: PlanRun, traj: Trajectory, messages: list[Message]
    ) -> ToolSession | None:
        """A plan that stopped before its finish, where a decision is left (a hint line
        offering no call or a choice, an empty result, a failed call): with
        ``AgentOptions.hand_over_plans``, its steps are kept as the run's first
        (``by="plan"``) and the model goes on from there with the trajectory so far,
        instead of making the same calls again. None where nothing ran or no step is
        left: the model starts afresh."""
        if not run.steps or run.stop == "max steps" or not self.options.hand_over_plans:
            return None
        traj.config["plan"]["handed_over"] = len(run.steps)
        self._record_plan(run, traj, messages)
        return session

    def _record_plan(
        self, run: PlanRun, traj: Trajectory, messages: list[Message], first_index: int = 0
    ) -> None:
        """The plan's steps as the trajectory's (``by="plan"``, no model call; numbered
        from ``first_index``, after a choice's step) and as assistant calls and tool
        observations in ``messages``, with the budget notes the loop writes; each
        reported as an event, as the model's steps are."""
        for i, step in enumerate(run.steps):
            raw = json.dumps(step.arguments, ensure_ascii=False)
            call = ToolCall(f"plan_{i}", step.name, step.arguments, raw)
            observation = step.outcome.observation
            if step.name != "finish":
                empty = not any(s.outcome.added for s in run.steps[: i + 1])
                observation += steps_left_note(self.config.max_steps - i - 1, answer_empty=empty)
            self._plan_step(traj, messages, first_index + i, call, step.outcome, observation)

    def _plan_step(
        self,
        traj: Trajectory,
        messages: list[Message],
        index: int,
        call: ToolCall,
        outcome: CallOutcome,
        observation: str,
        note: str | None = None,
    ) -> None:
        """One call the reading ran (no model call): the assistant turn that makes it,
        its step record (``by="plan"``, no tokens or latency) and its observation."""
        messages.append(Message(role="assistant", content="", tool_calls=(call,)))
        record = StepRecord(
            index=index,
            llm_latency_s=0,
            prompt_tokens=0,
            completion_tokens=0,
            content="",
            by="plan",
            note=note,
        )
        traj.steps.append(record)
        self._keep_call(record, messages, index, call, outcome, observation, by="plan")

    def _finish_read(
        self,
        session: ToolSession,
        msg: Message,
        outcomes: list[CallOutcome],
        traj: Trajectory,
        messages: list[Message],
    ) -> bool:
        """After the model's step: when it was an add after which the reading's plan
        would finish (:func:`ark.strategies.guided.plans.reading_finishes`), run that ``finish``
        without the model, as a plan step, and say so; the answer list is then final
        (``AgentConfig.finish_when_read``; why: ``docs/decisions/engine-steps.md``)."""
        cfg = self.config
        step = session.step + 1
        if not (cfg.finish_when_read and self.options.hints) or step >= cfg.max_steps:
            return False
        hints = _hints(session)
        if len(msg.tool_calls) != 1 or hints is None:
            return False
        if not reading_finishes(hints, msg.tool_calls[0].name, outcomes[0]):
            return False
        session.step = step
        outcome = session.call("finish", {})
        call = ToolCall(f"read_{step}", "finish", {}, "{}")
        self._plan_step(traj, messages, step, call, outcome, outcome.observation, FINISH_READ_NOTE)
        return session.finished

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

    def _step_tools(
        self, step: int, session: ToolSession
    ) -> tuple[list[dict[str, object]], dict[str, object]]:
        """The tools offered at ``step`` and the keywords that restrict the reply: all
        of them, except, with the hints, on the last step while the answer is empty and
        a search has shown nodes: only ``add_to_answer`` and ``finish``.

        Why: the last step's search is never read (no step follows it), and a small
        model ignores a reminder to add (``docs/decisions/engine-steps.md``); offered
        only the answer tools it adds the nodes it judges best of those it saw, or
        finishes empty. The tools are part of the prompt, so a
        backend that can restrict the reply by its grammar (``restricts_tools``, the
        local model) is offered every tool and told which it may write
        (``allowed_tools``): the prompt continues the last one and its KV cache is
        reused (``docs/decisions/engine-steps.md``). Any other backend is offered the
        two tools alone. The paper's loop (``ark``) is unchanged.
        """
        last = step == self.config.max_steps - 1
        if self.options.hints and last and not session.answer and session.seen:
            if getattr(self.llm, "restricts_tools", False):
                return self.specs, {"allowed_tools": list(ANSWER_TOOLS)}
            return self.answer_specs, {}
        return self.specs, {}

    def _prediction(self, session: ToolSession, restrict: dict[str, object]) -> dict[str, ToolCall]:
        """``{"prediction": call}``: the call the last hint line offers ready to copy
        (:func:`ark.strategies.guided.plans.ready_call`), for a backend that drafts it
        (``accepts_prediction``); else nothing. The model still chooses every token:
        the prediction only lets a reply that copies the hint be decoded in a few
        batches."""
        if not (self.options.hints and getattr(self.llm, "accepts_prediction", False)):
            return {}
        hints = _hints(session)
        if hints is None or not hints.last_line:
            return {}
        call = ready_call(hints.last_line)
        allowed = restrict.get("allowed_tools")
        if call is None or (isinstance(allowed, list) and call[0] not in allowed):
            return {}
        name, arguments = call
        try:  # a prediction only saves decodes: nothing about it may end the run
            raw = json.dumps(arguments, ensure_ascii=False)
        except (TypeError, ValueError):
            return {}
        return {"prediction": ToolCall("predicted", name, arguments, raw)}

    def _options_record(self) -> dict[str, object]:
        """The options that differ from the defaults (none: the record is unchanged)."""
        default = AgentOptions().to_dict()
        changed = {k: v for k, v in self.options.to_dict().items() if default[k] != v}
        return {"options": changed} if changed else {}

    @staticmethod
    def _step_record(step: int, completion: Completion) -> StepRecord:
        return StepRecord(
            index=step,
            llm_latency_s=round(completion.latency_s, 4),
            prompt_tokens=completion.usage.prompt_tokens,
            completion_tokens=completion.usage.completion_tokens,
            content=completion.message.content,
            cached=completion.cached,
            profile=completion.profile.to_dict() if completion.profile else None,
        )


def _hints(session: ToolSession) -> ChainHints | None:
    """The chain hints observing ``session`` (``ark-guided``'s), or None."""
    hints = session.observers[0] if session.observers else None
    return hints if isinstance(hints, ChainHints) else None


def guided_agent(ctx: StrategyContext) -> Agent:
    """ARK's loop with the aids for small models (strategy ``"ark-guided"``): the hints
    that read the question's chain against the schema and the hop over a set of nodes.
    The tools, the answer list and the vote are the paper's; only the observations and
    the neighborhood tool's reach differ (measured: ``journal/quality-log.md``)."""
    tools = replace(ctx.config.tools, multi_neighborhood=True)
    config = replace(ctx.config, tools=tools)
    options = AgentOptions(hints=True, texts_once=True)
    return Agent(ctx.index, ctx.llm, config, options=options, **ctx.shared())


# ARK fuses three agents (the paper's n).
register_strategy("ark", Agent.from_context, default_agents=3)
register_strategy("ark-guided", guided_agent, default_agents=3)
