"""Observations that make a small model's next move obvious (``AgentOptions.hints``).

A 1.5B model reaches the right intermediate nodes and then stops: it adds the entity
the question names, or the bridge, as the answer. These lines are appended to the
observation, never replacing it and never refusing anything: what type the returned
nodes are and which relations lead on from them (with the call that hops over all of
them when the tool takes a set), and, when the model adds a node it started from or
has already explored past, the question once more.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ark.graph import Schema

#: Most node indices written into a suggested call.
MAX_SUGGESTED = 20


def onward_relations(
    schema: Schema, node_type: str, limit: int = 6, min_share: float = 0.01
) -> list[tuple[str, str]]:
    """(relation, type at the other end) pairs leaving nodes of ``node_type``, in either
    direction, most common first; type pairs rarer than ``min_share`` of the most common
    relation (stray typings) are left out, as the schema summary leaves them out."""
    counts: Counter[tuple[str, str]] = Counter()
    floor = min_share * max((r.count for r in schema.relations), default=0)
    for r in schema.relations:
        if r.count < floor:
            continue
        if r.source_type == node_type:
            counts[(r.name, r.target_type)] += r.count
        if r.target_type == node_type:
            counts[(r.name, r.source_type)] += r.count
    return [pair for pair, _ in counts.most_common(limit)]


def after_neighborhood(
    schema: Schema,
    hits: Sequence[tuple[int, str]],
    came_from: Sequence[int],
    *,
    multi: bool,
) -> str:
    """The hint after a neighborhood with ``hits`` ((index, type) pairs) explored from
    ``came_from``: the dominant type, the relations leading on, the hop over the set."""
    fresh = [(i, t) for i, t in hits if i not in came_from]
    if not fresh:
        return ""
    node_type, n = Counter(t for _, t in fresh).most_common(1)[0]
    onward = onward_relations(schema, node_type)
    plural = "s" if n != 1 else ""
    text = f"Hint: {n} {node_type} node{plural}."
    if onward:
        same = [i for i, t in fresh if t == node_type][:MAX_SUGGESTED]
        target = f"node_index={same}" if multi and len(same) > 1 else "node_index=<one of them>"
        text += (
            f" If the question asks for what these {node_type} nodes link to, go one more "
            f"hop: search_in_neighborhood({target}, edge_type=R) with R one of "
            + ", ".join(f"{rel} (to {other})" for rel, other in onward)
            + "."
        )
    return text + f" If these {node_type} nodes are what the question asks for, add them."


def after_add(
    question: str | None,
    added: Sequence[tuple[int, str, str]],
    explored: Sequence[int],
) -> str:
    """A reminder when ``added`` ((index, name, type)) includes a node the search started
    from or already explored past (``explored``: the centers of neighborhood calls)."""
    passed = [(i, name, t) for i, name, t in added if i in explored]
    if not passed:
        return ""
    names = ", ".join(f"[{i}] {name} ({t})" for i, name, t in passed[:3])
    text = (
        f"Note: you explored the neighbors of {names} to get further, so it is a step on the "
        "way rather than the answer, unless the question asks for it."
    )
    if question:
        text += f' The question: "{question}"'
    return text


def after_repeat(unexplored: Sequence[tuple[int, str, str]], limit: int = 5) -> str:
    """After a repeated call: the latest results' nodes not explored yet, as next moves."""
    if not unexplored:
        return ""
    shown = ", ".join(f"[{i}] {name} ({t})" for i, name, t in unexplored[:limit])
    return f" Hint: not explored yet from your latest results: {shown}."
