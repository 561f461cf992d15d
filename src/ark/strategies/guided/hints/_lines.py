"""The lines of the hints: observations that make a small model's next move obvious.

Text only: :class:`ark.strategies.guided.hints.ChainHints` holds what the search has done and
calls these to write its lines.

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

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import NamedTuple

from ark.graph import Schema
from ark.linking import STOPWORDS, Chain, EntityMention, Linking, tokens

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


def _listed(onward: Sequence[tuple[str, str]]) -> str:
    """Relations leading on, as hints name them: ``has_genre (to genre), ...``."""
    return ", ".join(f"{rel} (to {other})" for rel, other in onward)


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
    nameless: Collection[int] = (),
) -> str:
    """The hint after a neighborhood with ``hits`` ((index, type) pairs) explored from
    ``came_from``: the dominant type, the relations leading on, the hop over the set;
    when they are all ``nameless`` (mediator nodes), the hop on from them instead of
    the add."""
    dominant = _dominant(hits, came_from)
    if dominant is None:
        return ""
    text, node_type, same = dominant
    if nameless and set(same) <= set(nameless):
        return text + _through(same, multi)
    onward = onward_relations(schema, node_type)
    if onward:
        target = f"node_index={same}" if multi and len(same) > 1 else "node_index=<one of them>"
        text += (
            f" If the question asks for what these {node_type} nodes link to, go one more "
            f"hop: search_in_neighborhood({target}, edge_type=R) with R one of "
            + _listed(onward)
            + "."
        )
    return text + f" If these {node_type} nodes are what the question asks for, add them."


def after_add(
    question: str | None,
    added: Sequence[tuple[int, str, str]],
    explored: Sequence[int],
    remaining: Sequence[str] = (),
    *,
    schema: Schema | None = None,
    multi: bool = False,
    unnamed: Collection[str] = (),
) -> str:
    """A reminder when ``added`` ((index, name, type)) includes a node the search started
    from or already explored past (``explored``: the centers of neighborhood calls), or
    when the question names relations not followed yet (``remaining``, in chain order):
    then, given the ``schema``, the next hop from the added nodes, ready to copy, along
    the first of them their type has. A 1.5B model that adds a bridge (the films, on
    the way to their genres) stops there unless the next move is written out for it."""
    passed = [(i, name, t) for i, name, t in added if i in explored]
    if not passed:
        if not remaining:
            return ""
        whose = (
            "the path read for the question also takes"
            if set(remaining) & set(unnamed)
            else "the question also names"
        )
        lead = f"Note: {whose} {', '.join(remaining)}, not followed yet"
        hop = _next_hop(schema, added, remaining, multi) if schema is not None else ""
        if hop:
            return f"{lead}; if these nodes are a step on the way, go on from them: {hop}."
        return f"{lead}; if these nodes are a step on the way, go on from them before finishing."
    names = ", ".join(f"[{i}] {name} ({t})" for i, name, t in passed[:3])
    text = (
        f"Note: you explored the neighbors of {names} to get further, so it is a step on the "
        "way rather than the answer, unless the question asks for it."
    )
    if question:
        text += f' The question: "{question}"'
    return text


def _next_hop(
    schema: Schema, added: Sequence[tuple[int, str, str]], remaining: Sequence[str], multi: bool
) -> str:
    """The call along the first of ``remaining`` that the type of some ``added`` nodes
    has, from those nodes (all of them when the tool takes a set), or ""."""
    for relation in remaining:
        for node_type in dict.fromkeys(t for _, _, t in added):
            ends = _ends(schema, relation, node_type)
            if ends:
                ids = [i for i, _, t in added if t == node_type][:MAX_SUGGESTED]
                target = ids if multi and len(ids) > 1 else ids[0]
                return (
                    f"search_in_neighborhood(node_index={target}, "
                    f'edge_type="{relation}", node_type="{ends[0]}")'
                )
    return ""


def after_repeat(unexplored: Sequence[tuple[int, str, str]], limit: int = 5) -> str:
    """After a repeated call: the latest results' nodes not explored yet, as next moves."""
    if not unexplored:
        return ""
    shown = ", ".join(f"[{i}] {name} ({t})" for i, name, t in unexplored[:limit])
    return f"Hint: not explored yet from your latest results: {shown}."


class Named(NamedTuple):
    """A relation the question names: how many times its chain uses the relation (two
    for a shared mention, ``co-star``) and the word positions that name it."""

    relation: str
    uses: int
    positions: tuple[int, ...]


def named_relations(linking: Linking) -> list[Named]:
    """The relations the linker is confident the question uses, best first, with how
    many times the chain uses each (:meth:`ark.linking.Linking.uses`: once per separate
    mention). The reading when the question names no node or several; a question
    naming one node is read by :func:`ark.linking.read_chain` instead, which also knows
    when one mention is two uses (the films that *share* X's director)."""
    return [Named(r, n, at) for r, (n, at) in linking.uses().items()]


