"""The strategy protocol: how one agent turns a question into a trajectory.

ARK's free-form tool loop is one strategy; GraphSearch's workflow is another. The
retriever runs ``n_agents`` strategies built by a factory from a
:class:`StrategyContext` and fuses their answers, and the evaluation runner and the
CLI go through the retriever, so a new strategy needs nothing else.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
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
    #: System prompt variant (``ark.agent._prompt.PROMPT_VARIANTS``); a distilled
    #: student runs with the variant it was trained on.
    prompt: str = "full"

    def to_dict(self) -> dict[str, Any]:
        return {
            "max_steps": self.max_steps,
            "temperature": self.temperature,
            "tools": self.tools.to_dict(),
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            **({"prompt": self.prompt} if self.prompt != "full" else {}),
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


EventHandler = Callable[[AgentEvent], None]


@runtime_checkable
class Strategy(Protocol):
    """One agent: ``run`` returns the trajectory of one question (never raises for
    anything the model or the tools do; a backend failure is ``stop_reason="error"``)."""

    async def run(self, query: str, query_id: str | None = None) -> Trajectory: ...


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
    query: str, query_id: str | None, model: str, config: dict[str, Any]
) -> Trajectory:
    """A new trajectory record with its id and creation time, for any strategy."""
    return Trajectory(
        query=query,
        model=model,
        config=config,
        id=uuid.uuid4().hex,
        query_id=query_id,
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )


_STRATEGIES: dict[str, StrategyFactory] = {}


def register_strategy(name: str, factory: StrategyFactory) -> None:
    """Make ``factory`` available by ``name`` (``Retriever(strategy=name)``, ``--strategy``)."""
    _STRATEGIES[name] = factory


def strategy_names() -> list[str]:
    return sorted(_STRATEGIES)


def resolve_strategy(strategy: str | StrategyFactory) -> tuple[str, StrategyFactory]:
    """The (name, factory) for a registered name or a factory given directly."""
    if isinstance(strategy, str):
        if strategy not in _STRATEGIES:
            raise ArkError(
                f"unknown strategy {strategy!r}; choose one of {', '.join(strategy_names())}"
            )
        return strategy, _STRATEGIES[strategy]
    if not callable(strategy):
        raise ArkError(f"a strategy is a registered name or a factory, got {strategy!r}")
    name = getattr(strategy, "strategy_name", None) or getattr(strategy, "__name__", "custom")
    return str(name), strategy
