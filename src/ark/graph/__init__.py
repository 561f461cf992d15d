"""Typed graphs as columnar arrays, their schema summary, and loaders."""

from ark.graph._graph import DIRECTION_NAMES, IN, OUT, Graph, Neighborhood, descriptor_text
from ark.graph._loaders import KNOWN_SCHEMAS, detect_format, load_graph, properties_to_text
from ark.graph._schema import NodeTypeSummary, RelationSummary, Schema

__all__ = [
    "DIRECTION_NAMES",
    "IN",
    "KNOWN_SCHEMAS",
    "OUT",
    "Graph",
    "Neighborhood",
    "NodeTypeSummary",
    "RelationSummary",
    "Schema",
    "descriptor_text",
    "detect_format",
    "load_graph",
    "properties_to_text",
]
