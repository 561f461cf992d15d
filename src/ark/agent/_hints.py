"""Observations that make a small model's next move obvious (``AgentOptions.hints``).

A 1.5B model reaches the right intermediate nodes and then stops: it adds the entity
the question names, or the bridge, as the answer. These lines are appended to the
observation, never replacing it and never refusing anything: what type the returned
nodes are and which relations lead on from them (with the call that hops over all of
them when the tool takes a set), and, when the model adds a node it started from or
has already explored past, the question once more.

When the question is known, the hint after a neighborhood is the question's own
chain read against the schema (:func:`chain_hint`): the relations whose names the
question uses (``directed``/``director`` for ``directed_by``) and which the search has
not followed yet give the next call, ready to copy; when every one is followed, the
ready-made call adds the nodes. A small model copies a ready-made call far more
reliably than it composes one.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

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


def _dominant(
    hits: Sequence[tuple[int, str]], came_from: Sequence[int]
) -> tuple[str, str, list[int]] | None:
    """For the hits not among ``came_from``: the hint's opening line, their most common
    type, and the nodes of that type to suggest (None when nothing is new)."""
    fresh = [(i, t) for i, t in hits if i not in came_from]
    if not fresh:
        return None
    node_type, n = Counter(t for _, t in fresh).most_common(1)[0]
    same = [i for i, t in fresh if t == node_type][:MAX_SUGGESTED]
    return f"Hint: {n} {node_type} node{'s' if n != 1 else ''}.", node_type, same


def after_neighborhood(
    schema: Schema,
    hits: Sequence[tuple[int, str]],
    came_from: Sequence[int],
    *,
    multi: bool,
) -> str:
    """The hint after a neighborhood with ``hits`` ((index, type) pairs) explored from
    ``came_from``: the dominant type, the relations leading on, the hop over the set."""
    dominant = _dominant(hits, came_from)
    if dominant is None:
        return ""
    text, node_type, same = dominant
    onward = onward_relations(schema, node_type)
    if onward:
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
    remaining: Sequence[str] = (),
) -> str:
    """A reminder when ``added`` ((index, name, type)) includes a node the search started
    from or already explored past (``explored``: the centers of neighborhood calls), or
    when the question names relations not followed yet (``remaining``)."""
    passed = [(i, name, t) for i, name, t in added if i in explored]
    if not passed:
        if not remaining:
            return ""
        return (
            f"Note: the question also names {', '.join(remaining)}, not followed yet; "
            "if these nodes are a step on the way, go on from them before finishing."
        )
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


#: Relation-name tokens that carry no meaning of their own (``has_genre``, ``in_language``).
_FILLER = frozenset(
    [
        "a",
        "an",
        "the",
        "has",
        "have",
        "had",
        "is",
        "of",
        "in",
        "on",
        "by",
        "to",
        "for",
        "from",
        "with",
        "at",
        "as",
        "and",
    ]
)
#: Suffixes cut from a word before comparing, longest first.
_SUFFIXES = ("ings", "ing", "ers", "ors", "er", "or", "ed", "es", "s", "e")


def stem(word: str) -> str:
    """A crude stem (``actors``/``acted`` -> ``act``, ``genres`` -> ``genr``), enough to
    match a question's words to a relation name's."""
    w = word.casefold()
    for suffix in _SUFFIXES:
        if len(w) - len(suffix) >= 3 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w


def _stems_match(a: str, b: str) -> bool:
    short, long = sorted((a, b), key=len)
    return short == long or (len(short) >= 4 and long.startswith(short))


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", text).casefold())


def mentioned_relations(schema: Schema, question: str) -> list[str]:
    """The schema's relations whose name shares a word with the question (``directed``
    for ``directed_by``, ``genres`` for ``has_genre``), in schema order."""
    asked = [stem(w) for w in _words(question) if w not in _FILLER]
    out = []
    for name in schema.relation_names:
        own = [stem(w) for w in _words(name) if w not in _FILLER]
        if any(_stems_match(a, o) for a in asked for o in own):
            out.append(name)
    return out


def _main_pairs(schema: Schema, relation: str, min_share: float = 0.01) -> list[tuple[str, str]]:
    """(source type, target type) pairs of ``relation``, most common first, without the
    stray typings (pairs under ``min_share`` of the relation's edges: a name shared by
    two node types puts a few edges on the wrong pair)."""
    rows = [r for r in schema.relations if r.name == relation and r.count]
    total = sum(r.count for r in rows)
    rows = sorted((r for r in rows if r.count >= min_share * total), key=lambda r: -r.count)
    return [(r.source_type, r.target_type) for r in rows]


def _ends(schema: Schema, relation: str, node_type: str) -> list[str]:
    """Types at the other end of ``relation`` from nodes of ``node_type``, most common
    first."""
    out: list[str] = []
    for source, target in _main_pairs(schema, relation):
        for a, b in ((source, target), (target, source)):
            if a == node_type and b not in out:
                out.append(b)
    return out


def chain_hint(
    schema: Schema,
    named: Sequence[str],
    hits: Sequence[tuple[int, str]],
    came_from: Sequence[int],
    followed: Iterable[str],
    *,
    multi: bool,
) -> str:
    """The hint after a neighborhood when the question is known (``named``: its
    :func:`mentioned_relations`): the next named relation the search has not followed,
    as a ready-made call from the returned nodes (through one intermediate hop when
    they do not touch it), or, when every named relation is followed, the ready-made
    ``add_to_answer``."""
    dominant = _dominant(hits, came_from)
    if dominant is None:
        return ""
    text, node_type, same = dominant
    done = set(followed)
    remaining = [r for r in named if r not in done]
    target = f"node_index={same}" if multi and len(same) > 1 else f"node_index={same[0]}"
    if not remaining:
        if not named:
            return text + (
                f" If they answer the question, add them: add_to_answer(node_indices={same})."
            )
        followed_named = ", ".join(r for r in named if r in done)
        return text + (
            f" Every relation the question names ({followed_named}) is followed, so these "
            f"answer it. Add them now: add_to_answer(node_indices={same}), then finish."
        )
    for relation in remaining:
        ends = _ends(schema, relation, node_type)
        if ends:
            return text + (
                f" The question also names {relation}, not followed yet: "
                f'search_in_neighborhood({target}, edge_type="{relation}", '
                f'node_type="{ends[0]}").'
            )
    # No remaining relation touches these nodes: one hop first, preferring a relation
    # the question names, to a type that does.
    relation = remaining[0]
    touching = {t for pair in _main_pairs(schema, relation) for t in pair}
    options = [
        (rel, other)
        for rel, other in onward_relations(schema, node_type, limit=20)
        if other in touching
    ]
    if not options:
        return text
    options.sort(key=lambda p: p[0] not in named)  # stable: named relations first
    rel, other = options[0]
    return text + (
        f" The question also names {relation}, which {node_type} nodes do not have; "
        f"{other} nodes do. Hop to them first: "
        f'search_in_neighborhood({target}, edge_type="{rel}", node_type="{other}").'
    )