def chain_relations(chain: Chain) -> list[Named]:
    """A chain read from the graph (:func:`ark.linking.read_chain`) as the hints use
    it: its relations in the order followed, each with its number of uses and the
    words that name it."""
    explains = dict(chain.explains)
    uses = chain.uses
    return [Named(r, uses[r], tuple(explains.get(r, ()))) for r in chain.relations]


def unnamed_relations(named: Sequence[Named]) -> set[str]:
    """The relations of a chain that no word of the question names (no positions):
    steps the graph's path takes to reach what the question asks for (*players from
    Spain*: the hop to Spain's players, which no word says)."""
    return {n.relation for n in named if not n.positions}


def _who(relation: str, unnamed: Collection[str]) -> str:
    """Whom a hint says wants ``relation``: the question only when a word of it names
    the relation (not in ``unnamed``), else the path read for it. A hint never claims
    more than was read."""
    return "The path read for the question" if relation in unnamed else "The question"


def _wants(relation: str, unnamed: Collection[str], *, also: bool = False) -> str:
    """The words a hint uses for ``relation`` being wanted: "The question (also) names
    R", or for a relation no word names, "The path read for the question takes R
    (too)"."""
    if relation in unnamed:
        return f"{_who(relation, unnamed)} takes {relation}{' too' if also else ''}"
    return f"The question {'also ' if also else ''}names {relation}"


def mentioned_relations(linking: Linking) -> list[str]:
    """The names of :func:`named_relations`, best first."""
    return [n.relation for n in named_relations(linking)]


def _position(question: str, name: str) -> int | None:
    """The word position where ``name`` (a node's name) starts in the question, or of
    the first of its words the question has; None when it has none."""
    words, own = tokens(question), [w for w in tokens(name) if w not in STOPWORDS]
    for i in range(len(words)):
        if own and words[i : i + len(own)] == own:
            return i
    return next((words.index(w) for w in own if w in words), None)


def _lead(returned: bool) -> str:
    """How a first-hop hint introduces its node: the search's best match, or, when the
    search did not return it, the node the question names, said as such."""
    if returned:
        return "matches the question best"
    return "is the node the question names, and this search did not return it"


def first_hop(
    named: Sequence[Named],
    question: str,
    candidates: Sequence[tuple[int, str, str, Sequence[tuple[str, str, str, int]]]],
    *,
    ordered: bool = False,
    returned: bool = True,
) -> str:
    """The hint after a global search: the first of the ``candidates`` ((index, name,
    type, what its neighborhood holds as (neighbor type, relation, direction, count)),
    best match first) that has a relation the question names, with the ready-made call
    along the named relation mentioned nearest to the node's name in the question
    (``films acted by X``: the relation of ``acted``), or, when ``named`` is
    ``ordered`` (a chain read from the graph), the first of them the node has.
    ``returned=False``: the candidate is the node the question names, which the search
    did not return (a query of the question's other words), and the hint says so."""
    for index, name, node_type, links in candidates:
        present = {rel for _, rel, _, _ in links}
        options = [n for n in named if n.relation in present]
        if not options:
            continue
        at = _position(question, name)
        if at is not None and not ordered:
            options.sort(key=lambda n: min(abs(p - at) for p in n.positions))
        relation = options[0].relation
        other = next(t for t, rel, _, _ in links if rel == relation)
        said = (
            f"the question names {relation}, which it has"
            if options[0].positions
            else f"the path read from it to what the question asks for starts along {relation}"
        )
        return (
            f"Hint: [{index}] {name} ({node_type}) {_lead(returned)}; {said}: "
            f"search_in_neighborhood(node_index={index}, "
            f'edge_type="{relation}", node_type="{other}").'
        )
    return ""


def unread_hop(
    candidate: tuple[int, str, str, Sequence[tuple[str, str, str, int]]],
    unexplained: Sequence[str],
    *,
    returned: bool = True,
) -> str:
    """The hint after a global search when the reading named none of the chain's
    relations and left words of the question unexplained (*what words describe X*,
    *which was X headed by*): the graph's shape alone then picks a path, rarely right
    (``docs/decisions/reading.md``), so the hint hands the node over with its
    relations and says that none was read, instead of stating a path. The model, which knows
    what *headed by* means, picks the relation. ``candidate``: (index, name, type,
    what its neighborhood holds, as :meth:`ark.tools.GraphTools.links` gives it)."""
    index, name, node_type, links = candidate
    kinds: dict[str, list[str]] = {}
    for other, relation, _, count in links:
        kinds.setdefault(relation, []).append(f"{count} {other}")
    if not kinds:
        return ""
    shown = "; ".join(f"{rel} ({', '.join(ends)})" for rel, ends in kinds.items())
    words = ", ".join(f"'{w}'" for w in unexplained[:4])
    return (
        f"Hint: [{index}] {name} ({node_type}) {_lead(returned)}. No relation's name or "
        f"words match {words} in the question, so no path was read from it. Its relations: "
        f"{shown}. "
        f"Explore it along the one that answers the question: "
        f"search_in_neighborhood(node_index={index}, edge_type=...)."
    )


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


