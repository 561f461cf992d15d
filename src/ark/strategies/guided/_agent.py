"""``ark-guided``: ARK's loop with the aids for small models.

:class:`GuidedAgent` is the paper's loop (:class:`ark.strategies.ark.Agent`) with
the hints observing its session (:class:`ChainHints`: the next call written into
each observation), an unseen node refused, the last step offered only the answer
tools while the answer is empty, the hinted call drafted for a backend that accepts
a prediction, and the reading's plan run without the model where it is sure
(:mod:`ark.strategies.guided.plans`). The loop itself knows none of this: it calls
the hooks this class fills in.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, replace

from ark.errors import ArkError
from ark.index import Index
from ark.llm import ChatModel, Message, ToolCall
from ark.session import ANSWER_TOOLS, CallOutcome, ToolSession
from ark.strategies._protocol import AgentConfig, EventHandler, StrategyContext, register_strategy
from ark.strategies.ark import Agent, AgentOptions, steps_left_note
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
from ark.tools import GraphTools
from ark.trajectory import StepRecord, Trajectory

__all__ = ["CHOICE_TOKENS", "FINISH_READ_NOTE", "GuidedAgent", "GuidedOptions", "guided_agent"]

#: The tokens a plan choice's reply may take (``{"reading": 2}`` is about six).
CHOICE_TOKENS = 16

#: The note of a ``finish`` the reading ran after the model's add (``_finish_read``).
FINISH_READ_NOTE = "the reading's plan ends with this add: finish run without the model"

#: The order of the keys of a trajectory's ``config["options"]``, kept as it was when
#: one options class held the loop's and the guided strategy's switches: records
#: written before and after compare equal.
_RECORD_ORDER = ("example", "hints", "choose_plans", "hand_over_plans", "texts_once")


@dataclass(frozen=True)
class GuidedOptions:
    """How ``ark-guided`` uses its plans, beside the loop's :class:`AgentOptions`."""

    #: Where the plan is not sure by itself but it and its rival are together, the
    #: model chooses between the two in one short call
    #: (:func:`ark.strategies.guided.plans.plan_words`) and the chosen plan runs;
    #: False: the model runs the steps. Off by default: the local 1.5B chooses little
    #: better than chance (``docs/decisions/plan-threshold.md``).
    choose_plans: bool = False
    #: A plan that stops before its finish hands the session over part way (its steps
    #: kept, the model going on from there); False: the model starts afresh.
    hand_over_plans: bool = True

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


