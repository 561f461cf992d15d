"""The agent's system prompt, built from the graph's schema.

Written for any graph: it names the node and relation types of *this* graph, the
tools actually offered (ablations remove some), the answer protocol, when to stop,
and the three exploration strategies of the paper (SPEC §4).
"""

from __future__ import annotations

import numpy as np

from ark.graph import LISTED_RELATIONS, Schema
from ark.index import Index
from ark.tools import GraphTools, SearchResult, ToolConfig

#: Prompt variants: ``full`` (the paper's strategies spelled out, for off-the-shelf
#: models) and ``short`` (schema, the answer rule and the step budget; for a student
#: trained on trajectories, whose training sequences it keeps short).
PROMPT_VARIANTS = ("full", "short")


def system_prompt(
    schema: Schema,
    tools: ToolConfig,
    max_steps: int,
    variant: str = "full",
    *,
    example: str | None = None,
) -> str:
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
        schema.render(),
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
        if tools.neighbor_filters and _listed(schema):
            line += (
                " edge_type and node_type (a name or a list of names from the schema above) "
                "keep only matching edges and neighbors; node_type is the type of the "
                "neighbors you want back, not the type of the node you start from."
            )
        elif tools.neighbor_filters:
            line += " " + open_filters_text(schema)
        if tools.neighbor_filters:
            relation = _example_relation(schema)
            if relation is not None:
                name, source, target = relation
                line += (
                    f" Example: to get the {source} nodes linked to a {target} by {name}, call "
                    f'search_in_neighborhood(node_index=<index of the {target}>, edge_type="'
                    f'{name}", node_type="{source}").'
                )
        if tools.neighbor_query and schema.lists_relations:
            line += " query ranks the neighbors by keyword relevance."
        elif tools.neighbor_query:
            line += (
                " query ranks the neighbors by keyword relevance, of their text and of the "
                "relation phrase linking them."
            )
        if tools.multi_neighborhood:
            line += (
                " node_index may be a list of indices: one call then explores all their "
                "neighborhoods and merges the results (each result names the nodes it was "
                "reached from)."
            )
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
    if example:
        parts += ["", "## A worked example on this graph", example]
    return "\n".join(parts)


def short_system_prompt(schema: Schema, max_steps: int) -> str:
    """The student's prompt: what the graph holds and the protocol, no tutorial."""
    lines = [
        "You are a retrieval agent on a knowledge graph. Find the nodes that answer the "
        "question with the tools, add them with add_to_answer (best first; not the "
        "entities the question names unless they are asked for), then call finish.",
        schema.render(),
    ]
    if not _listed(schema):
        lines.append(open_filters_text(schema))
    lines.append(f"At most {max_steps} steps, one tool call per step.")
    return "\n".join(lines)


def _listed(schema: Schema) -> bool:
    """Whether the schema is listed whole (and its names enumerated in the tool specs)."""
    return schema.lists_relations and schema.lists_node_types


def open_filters_text(schema: Schema) -> str:
    """How to filter on a graph whose schema is summarised, not listed: ``edge_type``
    takes any phrase when the relations are many (matched by ``GraphTools`` by label,
    then lemma, saying which relations it used), so a relation missing from the
    summary is still one call away; ``node_type`` takes a type's name."""
    if schema.lists_relations:
        edge = (
            "edge_type (a name or a list of names from the schema above) keeps only matching edges."
        )
    else:
        edge = (
            f"edge_type takes a relation name or any short phrase: the graph has "
            f"{len(schema.relation_names):,} relations (the schema above lists the most "
            "frequent), and a phrase is matched to them by its words and their lemmas (e.g. "
            '"wrote" finds "written by"); the result says which relations it used.'
        )
    names = (
        "a name or a list of names from the schema above"
        if schema.lists_node_types
        else f"one of the graph's {len(schema.node_types):,} node type names, or a list"
    )
    return (
        f"{edge} node_type keeps only neighbors of that type ({names}): the type of the "
        "neighbors you want back, not the type of the node you start from."
    )


