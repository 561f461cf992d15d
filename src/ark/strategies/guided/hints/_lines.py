"""The lines of the hints: observations that make a small model's next move obvious.

No state: :class:`ark.strategies.guided.hints.ChainHints` holds what the search has done
and calls these to write its lines. Each returns a typed part (:class:`ark.session.Hint`
after a search or a repeat, :class:`ark.session.Note` after an add; None for no line):
its ``kind`` (one of :data:`KINDS`), the calls it offers as data
(:class:`ark.session.NextCall`), written into its text by :func:`written`, so the call
the model reads is the call the plans run, and the nodes it names by index.

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
from ark.reading import Chain, EntityMention, Linking
from ark.session import Hint, NextCall, Note
from ark.words import STOPWORDS, tokens

#: Most node indices written into a suggested call.
MAX_SUGGESTED = 20

#: What a line of these hints does (its part's ``kind``): after a neighborhood without
#: the question, the type and the relations ``onward``; the ``next_relation`` of the
#: chain, ``back`` from the centers when this call left it, a ``detour`` hop first to a
#: type that has it; the ``answer`` (every relation followed: the add, asserted), an
#: ``add`` not asserted (no relation named), ``unexplained`` words (the matching hop
#: and the add, not asserted), only the ``count`` of the nodes; ``through`` nodes with
#: no name; the ``first_hop`` after a global search, or the ``unread_hop`` when no path
#: was read; the ``intersection`` of the nodes the question names, then the ``common``
#: nodes, a ``refilter`` or ``no_common``; after a repeat, the ``unexplored`` nodes;
#: after an add, the nodes ``passed`` (explored past) or the relations ``remaining``.
KINDS = (
    "onward",
    "next_relation",
    "back",
    "detour",
    "answer",
    "add",
    "unexplained",
    "count",
    "through",
    "first_hop",
    "unread_hop",
    "intersection",
    "common",
    "refilter",
    "no_common",
    "unexplored",
    "passed",
    "remaining",
)


def written(call: NextCall) -> str:
    """``call`` as the hints write it for the model to copy, in the tools' own syntax:
    ``search_in_neighborhood(node_index=[3, 7], edge_type="has_genre")`` (a string in
    double quotes, a list of names as Python writes it)."""
    values = ", ".join(
        f'{k}="{v}"' if isinstance(v, str) else f"{k}={v}" for k, v in call.arguments.items()
    )
    return f"{call.tool}({values})"


def _hop(target: object, relation: str | None = None, node_type: str | None = None) -> NextCall:
    """The neighborhood call from ``target`` (a node or a list), along ``relation`` to
    ``node_type`` where given."""
    arguments: dict[str, object] = {"node_index": target}
    if relation is not None:
        arguments["edge_type"] = relation
    if node_type is not None:
        arguments["node_type"] = node_type
    return NextCall("search_in_neighborhood", arguments)


def _add(nodes: Sequence[int]) -> NextCall:
    """The add of ``nodes``."""
    return NextCall("add_to_answer", {"node_indices": list(nodes)})


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
    """For the hits not among ``came_from``: the hint's opening sentence, their most
    common type, and the nodes of that type to suggest (None when nothing is new)."""
    fresh = [(i, t) for i, t in hits if i not in came_from]
    if not fresh:
        return None
    node_type, n = Counter(t for _, t in fresh).most_common(1)[0]
    same = [i for i, t in fresh if t == node_type][:MAX_SUGGESTED]
    return f"{n} {node_type} node{'s' if n != 1 else ''}.", node_type, same


def after_neighborhood(
    schema: Schema,
    hits: Sequence[tuple[int, str]],
    came_from: Sequence[int],
    *,
    multi: bool,
    nameless: Collection[int] = (),
) -> Hint | None:
    """The hint after a neighborhood with ``hits`` ((index, type) pairs) explored from
    ``came_from``: the dominant type, the relations leading on, the hop over the set
    (a template, no call); when they are all ``nameless`` (mediator nodes), the hop on
    from them instead of the add."""
    dominant = _dominant(hits, came_from)
    if dominant is None:
        return None
    text, node_type, same = dominant
    if nameless and set(same) <= set(nameless):
        return _through_hint(text, same, multi)
    onward = onward_relations(schema, node_type)
    if onward:
        target = f"node_index={same}" if multi and len(same) > 1 else "node_index=<one of them>"
        text += (
            f" If the question asks for what these {node_type} nodes link to, go one more "
            f"hop: search_in_neighborhood({target}, edge_type=R) with R one of "
            + _listed(onward)
            + "."
        )
    text += f" If these {node_type} nodes are what the question asks for, add them."
    return Hint(text, "onward")


def after_add(
    question: str | None,
    added: Sequence[tuple[int, str, str]],
    explored: Sequence[int],
    remaining: Sequence[str] = (),
    *,
    schema: Schema | None = None,
    multi: bool = False,
    unnamed: Collection[str] = (),
) -> Note | None:
    """A reminder when ``added`` ((index, name, type)) includes a node the search started
    from or already explored past (``explored``: the centers of neighborhood calls), or
    when the question names relations not followed yet (``remaining``, in chain order):
    then, given the ``schema``, the next hop from the added nodes, ready to copy, along
    the first of them their type has. A 1.5B model that adds a bridge (the films, on
    the way to their genres) stops there unless the next move is written out for it."""
    passed = [(i, name, t) for i, name, t in added if i in explored]
    if not passed:
        if not remaining:
            return None
        whose = (
            "the path read for the question also takes"
            if set(remaining) & set(unnamed)
            else "the question also names"
        )
        lead = f"{whose} {', '.join(remaining)}, not followed yet"
        hop = _next_hop(schema, added, remaining, multi) if schema is not None else None
        if hop is not None:
            return Note(
                f"{lead}; if these nodes are a step on the way, go on from them: {written(hop)}.",
                "remaining",
                (hop,),
            )
        return Note(
            f"{lead}; if these nodes are a step on the way, go on from them before finishing.",
            "remaining",
        )
    names = ", ".join(f"[{i}] {name} ({t})" for i, name, t in passed[:3])
    text = (
        f"you explored the neighbors of {names} to get further, so it is a step on the "
        "way rather than the answer, unless the question asks for it."
    )
    if question:
        text += f' The question: "{question}"'
    return Note(text, "passed", nodes=tuple(i for i, _, _ in passed[:3]))


def _next_hop(
    schema: Schema, added: Sequence[tuple[int, str, str]], remaining: Sequence[str], multi: bool
) -> NextCall | None:
    """The call along the first of ``remaining`` that the type of some ``added`` nodes
    has, from those nodes (all of them when the tool takes a set), or None."""
    for relation in remaining:
        for node_type in dict.fromkeys(t for _, _, t in added):
            ends = _ends(schema, relation, node_type)
            if ends:
                ids = [i for i, _, t in added if t == node_type][:MAX_SUGGESTED]
                target = ids if multi and len(ids) > 1 else ids[0]
                return _hop(target, relation, ends[0])
    return None


def after_repeat(unexplored: Sequence[tuple[int, str, str]], limit: int = 5) -> Hint | None:
    """After a repeated call: the latest results' nodes not explored yet, as next moves."""
    if not unexplored:
        return None
    shown = ", ".join(f"[{i}] {name} ({t})" for i, name, t in unexplored[:limit])
    return Hint(
        f"not explored yet from your latest results: {shown}.",
        "unexplored",
        nodes=tuple(i for i, _, _ in unexplored[:limit]),
    )