class GuidedAgent(Agent):
    """ARK's loop with the hints and plans (strategy ``ark-guided``): runs one
    trajectory for one question."""

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
        guided: GuidedOptions | None = None,
    ) -> None:
        super().__init__(
            index,
            llm,
            config,
            tools=tools,
            agent_number=agent_number,
            on_event=on_event,
            options=options,
        )
        self.guided = guided or GuidedOptions()

    @classmethod
    def from_context(
        cls,
        ctx: StrategyContext,
        options: AgentOptions | None = None,
        guided: GuidedOptions | None = None,
    ) -> GuidedAgent:
        return cls(ctx.index, ctx.llm, ctx.config, options=options, guided=guided, **ctx.shared())

    def new_session(self, question: str | None = None, *, rival: bool = False) -> ToolSession:
        """The session of one run, the hints observing it (``rival``: hints following
        the reading's rival chain, for a plan choice); a call on a node no result
        showed is refused."""
        return ToolSession(
            self.index,
            tools=self.tools,
            config=self.config.tools,
            question=question,
            observers=[ChainHints(self.index, question, rival=rival)],
            refuse_unseen=True,
            texts_once=self.options.texts_once,
        )

    def _reminds_empty(self, session: ToolSession) -> bool:
        return not session.answer

    def _options_record(self) -> dict[str, object]:
        """The options that differ from the loop's defaults, with ``hints`` on: the key
        that says a record is ``ark-guided``'s (its hints, unseen nodes refused, the
        answer-only last step), as it said when it was one switch of the loop."""
        changed: dict[str, object] = {"hints": True}
        for options, default in ((self.options, AgentOptions()), (self.guided, GuidedOptions())):
            ours, theirs = options.to_dict(), default.to_dict()
            changed.update({k: v for k, v in ours.items() if theirs[k] != v})
        return {"options": {k: changed[k] for k in _RECORD_ORDER if k in changed}}

    async def _planned(
        self, question: str, traj: Trajectory, messages: list[Message]
    ) -> ToolSession | None:
        """The session of the reading's plan, run without the model, when the plan runs
        to its finish with a confidence of at least ``plan_threshold``, or when the
        model chose it over its rival (:meth:`_chosen`): its steps are recorded
        (``by="plan"``) and its calls and observations written into ``messages`` as a
        model's would be. A plan that took the add of a choice the hints left
        (:func:`~ark.strategies.guided.plans.concluding_add`) and is not sure of it is
        run again up to that choice and handed over there. On a graph built from
        documents, the plan's sure part, handed over (:meth:`_document_plan`). Else
        None, and the model runs every step as before. What was decided is kept in
        ``traj.config["plan"]`` (``chose``: the step of the choice taken)."""
        threshold = self.config.plan_threshold
        if threshold is None:
            return None
        session = self.new_session(question)
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
        if run.chose is not None:
            traj.config["plan"]["chose"] = run.chose
        if sure:
            self._record_plan(run, traj, messages)
            return session
        if run.chose is not None:  # not sure of the add it chose: the choice is the model's
            session = self.new_session(question)
            hints = _hints(session)
            assert hints is not None
            run = run_plan(session, hints, self.config.max_steps, choices=False)
            traj.config["plan"]["stop"] = run.stop
            return self._handed_over(session, run, traj, messages)
        if confidence is None:
            return self._handed_over(session, run, traj, messages)
        if not self.guided.choose_plans:
            return None
        return await self._chosen(
            question, traj, messages, model, (session, hints, run), confidence
        )

    async def _chosen(
        self,
        question: str,
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
        other = self.new_session(question, rival=True)
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
                choice_messages(question, readings),
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
        ``GuidedOptions.hand_over_plans``, its steps are kept as the run's first
        (``by="plan"``) and the model goes on from there with the trajectory so far,
        instead of making the same calls again. None where nothing ran or no step is
        left: the model starts afresh."""
        if not run.steps or run.stop == "max steps" or not self.guided.hand_over_plans:
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
        if not cfg.finish_when_read or step >= cfg.max_steps:
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

    def _step_tools(
        self, step: int, session: ToolSession
    ) -> tuple[list[dict[str, object]], dict[str, object]]:
        """The tools offered at ``step`` and the keywords that restrict the reply: all
        of them, except on the last step once a search has shown nodes: only
        ``add_to_answer`` and ``finish``.

        Why: the last step's search is never read (no step follows it), and a small
        model ignores a reminder to add (``docs/decisions/engine-steps.md``); offered
        only the answer tools it adds the nodes it judges best of those it saw, or
        finishes. The tools are part of the prompt, so a
        backend that can restrict the reply by its grammar (``restricts_tools``, the
        local model) is offered every tool and told which it may write
        (``allowed_tools``): the prompt continues the last one and its KV cache is
        reused (``docs/decisions/engine-steps.md``). Any other backend is offered the
        two tools alone. The paper's loop (``ark``) is unchanged.
        """
        last = step == self.config.max_steps - 1
        if last and session.seen:
            if getattr(self.llm, "restricts_tools", False):
                return self.specs, {"allowed_tools": list(ANSWER_TOOLS)}
            return self.answer_specs, {}
        return self.specs, {}

    def _prediction(self, session: ToolSession, restrict: dict[str, object]) -> dict[str, ToolCall]:
        """``{"prediction": call}``: the call the last hint offers ready to copy
        (:func:`ark.strategies.guided.plans.ready_call`), for a backend that drafts it
        (``accepts_prediction``); else nothing. The model still chooses every token:
        the prediction only lets a reply that copies the hint be decoded in a few
        batches."""
        if not getattr(self.llm, "accepts_prediction", False):
            return {}
        hints = _hints(session)
        if hints is None:
            return {}
        call = ready_call(hints.last_part)
        allowed = restrict.get("allowed_tools")
        if call is None or (isinstance(allowed, list) and call[0] not in allowed):
            return {}
        name, arguments = call
        try:  # a prediction only saves decodes: nothing about it may end the run
            raw = json.dumps(arguments, ensure_ascii=False)
        except (TypeError, ValueError):
            return {}
        return {"prediction": ToolCall("predicted", name, arguments, raw)}

    def _redraw(
        self,
        session: ToolSession,
        reply: Message,
        specs: list[dict[str, object]],
        extra: dict[str, object],
    ) -> tuple[list[dict[str, object]], dict[str, object]] | None:
        """The tools and keywords to ask again with when every call of ``reply`` is a
        search the session would refuse as a repeat (:meth:`ToolSession.made`): the
        same prompt, the repeated tools not allowed; None: the reply runs.

        Why: a refused repeat costs a step of the budget and a model call that reads
        the refusal; asked again, the prompt is the one just read (a KV cache holds
        it), so the second reply costs its decoding only. Once a step: a second repeat
        runs and is refused as before. Off unless ``AgentConfig.redraw_repeats``: the
        refusal's hint can serve a small model better
        (``docs/decisions/engine-steps.md``)."""
        if not self.config.redraw_repeats or not reply.tool_calls:
            return None
        if not all(
            isinstance(c.arguments, dict) and session.made(c.name, c.arguments)
            for c in reply.tool_calls
        ):
            return None
        repeated = {c.name for c in reply.tool_calls}
        offered = extra.get("allowed_tools")
        names = offered if isinstance(offered, list) else [s["function"]["name"] for s in specs]  # type: ignore[index]
        keep = [n for n in names if n not in repeated]
        if not keep:
            return None
        if getattr(self.llm, "restricts_tools", False):
            restrict: dict[str, object] = {"allowed_tools": keep}
            return specs, {**restrict, **self._prediction(session, restrict)}
        return [s for s in specs if s["function"]["name"] in keep], {}  # type: ignore[index]


def _hints(session: ToolSession) -> ChainHints | None:
    """The chain hints observing ``session`` (``ark-guided``'s), or None."""
    hints = session.observers[0] if session.observers else None
    return hints if isinstance(hints, ChainHints) else None


def guided_agent(ctx: StrategyContext) -> GuidedAgent:
    """ARK's loop with the aids for small models (strategy ``"ark-guided"``): the hints
    that read the question's chain against the schema and the hop over a set of nodes.
    The tools, the answer list and the vote are the paper's; only the observations and
    the neighborhood tool's reach differ (measured: ``journal/quality-log.md``)."""
    tools = replace(ctx.config.tools, multi_neighborhood=True)
    config = replace(ctx.config, tools=tools)
    return GuidedAgent(
        ctx.index, ctx.llm, config, options=AgentOptions(texts_once=True), **ctx.shared()
    )


# ARK fuses three agents (the paper's n).
register_strategy("ark-guided", guided_agent, default_agents=3)
