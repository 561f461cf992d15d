"""The agent's system prompt, built from the graph's schema.

Written for any graph: it names the node and relation types of *this* graph, the
tools actually offered (ablations remove some), the answer protocol, when to stop,
and the three exploration strategies of the paper (SPEC §4).
"""

from __future__ import annotations

from ark.agent._specs import ToolConfig
from ark.graph import Schema

#: Prompt variants: ``full`` (the paper's strategies spelled out, for off-the-shelf
#: models) and ``short`` (schema, the answer rule and the step budget; for a student
#: trained on trajectories, whose training sequences it keeps short).
PROMPT_VARIANTS = ("full", "short")


def system_prompt(schema: Schema, tools: ToolConfig, max_steps: int, variant: str = "full") -> str:
    if variant == "short":
        return short_system_prompt(schema, max_steps)
    if variant != "full":
        raise ValueError(f"unknown prompt variant {variant!r}; choose one of {PROMPT_VARIANTS}")
    parts = [
        "You are a retrieval agent working on a knowledge graph. Given a question, find "
        "the nodes of the graph that answer it, and put them in an ordered answer list, "
        "best first. You do not write the answer in prose: the answer is the list of nodes.",
        "",
        "## The graph",
        schema.describe(),
        "",
        "## Tools",
        "- search_in_graph(query, k=5): BM25 keyword search over the text of every node. "
        "Returns node indices with type, name and a snippet. Use k up to 30 for broad "
        "descriptive questions.",
    ]
    if tools.neighbors:
        args = ["node_index"]
        if tools.neighbor_filters:
            args += ["edge_type", "node_type"]
        if tools.neighbor_query:
            args.append("query")
        line = (
            f"- search_in_neighborhood({', '.join(args)}): the nodes directly linked to a "
            "node, in either direction, at most 20. Each result shows the relation and its "
            "direction: out means node -relation-> neighbor, in means neighbor -relation-> node."
        )
        if tools.neighbor_filters:
            line += (
                " edge_type and node_type (a name or a list of names from the schema above) "
                "keep only matching edges and neighbors; node_type is the type of the "
                "neighbors you want back, not the type of the node you start from."
            )
            example = _example_relation(schema)
            if example is not None:
                name, source, target = example
                line += (
                    f" Example: to get the {target} nodes linked to a {source} by {name}, call "
                    f'search_in_neighborhood(node_index=<index of the {source}>, edge_type="'
                    f'{name}", node_type="{target}").'
                )
        if tools.neighbor_query:
            line += " query ranks the neighbors by keyword relevance."
        line += " Call it again on a returned node to go one more hop."
        parts.append(line)
    parts += [
        "- add_to_answer(node_indices): append nodes to your answer list, in order of "
        "relevance. Only nodes that a search has returned can be added.",
        "- finish(): end the search when your answer list is complete.",
        "",
        "## How to search",
        "Always start with search_in_graph. Then choose a strategy:",
        "1. The question describes what it wants without naming a specific entity: run one "
        "broad search_in_graph with about 30 results and add the roughly half of them that "
        "match the description best.",
    ]
    if tools.neighbors:
        parts += [
            "2. The question names entities (a person, a product, a disease, a paper...): "
            "find each named entity with search_in_graph, then explore its neighborhood with "
            "search_in_neighborhood, using the node and edge types that the question implies"
            + (" and a few keywords as query" if tools.neighbor_query else "")
            + ". Follow relations hop by hop when the question chains them (e.g. 'the "
            "director of the films starring X': X -> films -> directors).",
            "3. The question combines several constraints: find every named entity, explore "
            "each one's neighborhood, and keep the nodes that satisfy all constraints "
            "(nodes reached from several entities are strong candidates).",
            "You may return to search_in_graph at any time to re-anchor on a different entity.",
        ]
    else:
        parts += [
            "2. The question names entities or combines constraints: search for each entity "
            "and constraint with focused keywords and add the nodes that satisfy them.",
        ]
    parts += [
        "",
        "## Answer and stopping",
        "Add nodes that answer the question itself (not the entities it mentions, unless "
        "they are what is asked). Add the most certain ones first. When every answer you can "
        f"find is in the list, call finish. You have at most {max_steps} steps; each reply "
        "of yours is one step and may contain several tool calls.",
    ]
    return "\n".join(parts)


def short_system_prompt(schema: Schema, max_steps: int) -> str:
    """The student's prompt: what the graph holds and the protocol, no tutorial."""
    return "\n".join(
        [
            "You are a retrieval agent on a knowledge graph. Find the nodes that answer the "
            "question with the tools, add them with add_to_answer (best first; not the "
            "entities the question names unless they are asked for), then call finish.",
            schema.describe(),
            f"At most {max_steps} steps, one tool call per step.",
        ]
    )


def _example_relation(schema: Schema) -> tuple[str, str, str] | None:
    """The most common relation between two different types, to illustrate filters."""
    pairs = [r for r in schema.relations if r.source_type != r.target_type and r.count]
    if not pairs:
        return None
    best = max(pairs, key=lambda r: r.count)
    return best.name, best.target_type, best.source_type
