"""JSON schemas of the tools: the one definition used for native tool calling,
grammar-constrained decoding, MCP and training data."""

from __future__ import annotations

import copy
from typing import Any

from ark.graph import Schema

_NAME_OR_LIST = {
    "anyOf": [
        {"type": "string"},
        {"type": "array", "items": {"type": "string"}},
    ]
}

TOOL_SPECS: dict[str, dict[str, Any]] = {
    "search_in_graph": {
        "description": (
            "Global BM25 search over the text of every node in the graph. Returns the k "
            "best-matching nodes (index, type, name, snippet, score). Use it to find the "
            "entities named in the question, or broadly for descriptive questions."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Keywords or a name to search for."},
                "k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 100,
                    "default": 5,
                    "description": "Number of results (default 5).",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
    "search_in_neighborhood": {
        "description": (
            "Explore the one-hop neighbors of a node (edges in either direction), optionally "
            "keeping only neighbors of the given node type(s) linked by the given edge "
            "type(s), ranked by BM25 of an optional query. Returns at most k neighbors with "
            "the relation(s) and direction linking them to the node."
        ),
        "parameters": {
            "type": "object",
            # Order matters to models (and to grammars) that write arguments in schema
            # order: choosing the relation before the neighbor type steers small models
            # away from giving the start node's own type as node_type.
            "properties": {
                "node_index": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Index of a node returned by an earlier search.",
                },
                "edge_type": {
                    **_NAME_OR_LIST,
                    "description": "Optional: keep only edges of this relation (or relations).",
                },
                "node_type": {
                    **_NAME_OR_LIST,
                    "description": (
                        "Optional: keep only neighbors of this type (or types): the type "
                        "of the nodes you want back, not the type of node_index."
                    ),
                },
                "query": {
                    "type": "string",
                    "description": "Optional keywords to rank the neighbors by.",
                },
                "k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 100,
                    "default": 20,
                    "description": "Maximum number of neighbors (default 20).",
                },
            },
            "required": ["node_index"],
            "additionalProperties": False,
        },
    },
}


def tool_specs(schema: Schema | None = None) -> list[dict[str, Any]]:
    """The tools as OpenAI-style function definitions.

    With a graph ``schema``, the type arguments enumerate the graph's node types and
    relations, so constrained decoders and careful models use valid names.
    """
    specs = []
    for name, spec in TOOL_SPECS.items():
        spec = copy.deepcopy(spec)
        if schema is not None and name == "search_in_neighborhood":
            props = spec["parameters"]["properties"]
            for key, values in (
                ("node_type", schema.node_type_names),
                ("edge_type", schema.relation_names),
            ):
                enum = {"type": "string", "enum": list(values)}
                props[key]["anyOf"] = [enum, {"type": "array", "items": enum}]
        specs.append({"type": "function", "function": {"name": name, **spec}})
    return specs


def tool_parameters() -> dict[str, tuple[frozenset[str], tuple[str, ...]]]:
    """Accepted and required argument names per tool, read off the schemas."""
    return {
        name: (
            frozenset(spec["parameters"]["properties"]),
            tuple(spec["parameters"]["required"]),
        )
        for name, spec in TOOL_SPECS.items()
    }