def _through(same: Sequence[int], multi: bool, onward: str | None = None) -> str:
    """The end of a hint about nodes that have no name (mediators, :mod:`ark.linking`):
    never the add; the hop on from them, where the fact they join ends — along
    ``onward`` when the question names one of their relations
    (:func:`ark.linking.onward_relation`), else unfiltered."""
    target = f"node_index={list(same)}" if multi and len(same) > 1 else f"node_index={same[0]}"
    edge = f', edge_type="{onward}"' if onward else ""
    return (
        " These nodes have no name of their own: each joins the parts of one fact, so "
        f"they are no answer; what the question asks for is one hop on: "
        f"search_in_neighborhood({target}{edge})."
    )


def chain_hint(
    schema: Schema,
    named: Sequence[str],
    hits: Sequence[tuple[int, str]],
    came_from: Sequence[int],
    followed: Iterable[str],
    *,
    multi: bool,
    uses: Mapping[str, int] | None = None,
    centers: Sequence[tuple[int, str]] = (),
    hop: Sequence[str] = (),
    unaccounted: Sequence[str] = (),
    matching: Sequence[str] = (),
    asks_for: Sequence[str] = (),
    nameless: Collection[int] = (),
    unnamed: Collection[str] = (),
) -> str:
    """The hint after a neighborhood when the question is known (``named``: its
    :func:`mentioned_relations`, each used ``uses[r]`` times, once by default;
    ``followed``: one entry per use so far): the next named relation not used up, as a
    ready-made call from the returned nodes; when the returned nodes do not touch it,
    back from this call's ``centers`` ((index, type)) if this call (along ``hop``) left
    the question's chain, or else through one intermediate hop; when every named
    relation is used up, the ready-made ``add_to_answer`` — asserted only when the
    reading explains every content word of the question (``unaccounted`` empty) and
    the nodes are of a type it asks for (``asks_for``: the node types it names, empty
    when it names none). Otherwise the hint says what is unexplained and, first, the
    hop along the relations whose labels or aliases match it (``matching``, best
    first) that these nodes have, ready to copy; the add comes after it, not asserted.
    Never the most common relations: a small model follows whatever it is shown.
    Nodes that are all ``nameless`` (mediators) are never called an answer: with
    nothing named left to follow, the hint is the hop on from them. A relation in
    ``unnamed`` (:func:`unnamed_relations`) is one the path read for the question takes
    with no word of it naming the relation: the hint says so instead of "the question
    names"."""
    dominant = _dominant(hits, came_from)
    if dominant is None:
        return ""
    text, node_type, same = dominant
    done = Counter(followed)
    wanted = uses or {}
    remaining = [r for r in named if done[r] < wanted.get(r, 1)]
    target = f"node_index={same}" if multi and len(same) > 1 else f"node_index={same[0]}"
    if not remaining and nameless and set(same) <= set(nameless):
        return text + _through(same, multi)
    if not remaining:
        fits = not asks_for or node_type in asks_for
        if unaccounted or not fits:
            return text + _unread(schema, node_type, same, target, unaccounted, matching, asks_for)
        if not named:
            return text + (
                f" If they answer the question, add them: add_to_answer(node_indices={same})."
            )
        whose = (
            "of the path read for the question"
            if set(named) & set(unnamed)
            else "the question names"
        )
        return text + (
            f" Every relation {whose} ({', '.join(named)}) is followed, so these "
            f"answer it. Add them now: add_to_answer(node_indices={same}), then finish."
        )
    for relation in remaining:
        ends = _ends(schema, relation, node_type)
        if ends:
            lead = (
                f"{_who(relation, unnamed)} uses {relation} twice, followed once so far"
                if done[relation]
                else f"{_wants(relation, unnamed, also=True)}, not followed yet"
            )
            return text + (
                f" {lead}: search_in_neighborhood({target}, "
                f'edge_type="{relation}", node_type="{ends[0]}").'
            )
    if not set(hop) & set(named):
        # This call left the chain (along relations the question does not name): go
        # on from where it started, if that touches a named relation.
        for relation in remaining:
            for center_type in dict.fromkeys(t for _, t in centers):
                ends = _ends(schema, relation, center_type)
                if ends:
                    back = [i for i, t in centers if t == center_type][:MAX_SUGGESTED]
                    start = back if multi and len(back) > 1 else back[0]
                    return text + (
                        f" {_wants(relation, unnamed)}, which {node_type} nodes do not "
                        f"have; the {center_type} node{'s' if len(back) > 1 else ''} you "
                        f"came from do{'' if len(back) > 1 else 'es'}: search_in_neighborhood("
                        f'node_index={start}, edge_type="{relation}", node_type="{ends[0]}").'
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
        f" {_wants(relation, unnamed, also=True)}, which {node_type} nodes do not have; "
        f"{other} nodes do. Hop to them first: "
        f'search_in_neighborhood({target}, edge_type="{rel}", node_type="{other}").'
    )