def _example_relation(schema: Schema) -> tuple[str, str, str] | None:
    """The most common relation between two different types, to illustrate filters, as
    ``(name, source type, target type)``. The prompt's example walks it backwards, from
    a target node to its sources (``search_in_neighborhood`` follows edges both ways),
    as it always has: the prompt's text is unchanged since it was first measured."""
    pairs = [r for r in schema.relations if r.source_type != r.target_type and r.count]
    if not pairs:
        return None
    best = max(pairs, key=lambda r: r.count)
    return best.name, best.source_type, best.target_type


def _chain(schema: Schema) -> tuple[str, str, str, str, str] | None:
    """A two-hop chain on the graph's most common relations: (start type, r1, middle
    type, r2, end type), three different types, r1 the most common relation that has
    one, r2 the most common relation leaving the middle type to a third type."""
    rels = sorted(
        (r for r in schema.relations if r.source_type != r.target_type and r.count),
        key=lambda r: -r.count,
    )
    if not schema.lists_relations:  # thousands: the pairs of the most frequent only
        rels = rels[:LISTED_RELATIONS]
    for r1 in rels:
        for start, middle in ((r1.target_type, r1.source_type), (r1.source_type, r1.target_type)):
            for r2 in rels:
                if r2.name == r1.name:
                    continue
                ends = {r2.source_type: r2.target_type, r2.target_type: r2.source_type}
                end = ends.get(middle)
                if end is not None and end not in (start, middle):
                    return start, r1.name, middle, r2.name, end
    return None


def worked_example(index: Index, tools: ToolConfig) -> str | None:
    """A worked two-hop example on *this* graph's real nodes, so a small model sees the
    whole protocol once: find the named entity, hop, hop again, add the last hop's
    nodes (not the entity or the bridge), finish. ``None`` when the graph has no chain
    of three node types or the neighborhood tool is ablated."""
    if not tools.neighbors or not tools.neighbor_filters:
        return None
    chain = _chain(index.schema)
    if chain is None:
        return None
    start_type, r1, middle_type, r2, end_type = chain
    g = index.graph
    graph_tools = GraphTools(index)
    start_id = g.type_id(start_type)
    node_types = np.asarray(g.node_type)
    for start in np.flatnonzero(node_types == start_id)[:5000].tolist():
        if len(g.name(start).split()) < 2:
            continue
        first = graph_tools.search_in_neighborhood(start, edge_type=r1, node_type=middle_type)
        if not isinstance(first, SearchResult) or not 2 <= len(first.hits) <= 4:
            continue
        middles = [h.index for h in first.hits]
        ends: dict[int, str] = {}
        for m in middles:
            second = graph_tools.search_in_neighborhood(m, edge_type=r2, node_type=end_type)
            if isinstance(second, SearchResult):
                for h in second.hits:
                    ends.setdefault(h.index, h.name)
        if not 2 <= len(ends) <= 8:
            continue
        name = g.name(start)
        mids = ", ".join(f"[{h.index}] {h.name}" for h in first.hits)
        end_list = ", ".join(f"[{i}] {n}" for i, n in ends.items())
        if tools.multi_neighborhood:
            hop2 = (
                f'3. search_in_neighborhood(node_index={middles}, edge_type="{r2}", '
                f'node_type="{end_type}") -> {end_type} nodes {end_list}'
            )
        else:
            hop2 = "\n".join(
                f'{3 + i}. search_in_neighborhood(node_index={m}, edge_type="{r2}", '
                f'node_type="{end_type}")'
                + (f" -> {end_type} nodes {end_list}" if i == len(middles) - 1 else "")
                for i, m in enumerate(middles)
            )
        n = 3 + (1 if tools.multi_neighborhood else len(middles))
        return "\n".join(
            [
                f'Question: "Which {end_type} nodes are linked by {r2} to the {middle_type} '
                f'nodes that are linked by {r1} to {name}?"',
                f'1. search_in_graph(query="{name}") -> [{start}] {name} ({start_type})',
                f'2. search_in_neighborhood(node_index={start}, edge_type="{r1}", '
                f'node_type="{middle_type}") -> {middle_type} nodes {mids}',
                hop2,
                f"{n}. add_to_answer(node_indices={list(ends)}) - the {end_type} nodes the "
                f"question asks for; neither {name} nor the {middle_type} nodes, which "
                "were steps on the way",
                f"{n + 1}. finish()",
            ]
        )
    return None