class Named(NamedTuple):
    """A relation the question names: how many times its chain uses the relation (two
    for a shared mention, ``co-star``) and the word positions that name it."""

    relation: str
    uses: int
    positions: tuple[int, ...]


def named_relations(linking: Linking) -> list[Named]:
    """The relations the linker is confident the question uses, best first, with how
    many times the chain uses each (:meth:`ark.reading.Linking.uses`: once per separate
    mention). The reading when the question names no node or several; a question
    naming one node is read by :func:`ark.reading.read_chain` instead, which also knows
    when one mention is two uses (the films that *share* X's director)."""
    return [Named(r, n, at) for r, (n, at) in linking.uses().items()]


def chain_relations(chain: Chain) -> list[Named]:
    """A chain read from the graph (:func:`ark.reading.read_chain`) as the hints use
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
) -> Hint | None:
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
        call = _hop(index, relation, other)
        return Hint(
            f"[{index}] {name} ({node_type}) {_lead(returned)}; {said}: {written(call)}.",
            "first_hop",
            (call,),
            (index,),
        )
    return None


def unread_hop(
    candidate: tuple[int, str, str, Sequence[tuple[str, str, str, int]]],
    unexplained: Sequence[str],
    *,
    returned: bool = True,
) -> Hint | None:
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
        return None
    shown = "; ".join(f"{rel} ({', '.join(ends)})" for rel, ends in kinds.items())
    words = ", ".join(f"'{w}'" for w in unexplained[:4])
    return Hint(
        f"[{index}] {name} ({node_type}) {_lead(returned)}. No relation's name or "
        f"words match {words} in the question, so no path was read from it. Its relations: "
        f"{shown}. "
        f"Explore it along the one that answers the question: "
        f"search_in_neighborhood(node_index={index}, edge_type=...).",
        "unread_hop",
        nodes=(index,),
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


def _through_hint(lead: str, same: Sequence[int], multi: bool, onward: str | None = None) -> Hint:
    """A hint about nodes that have no name (mediators, :mod:`ark.reading`), after
    ``lead``: never the add; the hop on from them, where the fact they join ends —
    along ``onward`` when the question names one of their relations
    (:func:`ark.reading.onward_relation`), else unfiltered."""
    call = _hop(list(same) if multi and len(same) > 1 else same[0], onward or None)
    return Hint(
        f"{lead} These nodes have no name of their own: each joins the parts of one fact, "
        f"so they are no answer; what the question asks for is one hop on: {written(call)}.",
        "through",
        (call,),
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
) -> Hint | None:
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
        return None
    text, node_type, same = dominant
    done = Counter(followed)
    wanted = uses or {}
    remaining = [r for r in named if done[r] < wanted.get(r, 1)]
    target = same if multi and len(same) > 1 else same[0]
    if not remaining and nameless and set(same) <= set(nameless):
        return _through_hint(text, same, multi)
    if not remaining:
        fits = not asks_for or node_type in asks_for
        if unaccounted or not fits:
            return _unread(text, schema, node_type, same, target, unaccounted, matching, asks_for)
        add = _add(same)
        if not named:
            return Hint(
                f"{text} If they answer the question, add them: {written(add)}.", "add", (add,)
            )
        whose = (
            "of the path read for the question"
            if set(named) & set(unnamed)
            else "the question names"
        )
        return Hint(
            f"{text} Every relation {whose} ({', '.join(named)}) is followed, so these "
            f"answer it. Add them now: {written(add)}, then finish.",
            "answer",
            (add,),
        )
    for relation in remaining:
        ends = _ends(schema, relation, node_type)
        if ends:
            lead = (
                f"{_who(relation, unnamed)} uses {relation} twice, followed once so far"
                if done[relation]
                else f"{_wants(relation, unnamed, also=True)}, not followed yet"
            )
            call = _hop(target, relation, ends[0])
            return Hint(f"{text} {lead}: {written(call)}.", "next_relation", (call,))
    if not set(hop) & set(named):
        # This call left the chain (along relations the question does not name): go
        # on from where it started, if that touches a named relation.
        for relation in remaining:
            for center_type in dict.fromkeys(t for _, t in centers):
                ends = _ends(schema, relation, center_type)
                if ends:
                    back = [i for i, t in centers if t == center_type][:MAX_SUGGESTED]
                    call = _hop(back if multi and len(back) > 1 else back[0], relation, ends[0])
                    return Hint(
                        f"{text} {_wants(relation, unnamed)}, which {node_type} nodes do not "
                        f"have; the {center_type} node{'s' if len(back) > 1 else ''} you "
                        f"came from do{'' if len(back) > 1 else 'es'}: {written(call)}.",
                        "back",
                        (call,),
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
        return Hint(text, "count")
    options.sort(key=lambda p: p[0] not in named)  # stable: named relations first
    rel, other = options[0]
    call = _hop(target, rel, other)
    return Hint(
        f"{text} {_wants(relation, unnamed, also=True)}, which {node_type} nodes do not "
        f"have; {other} nodes do. Hop to them first: {written(call)}.",
        "detour",
        (call,),
    )


def _unread(
    lead: str,
    schema: Schema,
    node_type: str,
    same: Sequence[int],
    target: int | list[int],
    unaccounted: Sequence[str],
    matching: Sequence[str],
    asks_for: Sequence[str],
) -> Hint:
    """A chain hint, after ``lead``, when the reading does not explain the whole
    question: what it leaves unexplained, the hop from ``target`` along the first
    matching relation these nodes have (ready to copy), and the add, not asserted."""
    if unaccounted:
        words = ", ".join(repr(w) for w in unaccounted[:4])
        said = f"{lead} No relation followed so far explains {words} in the question"
    else:
        said = f"{lead} The question asks for {' or '.join(asks_for)}, not {node_type}"
    add = _add(same)
    for relation in matching:
        ends = _ends(schema, relation, node_type)
        if ends:
            call = _hop(target, relation, ends[0])
            return Hint(
                f"{said}; {relation} matches it: {written(call)}. Only if nothing more is "
                f"asked, add these: {written(add)}.",
                "unexplained",
                (call, add),
            )
    return Hint(f"{said}. These may answer it: {written(add)}.", "unexplained", (add,))


def intersection_call(
    entities: Sequence[EntityMention], relations: Sequence[str], *, multi: bool
) -> Hint:
    """The hint when the question names several nodes (``name a player who plays at
    Forward from Mexico``): what it asks for is linked to each, so the hop over all of
    them, which ranks first the nodes every one of them reaches, answers it.
    ``relations``: the named relations the anchors have (one filter for all of them),
    empty when some anchor has none the question names."""
    shown = ", ".join(f"[{e.index}] {e.name}" for e in entities)
    ids = [e.index for e in entities]
    if not multi:
        return Hint(
            f"the question names {len(ids)} nodes ({shown}); what it asks for is "
            "linked to each of them: explore each one's neighbors and keep the nodes "
            "found around all of them.",
            "intersection",
            nodes=tuple(ids),
        )
    call = _hop(ids, list(relations) if relations else None)
    return Hint(
        f"the question names {len(ids)} nodes ({shown}); what it asks for is linked "
        f"to each of them: {written(call)} lists first the nodes linked to all of them.",
        "intersection",
        (call,),
        tuple(ids),
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
) -> Hint:
    """After the hop over the question's named nodes (``common``: the nodes all
    ``n_centers`` of them reach, :func:`linked_to_all`, in rank order): those, to add;
    when none, the same hop with ``relations`` (each center's own) as its filter. When
    the nodes all of them reach are ``nameless`` (mediators: *Odysseus* and *Troy*
    meet at the record of the part in the film), the hop on from them, not the add."""
    common = list(common[:MAX_SUGGESTED])
    if common and nameless and set(common) <= set(nameless):
        return _through_hint(
            f"{len(common)} node{'s are' if len(common) > 1 else ' is'} linked to all "
            f"{n_centers} of them.",
            common,
            multi,
            onward,
        )
    if not common:
        if filtered:
            call = _hop(list(centers), list(relations) if relations else None)
            return Hint(
                f"no node is linked to all {n_centers} of them with these filters; one "
                f"filter must keep every node's own relation: {written(call)}.",
                "refilter",
                (call,),
            )
        return Hint(
            f"no node is linked to all {n_centers} of them directly; the answer may "
            "be one more hop away from one of them.",
            "no_common",
        )
    lead = f"{len(common)} node{'s are' if len(common) > 1 else ' is'} linked to all {n_centers}"
    add = _add(common)
    if unaccounted:
        return Hint(
            f"{lead}; they likely answer the question (it also says "
            f"{', '.join(repr(w) for w in unaccounted[:4])}): {written(add)}.",
            "unexplained",
            (add,),
        )
    return Hint(
        f"{lead}, so they answer the question: {written(add)}, then finish.", "common", (add,)
    )
