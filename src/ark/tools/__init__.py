"""ARK's two tools: global search and neighborhood exploration."""

from ark.tools._errors import ERROR_CODES, ErrorCode
from ark.tools._phrases import (
    PhraseMatch,
    RelationPhrases,
    phrase_encoder_name,
    recorded_phrase_encoder,
)
from ark.tools._results import (
    NAME_CHARS,
    TEXT_SHOWN,
    MultiNeighborhoodResult,
    NodeHit,
    Relation,
    SearchResult,
    ToolError,
    ToolResult,
)
from ark.tools._tool_specs import (
    ANSWER_TOOL_SPECS,
    MAX_ADD,
    MAX_CENTERS,
    TOOL_SPECS,
    ToolConfig,
    allowed_arguments,
    argument_defaults,
    tool_specs,
    written_arguments,
)
from ark.tools._tools import GLOBAL_K, MAX_K, MAX_QUERY_CHARS, NEIGHBOR_K, GraphTools

__all__ = [
    "ANSWER_TOOL_SPECS",
    "ERROR_CODES",
    "GLOBAL_K",
    "MAX_ADD",
    "MAX_CENTERS",
    "MAX_K",
    "MAX_QUERY_CHARS",
    "NAME_CHARS",
    "NEIGHBOR_K",
    "TEXT_SHOWN",
    "TOOL_SPECS",
    "ErrorCode",
    "GraphTools",
    "MultiNeighborhoodResult",
    "NodeHit",
    "PhraseMatch",
    "Relation",
    "RelationPhrases",
    "SearchResult",
    "ToolConfig",
    "ToolError",
    "ToolResult",
    "allowed_arguments",
    "argument_defaults",
    "phrase_encoder_name",
    "recorded_phrase_encoder",
    "tool_specs",
    "written_arguments",
]