def _unread(
    schema: Schema,
    node_type: str,
    same: Sequence[int],
    target: str,
    unaccounted: Sequence[str],
    matching: Sequence[str],
    asks_for: Sequence[str],
) -> str:
    """The end of a chain hint when the reading does not explain the whole question:
    what it leaves unexplained, the hop along the first matching relation these nodes
    have (ready to copy), and the add, not asserted."""
    if unaccounted:
        words = ", ".join(repr(w) for w in unaccounted[:4])
        said = f" No relation followed so far explains {words} in the question"
    else:
        said = f" The question asks for {' or '.join(asks_for)}, not {node_type}"
    for relation in matching:
        ends = _ends(schema, relation, node_type)
        if ends:
            return (
                f"{said}; {relation} matches it: search_in_neighborhood({target}, "
                f'edge_type="{relation}", node_type="{ends[0]}"). Only if nothing more is '
                f"asked, add these: add_to_answer(node_indices={list(same)})."
            )
    return f"{said}. These may answer it: add_to_answer(node_indices={list(same)})."


def intersection_call(
    entities: Sequence[EntityMention], relations: Sequence[str], *, multi: bool
) -> str:
    """The hint when the question names several nodes (``name a player who plays at
    Forward from Mexico``): what it asks for is linked to each, so the hop over all of
    them, which ranks first the nodes every one of them reaches, answers it.
    ``relations``: the named relations the anchors have (one filter for all of them),
    empty when some anchor has none the question names."""
    shown = ", ".join(f"[{e.index}] {e.name}" for e in entities)
    ids = [e.index for e in entities]
    if not multi:
        return (
            f"Hint: the question names {len(ids)} nodes ({shown}); what it asks for is "
            "linked to each of them: explore each one's neighbors and keep the nodes "
            "found around all of them."
        )
    edges = f", edge_type={list(relations)}" if relations else ""
    return (
        f"Hint: the question names {len(ids)} nodes ({shown}); what it asks for is linked "
        f"to each of them: search_in_neighborhood(node_index={ids}{edges}) lists first the "
        "nodes linked to all of them."
    )


def linked_to_all(merged: Sequence[tuple[int, int]], n_centers: int) -> list[int]:
    """The nodes of ``merged`` ((index, how many of the ``n_centers`` reach it), in
    rank order) that every center reaches, in that order."""
    return [i for i, c in merged if c == n_centers]


def after_intersection(
    common: Sequence[int],
    n_centers: int,
    unaccounted: Sequence[str],
    centers: Sequence[int],
    filtered: bool,
    relations: Sequence[str] = (),
    nameless: Collection[int] = (),
    *,
    multi: bool = True,
    onward: str | None = None,
) -> str:
    """After the hop over the question's named nodes (``common``: the nodes all
    ``n_centers`` of them reach, :func:`linked_to_all`, in rank order): those, to add;
    when none, the same hop with ``relations`` (each center's own) as its filter. When
    the nodes all of them reach are ``nameless`` (mediators: *Odysseus* and *Troy*
    meet at the record of the part in the film), the hop on from them, not the add."""
    common = list(common[:MAX_SUGGESTED])
    if common and nameless and set(common) <= set(nameless):
        return (
            f"Hint: {len(common)} node{'s are' if len(common) > 1 else ' is'} linked to all "
            f"{n_centers} of them.{_through(common, multi, onward)}"
        )
    if not common:
        if filtered:
            edges = f", edge_type={list(relations)}" if relations else ""
            return (
                f"Hint: no node is linked to all {n_centers} of them with these filters; one "
                "filter must keep every node's own relation: search_in_neighborhood("
                f"node_index={list(centers)}{edges})."
            )
        return (
            f"Hint: no node is linked to all {n_centers} of them directly; the answer may "
            "be one more hop away from one of them."
        )
    lead = (
        f"Hint: {len(common)} node{'s are' if len(common) > 1 else ' is'} linked to all {n_centers}"
    )
    if unaccounted:
        return (
            f"{lead}; they likely answer the question (it also says "
            f"{', '.join(repr(w) for w in unaccounted[:4])}): add_to_answer(node_indices={common})."
        )
    return (
        f"{lead}, so they answer the question: add_to_answer(node_indices={common}), then finish."
    )
