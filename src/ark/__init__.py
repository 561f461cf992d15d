"""ARK, the Adaptive Retriever of Knowledge.

An LLM agent retrieves evidence from a knowledge graph with two tools: global BM25
search over node text and one-hop neighborhood exploration with type filters.
"""

from ark.errors import ArkError, GraphFormatError, IndexFormatError
from ark.graph import Graph, Schema, load_graph
from ark.index import Index, build_index, open_index
from ark.tools import GraphTools, NodeHit, Relation, SearchResult, ToolError, tool_specs

__version__ = "0.1.0"

__all__ = [
    "ArkError",
    "Graph",
    "GraphFormatError",
    "GraphTools",
    "Index",
    "IndexFormatError",
    "NodeHit",
    "Relation",
    "Schema",
    "SearchResult",
    "ToolError",
    "__version__",
    "build_index",
    "load_graph",
    "open_index",
    "tool_specs",
]
