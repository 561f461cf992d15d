"""JSON schemas of the tools: the one definition used for native tool calling,
grammar-constrained decoding, MCP and training data.

The two retrieval tools and the two answer tools of an agent (``add_to_answer``,
``finish``) live here together, with the paper's ablations (:class:`ToolConfig`)
applied in one place.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ark.graph import Schema

#: Most centers one hop over a set explores: the spec bounds the list (so decoding
#: cannot loop) and the tool refuses more.
MAX_CENTERS = 50

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


#: The descriptions of the type arguments when a graph has too many names to enumerate.
OPEN_DESCRIPTIONS = {
    "edge_type": (
        "Optional: keep only edges of this relation (or relations): a relation name, or "
        "any phrase, matched to the graph's relations by its words and their lemmas "
        "(the result says which relations it used)."
    ),
    "node_type": (
        "Optional: keep only neighbors of this type (or types), a node type name: the "
        "type of the nodes you want back, not the type of node_index."
    ),
}

#: Most node indices one add_to_answer call takes. The bound is in the schema so
#: grammar-constrained decoding cannot loop on a list until it runs out of tokens (a
#: 1.5B model did, repeating one index for 1,024 tokens); longer answers take more calls.
MAX_ADD = 50

ANSWER_TOOL_SPECS: dict[str, dict[str, Any]] = {
    "add_to_answer": {
        "description": (
            "Append nodes to the ordered answer list (most relevant first). Only node "
            "indices returned by an earlier search can be added."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "node_indices": {
                    "type": "array",
                    "items": {"type": "integer", "minimum": 0},
                    "minItems": 1,
                    "maxItems": MAX_ADD,
                    "description": (
                        f"Node indices to add, in order of relevance (at most {MAX_ADD} per call)."
                    ),
                }
            },
            "required": ["node_indices"],
            "additionalProperties": False,
        },
    },
    "finish": {
        "description": "End the search: the answer list is complete.",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
    },
}


@dataclass(frozen=True)
class ToolConfig:
    """Which tools and arguments are offered (the paper's ablations, table 4).

    ``neighbors=False``: global search only; ``neighbor_query=False``: neighborhoods
    without a ranking subquery; ``neighbor_filters=False``: without type filters.
    """

    neighbors: bool = True
    neighbor_query: bool = True
    neighbor_filters: bool = True
    #: ``search_in_neighborhood`` also takes ``node_indices`` (a hop over a set).
    multi_neighborhood: bool = False
    #: A neighborhood's neighbors with the same relations and type on one line
    #: (``via directed_by(in), movie: [1] A, [2] B``): fewer tokens to read.
    grouped_observations: bool = False
    #: The sentence encoder that matches an ``edge_type`` phrase no relation label or
    #: lemma matches, on a graph of free-text relations (``ark.tools._phrases``):
    #: ``"auto"`` (the ``[dense]`` extra's all-MiniLM-L6-v2 when installed), ``"off"``,
    #: that model's name, or a local model directory. Recorded as what it resolved to.
    phrase_encoder: str = "auto"

    def to_dict(self) -> dict[str, Any]:
        from ark.tools._phrases import recorded_phrase_encoder

        out: dict[str, Any] = asdict(self)
        for option in ("multi_neighborhood", "grouped_observations"):
            if not out[option]:  # runs recorded before the option compare equal
                del out[option]
        # The encoder an explicit choice resolves to; nothing for "auto", which depends
        # on the graph (ark eval records it resolved, beside linking_encoder), nor when
        # a choice finds none (as runs recorded before the embedding stage existed).
        encoder = recorded_phrase_encoder(self.phrase_encoder)
        if encoder is None:
            del out["phrase_encoder"]
        else:
            out["phrase_encoder"] = encoder
        return out


def tool_specs(
    schema: Schema | None = None,
    config: ToolConfig | None = None,
    *,
    answer_tools: bool = False,
) -> list[dict[str, Any]]:
    """The tools as OpenAI-style function definitions.

    With a graph ``schema``, the type arguments enumerate the graph's node types and
    relations, so constrained decoders and careful models use valid names — when there
    are few of them (``Schema.lists_relations``, ``Schema.lists_node_types``: at most
    ``ark.graph._schema.LISTING_LIMIT``). Past that an enum would be the bulk of the
    prompt (``docs/decisions/answer-and-tools.md``), so the argument takes any
    string and its description says how it is matched (:data:`OPEN_DESCRIPTIONS`). ``config``
    applies the ablations; ``answer_tools`` appends ``add_to_answer`` and ``finish``
    (what an agent gets; an MCP client gets the retrieval tools only).
    """
    config = config or ToolConfig()
    specs = []
    for name, spec in TOOL_SPECS.items():
        spec = copy.deepcopy(spec)
        if name == "search_in_neighborhood":
            if not config.neighbors:
                continue
            props = spec["parameters"]["properties"]
            if not config.neighbor_query:
                props.pop("query")
            if not config.neighbor_filters:
                props.pop("node_type")
                props.pop("edge_type")
        if name == "search_in_neighborhood" and config.multi_neighborhood:
            node = spec["parameters"]["properties"]["node_index"]
            single = {"type": "integer", "minimum": 0}
            node.pop("type")
            node.pop("minimum")
            node["anyOf"] = [
                single,
                {"type": "array", "items": single, "minItems": 1, "maxItems": MAX_CENTERS},
            ]
            node["description"] = (
                "Index of a node returned by an earlier search, or a list of such indices "
                f"(at most {MAX_CENTERS}) to explore all their neighborhoods in one call."
            )
        if schema is not None and name == "search_in_neighborhood":
            props = spec["parameters"]["properties"]
            for key, values, listed in (
                ("node_type", schema.node_type_names, schema.lists_node_types),
                ("edge_type", schema.relation_names, schema.lists_relations),
            ):
                if key not in props:
                    continue
                if not listed:  # thousands of names: any string, described instead
                    props[key]["description"] = OPEN_DESCRIPTIONS[key]
                    continue
                enum = {"type": "string", "enum": list(values)}
                props[key]["anyOf"] = [enum, {"type": "array", "items": enum}]
        specs.append({"type": "function", "function": {"name": name, **spec}})
    if answer_tools:
        specs += [
            {"type": "function", "function": {"name": name, **copy.deepcopy(spec)}}
            for name, spec in ANSWER_TOOL_SPECS.items()
        ]
    return specs


def allowed_arguments(specs: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Argument names each offered tool accepts, read off ``specs``."""
    return {s["function"]["name"]: set(s["function"]["parameters"]["properties"]) for s in specs}


def argument_defaults(name: str) -> dict[str, Any]:
    """The default values a tool's schema declares (``k``), for normalising calls."""
    spec = TOOL_SPECS.get(name) or ANSWER_TOOL_SPECS.get(name) or {}
    props = spec.get("parameters", {}).get("properties", {})
    return {k: v["default"] for k, v in props.items() if "default" in v}


def tool_parameters() -> dict[str, tuple[frozenset[str], tuple[str, ...]]]:
    """Accepted and required argument names per tool, read off the schemas."""
    return {
        name: (
            frozenset(spec["parameters"]["properties"]),
            tuple(spec["parameters"]["required"]),
        )
        for name, spec in TOOL_SPECS.items()
    }


def written_arguments(arguments: Mapping[str, Any] | None) -> str:
    """A call's arguments as ``name=value`` pairs, each value in JSON
    (``node_index=[3, 7], edge_type="mentions"``): how the CLI and chat show a call to a
    person, and how the documents hints write a call for the model to copy. None (the
    model's arguments did not parse) is shown as ``<invalid arguments>``."""
    if arguments is None:
        return "<invalid arguments>"
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
