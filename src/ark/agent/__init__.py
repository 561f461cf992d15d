"""Agents over the tools: the tool session and its observers (the hints), the strategy
protocol, ARK's loop as one strategy, parallel agents, and fusion of their answers."""

from ark.agent._adapters import AdapterSettings, adapter_settings
from ark.agent._agent import Agent, AgentOptions, steps_left_note
from ark.agent._agent_tools import agent_tool_specs
from ark.agent._evidence import (
    Addition,
    EvidencePath,
    Hop,
    NodeEvidence,
    evidence_names,
    explain,
    paths_to,
    render_evidence,
    render_path,
)
from ark.agent._fusion import FUSIONS, fuse_ordering, fuse_random, fuse_vote
from ark.agent._passages import (
    MAX_LINKED,
    EvidencePassage,
    evidence_passages,
    linked_passages,
    question_relevance,
)
from ark.agent._prompt import system_prompt
from ark.agent._retriever import (
    RankedNode,
    RetrievalResult,
    Retriever,
    answer_retrieval,
    fuse_trajectories,
)
from ark.agent._session import CallOutcome, SessionObserver, ToolSession, normalise_arguments
from ark.agent._strategy import (
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
from ark.agent.graphsearch import GraphSearch, GraphSearchConfig
from ark.agent.hints import ChainHints
from ark.tools import ANSWER_TOOL_SPECS, ToolConfig

__all__ = [
    "ANSWER_TOOL_SPECS",
    "ENTRY_POINT_GROUP",
    "FUSIONS",
    "MAX_LINKED",
    "AdapterSettings",
    "Addition",
    "Agent",
    "AgentConfig",
    "AgentEvent",
    "AgentOptions",
    "CallOutcome",
    "ChainHints",
    "EventHandler",
    "EvidencePassage",
    "EvidencePath",
    "GraphSearch",
    "GraphSearchConfig",
    "Hop",
    "NodeEvidence",
    "RankedNode",
    "RetrievalResult",
    "Retriever",
    "SessionObserver",
    "Strategy",
    "StrategyContext",
    "StrategyFactory",
    "StrategyInfo",
    "ToolConfig",
    "ToolSession",
    "adapter_settings",
    "agent_tool_specs",
    "answer_retrieval",
    "evidence_names",
    "evidence_passages",
    "explain",
    "fuse_ordering",
    "fuse_random",
    "fuse_trajectories",
    "fuse_vote",
    "linked_passages",
    "normalise_arguments",
    "paths_to",
    "question_relevance",
    "register_strategy",
    "render_evidence",
    "render_path",
    "resolve_strategy",
    "steps_left_note",
    "strategy_info",
    "strategy_names",
    "system_prompt",
]
