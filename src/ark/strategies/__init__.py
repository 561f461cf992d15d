"""Strategies: what runs one agent over the tools for one question.

The protocol and the one registry (:func:`register_strategy`, entry point group
``ark.strategies``) are here; each built-in strategy is a room of its own:
:mod:`~ark.strategies.ark` (the paper's loop), :mod:`~ark.strategies.guided` (the
loop with hints and plans, ``ark-guided``) and :mod:`~ark.strategies.graphsearch`
(GraphSearch's workflow). GraphSearch knows neither of the others (a contract in
``pyproject.toml``). A strategy writes no answer in words: one whose workflow ends with
an answer of its own records its :class:`AnswerBasis`, which ``ark.answer`` (above
retrieval) writes from.
"""

from ark.strategies._adapters import AdapterSettings, adapter_settings
from ark.strategies._basis import BASIS_KEY, AnswerBasis, Edge, recorded_basis
from ark.strategies._protocol import (
    ENTRY_POINT_GROUP,
    AgentConfig,
    AgentEvent,
    EventHandler,
    Strategy,
    StrategyContext,
    StrategyFactory,
    StrategyInfo,
    register_strategy,
    resolve_strategy,
    strategy_info,
    strategy_names,
)
from ark.strategies.ark import Agent, AgentOptions, agent_tool_specs, steps_left_note, system_prompt
from ark.strategies.graphsearch import GraphSearch, GraphSearchConfig
from ark.strategies.guided import ChainHints, GuidedAgent, GuidedOptions

__all__ = [
    "BASIS_KEY",
    "ENTRY_POINT_GROUP",
    "AdapterSettings",
    "Agent",
    "AgentConfig",
    "AgentEvent",
    "AgentOptions",
    "AnswerBasis",
    "ChainHints",
    "Edge",
    "EventHandler",
    "GraphSearch",
    "GraphSearchConfig",
    "GuidedAgent",
    "GuidedOptions",
    "Strategy",
    "StrategyContext",
    "StrategyFactory",
    "StrategyInfo",
    "adapter_settings",
    "agent_tool_specs",
    "recorded_basis",
    "register_strategy",
    "resolve_strategy",
    "steps_left_note",
    "strategy_info",
    "strategy_names",
    "system_prompt",
]
