"""Typed graphs as columnar arrays, their schema summary, and loaders."""

from ark.graph._graph import DIRECTION_NAMES, IN, OUT, Graph, Neighborhood, descriptor_text
from ark.graph._loaders import KNOWN_SCHEMAS, detect_format, load_graph, properties_to_text
from ark.graph._schema import NodeTypeSummary, RelationSummary, Schema
from ark.graph._stark import (
    CANDIDATE_TYPES,
    STARK_META_FILE,
    convert_stark,
    read_stark_meta,
    stark_candidate_types,
)

__all__ = [
    "CANDIDATE_TYPES",
    "DIRECTION_NAMES",
    "IN",
    "KNOWN_SCHEMAS",
    "OUT",
    "STARK_META_FILE",
    "Graph",
    "Neighborhood",
    "NodeTypeSummary",
    "RelationSummary",
    "Schema",
    "convert_stark",
    "descriptor_text",
    "detect_format",
    "load_graph",
    "properties_to_text",
    "read_stark_meta",
    "stark_candidate_types",
]
