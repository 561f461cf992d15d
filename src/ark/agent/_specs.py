"""The tools an agent is offered: the two retrieval tools (defined once in
``ark.tools``) plus the answer tools, with the paper's ablations applied."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ark.graph import Schema
from ark.tools import tool_specs

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
    """Which tools and arguments the agent gets (the paper's ablations, table 4).

    ``neighbors=False``: global search only; ``neighbor_query=False``: neighborhoods
    without a ranking subquery; ``neighbor_filters=False``: without type filters.
    """

    neighbors: bool = True
    neighbor_query: bool = True
    neighbor_filters: bool = True

    def to_dict(self) -> dict[str, bool]:
        return asdict(self)


def agent_tool_specs(schema: Schema | None, tools: ToolConfig) -> list[dict[str, Any]]:
    """OpenAI-style function definitions for the agent, ablations applied."""
    specs = []
    for spec in tool_specs(schema):
        fn = spec["function"]
        if fn["name"] == "search_in_neighborhood":
            if not tools.neighbors:
                continue
            props = fn["parameters"]["properties"]
            if not tools.neighbor_query:
                props.pop("query")
            if not tools.neighbor_filters:
                props.pop("node_type")
                props.pop("edge_type")
        specs.append(spec)
    specs += [
        {"type": "function", "function": {"name": name, **spec}}
        for name, spec in ANSWER_TOOL_SPECS.items()
    ]
    return specs


def allowed_arguments(specs: list[dict[str, Any]]) -> dict[str, set[str]]:
    return {s["function"]["name"]: set(s["function"]["parameters"]["properties"]) for s in specs}
