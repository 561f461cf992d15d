"""Agents over the tools: the tool session, the strategy protocol, ARK's loop as one
strategy, parallel agents, and fusion of their answers."""

from ark.agent._agent import Agent, AgentOptions
from ark.agent._evidence import (
    Addition,
    EvidencePath,
    Hop,
    NodeEvidence,
    evidence_names,
    explain,
    paths_to,
    render_evidence,
)
from ark.agent._fusion import FUSIONS, fuse_ordering, fuse_random, fuse_vote
from ark.agent._prompt import system_prompt
from ark.agent._retriever import RankedNode, RetrievalResult, Retriever
from ark.agent._session import CallOutcome, ToolSession, normalise_arguments
from ark.agent._specs import ANSWER_TOOL_SPECS, ToolConfig, agent_tool_specs
from ark.agent._strategy import (
    AgentConfig,
    AgentEvent,
    EventHandler,
    Strategy,
    StrategyContext,
    StrategyFactory,
    register_strategy,
    resolve_strategy,
    strategy_names,
)
from ark.agent.graphsearch import GraphSearch, GraphSearchConfig

#: How many agents a strategy runs when none is asked for: ARK fuses three (the
#: paper's n), GraphSearch's workflow is one pipeline per question.
DEFAULT_AGENTS = {"ark": 3, "ark-guided": 3, "graphsearch": 1}

__all__ = [
    "ANSWER_TOOL_SPECS",
    "DEFAULT_AGENTS",
    "FUSIONS",
    "Addition",
    "Agent",
    "AgentConfig",
    "AgentEvent",
    "AgentOptions",
    "CallOutcome",
    "EventHandler",
    "EvidencePath",
    "GraphSearch",
    "GraphSearchConfig",
    "Hop",
    "NodeEvidence",
    "RankedNode",
    "RetrievalResult",
    "Retriever",
    "Strategy",
    "StrategyContext",
    "StrategyFactory",
    "ToolConfig",
    "ToolSession",
    "agent_tool_specs",
    "evidence_names",
    "explain",
    "fuse_ordering",
    "fuse_random",
    "fuse_vote",
    "normalise_arguments",
    "paths_to",
    "register_strategy",
    "render_evidence",
    "resolve_strategy",
    "strategy_names",
    "system_prompt",
]
