"""The strategy protocol: how one agent turns a question into a trajectory.

ARK's free-form tool loop is one strategy; GraphSearch's workflow is another. The
retriever runs ``n_agents`` strategies built by a factory from a
:class:`StrategyContext` and fuses their answers, and the evaluation runner and the
CLI go through the retriever, so a new strategy needs nothing else. This module is
also the one registry of strategies by name: ``register_strategy`` in code, or the
``ark.strategies`` entry point group for an installed package; the CLI reads it.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Protocol, runtime_checkable

from ark.errors import ArkError
from ark.index import Index
from ark.llm import ChatModel
from ark.tools import GraphTools, ToolConfig
from ark.trajectory import Trajectory


@dataclass(frozen=True)
class AgentConfig:
    """Settings every strategy shares; a strategy may ignore what it has no use for."""

    max_steps: int = 20
    temperature: float = 0.7
    tools: ToolConfig = field(default_factory=ToolConfig)
    max_tokens: int | None = 1024
    seed: int | None = None
    #: System prompt variant (``ark.strategies.ark._prompt.PROMPT_VARIANTS``); a distilled
    #: student runs with the variant it was trained on.
    prompt: str = "full"
    #: A strategy that reads a plan (``ark-guided``) runs it without the model when its
    #: confidence is at least this (:mod:`ark.strategies.guided.plans`); None: the model runs
    #: every step.
    plan_threshold: float | None = None
    #: With a plan's reading (``ark-guided``), an add after which the plan would
    #: finish is followed by ``finish`` without asking the model
    #: (:func:`ark.strategies.guided.plans.reading_finishes`); False: the model is asked.
    finish_when_read: bool = True
    #: ``ark-guided``: a reply whose every call the session would refuse as a repeat is
    #: not run; the model is asked again at the same prompt, the repeated tools not
    #: allowed. Off by default: the refusal's hint helped the 1.5B more than a second
    #: draw without the tool (``docs/decisions/engine-steps.md``).
    redraw_repeats: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "max_steps": self.max_steps,
            "temperature": self.temperature,
            "tools": self.tools.to_dict(),
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            **({"prompt": self.prompt} if self.prompt != "full" else {}),
            **({"plan_threshold": self.plan_threshold} if self.plan_threshold is not None else {}),
            **({} if self.finish_when_read else {"finish_when_read": False}),
            **({"redraw_repeats": True} if self.redraw_repeats else {}),
        }


@dataclass(frozen=True)
class AgentEvent:
    """Emitted after every tool call, for live display."""

    agent: int
    step: int
    tool: str
    arguments: dict[str, Any] | None
    ok: bool
    summary: str
    #: Who chose the call: ``"model"``, or ``"plan"`` when the reading's plan ran it.
    by: str = "model"


EventHandler = Callable[[AgentEvent], None]


@runtime_checkable
class Strategy(Protocol):
    """One agent: ``run`` returns the trajectory of one question (never raises for
    anything the model or the tools do; a backend failure is ``stop_reason="error"``)."""

    async def run(self, question: str, question_id: str | None = None) -> Trajectory: ...


@dataclass(frozen=True)
class StrategyContext:
    """What a strategy factory gets to build agent number ``agent_number``."""

    index: Index
    llm: ChatModel
    tools: GraphTools
    config: AgentConfig
    agent_number: int = 0
    on_event: EventHandler | None = None

    def shared(self) -> dict[str, Any]:
        """The keyword arguments every strategy's constructor takes after its
        positional ``(index, llm, config)``."""
        return {"tools": self.tools, "agent_number": self.agent_number, "on_event": self.on_event}


StrategyFactory = Callable[[StrategyContext], Strategy]


def start_trajectory(
    question: str, question_id: str | None, model: str, config: dict[str, Any]
) -> Trajectory:
    """A new trajectory record with its id and creation time, for any strategy."""
    return Trajectory(
        question=question,
        model=model,
        config=config,
        id=uuid.uuid4().hex,
        question_id=question_id,
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )


#: The entry point group a package names its strategies in (``pyproject.toml``:
#: ``[project.entry-points."ark.strategies"] mine = "my_pkg:factory"``).
ENTRY_POINT_GROUP = "ark.strategies"


@dataclass(frozen=True)
class StrategyInfo:
    """A registered strategy: its factory and how many agents run it by default."""

    name: str
    factory: StrategyFactory
    #: Agents ``--agents`` defaults to (ARK fuses three; a workflow runs once).
    default_agents: int = 1


_STRATEGIES: dict[str, StrategyInfo] = {}


def register_strategy(
    name: str, factory: StrategyFactory, *, default_agents: int | None = None
) -> None:
    """Make ``factory`` available by ``name`` (``Retriever(strategy=name)``,
    ``--strategy name`` of ``ark ask``/``ark eval``).

    ``default_agents`` is how many agents run it when none is asked for; without it,
    the factory's ``default_agents`` attribute, else 1 (one run, the cheap default).
    """
    agents = default_agents or getattr(factory, "default_agents", None) or 1
    if not isinstance(agents, int) or agents < 1:
        raise ArkError(f"strategy {name!r}: default_agents must be a positive integer")
    _STRATEGIES[name] = StrategyInfo(name, factory, agents)


@functools.cache
def _entry_points() -> dict[str, EntryPoint]:
    """Strategies installed packages declare (read once; loaded only when named)."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _load_entry_point(name: str) -> StrategyInfo | None:
    ep = _entry_points().get(name)
    if ep is None:
        return None
    try:
        factory = ep.load()
    except Exception as exc:  # a broken plugin names itself, never a traceback
        raise ArkError(
            f"strategy {name!r} (entry point {ep.value}) failed to load: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    if not callable(factory):
        raise ArkError(f"strategy {name!r} (entry point {ep.value}) is not a factory")
    register_strategy(name, factory)
    return _STRATEGIES[name]


def strategy_names() -> list[str]:
    """Every strategy a name can pick: registered ones and installed entry points."""
    return sorted(set(_STRATEGIES) | set(_entry_points()))


def strategy_info(name: str) -> StrategyInfo:
    """The registered strategy ``name`` (an entry point is loaded on first use)."""
    info = _STRATEGIES.get(name) or _load_entry_point(name)
    if info is None:
        raise ArkError(f"unknown strategy {name!r}; choose one of {', '.join(strategy_names())}")
    return info


def resolve_strategy(strategy: str | StrategyFactory) -> tuple[str, StrategyFactory]:
    """The (name, factory) for a registered name or a factory given directly."""
    if isinstance(strategy, str):
        return strategy, strategy_info(strategy).factory
    if not callable(strategy):
        raise ArkError(f"a strategy is a registered name or a factory, got {strategy!r}")
    name = getattr(strategy, "strategy_name", None) or getattr(strategy, "__name__", "custom")
    return str(name), strategy
