"""ARK, the Adaptive Retriever of Knowledge.

An LLM agent retrieves evidence from a knowledge graph with two tools: global BM25
search over node text and one-hop neighborhood exploration with type filters.
"""

import ark.datasets  # noqa: F401  (registers the datasets' graph schemas, e.g. MetaQA's)
from ark.answer import Answer, AnsweredRetrieval, aanswer_question, answer_question, write_answer
from ark.errors import ArkError, GraphFormatError, IndexFormatError
from ark.graph import Graph, Schema, load_graph
from ark.index import Index, build_index, open_index
from ark.llm import make_chat_model
from ark.retrieval import (
    EvidencePassage,
    EvidencePath,
    Hop,
    NodeEvidence,
    RetrievalResult,
    Retriever,
    explain,
)
from ark.session import ToolSession
from ark.strategies import Strategy, StrategyContext
from ark.tools import (
    ErrorCode,
    GraphTools,
    NodeHit,
    Relation,
    SearchResult,
    ToolConfig,
    ToolError,
    tool_specs,
)

__version__ = "0.1.0"

__all__ = [
    "Answer",
    "AnsweredRetrieval",
    "ArkError",
    "ErrorCode",
    "EvidencePassage",
    "EvidencePath",
    "Graph",
    "GraphFormatError",
    "GraphTools",
    "Hop",
    "Index",
    "IndexFormatError",
    "NodeEvidence",
    "NodeHit",
    "Relation",
    "RetrievalResult",
    "Retriever",
    "Schema",
    "SearchResult",
    "Strategy",
    "StrategyContext",
    "ToolConfig",
    "ToolError",
    "ToolSession",
    "__version__",
    "aanswer_question",
    "answer_question",
    "build_index",
    "explain",
    "load_graph",
    "make_chat_model",
    "open_index",
    "tool_specs",
    "write_answer",
]
