"""The ARK agent: one tool-calling loop, parallel agents, and fusion of their answers."""

from ark.agent._agent import Agent, AgentConfig, AgentEvent
from ark.agent._fusion import FUSIONS, fuse_ordering, fuse_random, fuse_vote
from ark.agent._prompt import system_prompt
from ark.agent._retriever import RankedNode, RetrievalResult, Retriever
from ark.agent._specs import ANSWER_TOOL_SPECS, ToolConfig, agent_tool_specs

__all__ = [
    "ANSWER_TOOL_SPECS",
    "FUSIONS",
    "Agent",
    "AgentConfig",
    "AgentEvent",
    "RankedNode",
    "RetrievalResult",
    "Retriever",
    "ToolConfig",
    "agent_tool_specs",
    "fuse_ordering",
    "fuse_random",
    "fuse_vote",
    "system_prompt",
]
