"""The reading's plan, run through the tool session without a model.

With the hints of ``ark-guided`` a small model mostly copies the call a hint writes
(issue 62). The plan is that sequence: a global search for the node the question
names (the nodes, for an intersection), then, after each call, the one call the
hint's part offers (:func:`ready_call`), and ``finish`` once an add leaves nothing
to do. It stops, and leaves the rest to the model, wherever something is left to
decide: a line offering no call or a choice of several, a call that fails or is a
repeat, a search with no results. One choice it takes: where the chain it followed
ends and the hints offer a hop for words left unexplained beside the add, the plan
takes the add (:func:`concluding_add`; the chain scorer weighed those words when it
chose the chain), marks the step (:attr:`PlanStep.chose`), and the confidence, which
has a feature for it, decides; a plan not sure of it is handed to the model at the
choice (``run_plan(..., choices=False)``; ``docs/decisions/plan-threshold.md``).

On a graph built from documents only the reading is sure: the search for the nodes
the question names and the hop to the passages that mention them. Whether a passage
states a fact the question needs is read in its text, so the plan stops before the
first add and hands the session to the model (``"add"``).

Everything runs through :class:`ark.session.ToolSession`, so a plan's steps are
ordinary steps with real observations, and a model that takes over reads them as
its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ark.index import Index
from ark.session import CallOutcome, ToolSession
from ark.strategies.guided.hints import ChainHints
from ark.strategies.guided.plans._calls import Call, calls_in, concluding_add, ready_call
from ark.tools import GraphTools, ToolConfig

#: The steps a plan may take outside an agent (a fit, a benchmark): ``ark-guided``'s
#: documented budget (``--max-steps 8``).
PLAN_STEPS = 8
#: Why a plan stopped: it finished, or what it left to the model.
STOPS = ("finish", "no plan", "no call", "failed", "empty", "max steps", "add")


@dataclass
class PlanStep:
    """One call the plan ran and what it gave."""

    name: str
    arguments: dict[str, Any]
    outcome: CallOutcome
    #: The call was the add of a choice the hints left (:func:`concluding_add`).
    chose: bool = False


@dataclass
class PlanRun:
    """What the plan did in one session: its steps, and why it stopped (``STOPS``)."""

    steps: list[PlanStep] = field(default_factory=list)
    stop: str = "no plan"

    @property
    def complete(self) -> bool:
        """Whether the plan ran to its ``finish``: no decision was left to the model."""
        return self.stop == "finish"

    @property
    def answer(self) -> list[int]:
        """The nodes the plan's adds appended, in order."""
        return [n for s in self.steps for n in (s.outcome.added or [])]

    @property
    def chose(self) -> int | None:
        """The step at which the plan took the add of a choice (:func:`concluding_add`),
        or None."""
        return next((i for i, s in enumerate(self.steps) if s.chose), None)


def first_call(hints: ChainHints) -> Call | None:
    """The plan's first call: a global search for the node the question names (its
    name as the query), or for the nodes of an intersection or, on a graph built from
    documents, all the nodes it names; None when the reading has no plan: it names no
    node, or the chain is a guess the hints hand to the model
    (:attr:`ChainHints.guess`)."""
    reading = hints.reading
    if reading is None or not reading.entities:
        return None
    g = hints.index.graph
    if hints.documents:
        names = [g.name(e.index) for e in reading.entities]
        return "search_in_graph", {"query": " ".join(dict.fromkeys(names))}
    if hints.guess is not None:
        return None
    if len(reading.entities) > 1:
        names = [g.name(e.index) for e in reading.entities]
    elif hints.chain is not None:
        names = [g.name(hints.chain.anchor)]
    else:
        return None
    return "search_in_graph", {"query": " ".join(dict.fromkeys(names))}


def next_call(hints: ChainHints, last: PlanStep) -> Call | str:
    """The call after ``last``, or why the plan stops there (one of ``STOPS``)."""
    outcome = last.outcome
    if not outcome.ok:
        return "failed"
    if last.name == "add_to_answer":
        if not outcome.added:  # nothing new: no hint followed it, the last part is stale
            return "no call"
        if hints.last_part is None:
            return "finish", {}
        return ready_call(hints.last_part) or "no call"
    if last.name == "finish":
        return "finish"
    if not outcome.nodes:
        return "empty"
    if hints.documents:
        return _passages_call(hints, last)
    return ready_call(hints.last_part) or "no call"


def _passages_call(hints: ChainHints, last: PlanStep) -> Call | str:
    """On a graph built from documents: after the first search, the hop to the
    passages that mention the nodes it found, where the hint line offers one (beside
    an add, which is the model's); after that hop, ``"add"``: what the passages
    state is for the model to judge."""
    if last.name != "search_in_graph":
        return "add"
    hops = [c for c in calls_in(hints.last_part) if c[0] == "search_in_neighborhood"]
    return hops[0] if len(hops) == 1 else "no call"


def reading_finishes(hints: ChainHints, name: str, outcome: CallOutcome) -> bool:
    """Whether the reading's plan would call ``finish`` right after the call ``name``
    that gave ``outcome`` (whoever made it): the reading has a plan
    (:func:`first_call`), the call was an add that added nodes, and the hints offer
    nothing after it. Then the finish is known (``docs/decisions/engine-steps.md``).
    Never on a graph built from documents: whether the passages added state every fact
    is the model's to judge."""
    if name != "add_to_answer" or hints.documents or first_call(hints) is None:
        return False
    return next_call(hints, PlanStep(name, {}, outcome)) == ("finish", {})


def run_plan(
    session: ToolSession,
    hints: ChainHints,
    max_steps: int,
    on_step: Callable[[PlanStep], None] | None = None,
    *,
    choices: bool = True,
) -> PlanRun:
    """Run the plan in ``session`` (observed by ``hints``) for at most ``max_steps``
    calls; ``on_step`` sees each step as it is made. The session is left where the
    plan stopped, for a model to take over. ``choices``: take the add of a choice the
    hints leave after a hop (:func:`concluding_add`); without it the plan stops there
    (``"no call"``), where a model takes over."""
    run = PlanRun()
    call: Call | str | None = first_call(hints)
    chose = False
    if call is None:
        return run
    while isinstance(call, tuple):
        if len(run.steps) >= max_steps:
            run.stop = "max steps"
            return run
        name, arguments = call
        session.step = len(run.steps)
        step = PlanStep(name, arguments, session.call(name, arguments), chose)
        run.steps.append(step)
        if on_step is not None:
            on_step(step)
        if name == "finish" and session.finished:
            run.stop = "finish"
            return run
        call = next_call(hints, step)
        chose = False
        if call == "no call" and choices and step.name != "add_to_answer" and not hints.documents:
            add = concluding_add(hints.last_part)
            if add is not None:
                call, chose = add, True
    run.stop = call
    return run


def plan_question(
    index: Index,
    question: str,
    tools: GraphTools,
    config: ToolConfig,
    max_steps: int = PLAN_STEPS,
) -> tuple[ChainHints, PlanRun]:
    """``question``'s plan run outside an agent, in the session ``ark-guided`` would
    give it (its hints observing, unseen nodes refused): the hints, for the plan's
    features, and the run."""
    hints = ChainHints(index, question)
    session = ToolSession(
        index,
        tools=tools,
        config=config,
        question=question,
        observers=[hints],
        refuse_unseen=True,
    )
    return hints, run_plan(session, hints, max_steps)
