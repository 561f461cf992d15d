"""ARK's two tools: global search and neighborhood exploration."""

from ark.tools._results import NodeHit, Relation, SearchResult, ToolError, ToolResult
from ark.tools._specs import TOOL_SPECS, tool_specs
from ark.tools._tools import GLOBAL_K, MAX_K, NEIGHBOR_K, GraphTools

__all__ = [
    "GLOBAL_K",
    "MAX_K",
    "NEIGHBOR_K",
    "TOOL_SPECS",
    "GraphTools",
    "NodeHit",
    "Relation",
    "SearchResult",
    "ToolError",
    "ToolResult",
    "tool_specs",
]
