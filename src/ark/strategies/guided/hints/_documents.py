"""The hints of ``ark-guided`` on a graph built from documents.

A graph built from documents (:mod:`ark.graph._documents`: ``passage`` nodes whose
text states the facts, ``entity`` nodes, ``passage -[mentions]-> entity`` and
thousands of free-text relation phrases from an extractor) is not a curated graph:
its entity-to-entity relations are sparse and noisy, and the facts a question needs
are in the passages: followed along relation phrases, the question's chain mostly
finds nothing, and a small model never adds the passages it has on screen
(``docs/decisions/documents.md``).

So on such a graph the hints send the agent to the passages: after a global search,
the passage titled with a name the question uses (to add, if its text states a fact
the question needs) and the passages mentioning the entities the question names
(``edge_type="mentions"``, ``node_type="passage"``, ``query=`` the question's other
words), ready to copy; after a hop that returned passages, the add of the first
ones; after a hop along a relation phrase, the passages that mention its nodes
instead. A line never says a passage answers the question (the hints have not read
it): it says what the passage is (titled with the question's name, ranked first by
the query, mentioning a node) and asks the model to add it only if its text states
a fact the question needs.

No state, like :mod:`ark.strategies.guided.hints._lines`, and typed parts like its
lines (kinds in :data:`KINDS`): :class:`ark.strategies.guided.hints.ChainHints` decides
when a graph has this layout (:func:`has_passages`) and calls these.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ark.graph import MENTIONS, PASSAGE_TYPE, is_document_graph
from ark.session import Hint, NextCall, Note
from ark.strategies.guided.hints._lines import written as _written
from ark.tools import written_arguments
from ark.words import STOPWORDS, tokens

if TYPE_CHECKING:
    from ark.index import Index

#: Most entities a hint sends to their passages at once.
MAX_ANCHORS = 3
#: Most passages a hint offers to add in one call (the add tool itself takes more:
#: :data:`ark.tools.MAX_ADD`).
PASSAGES_OFFERED = 3
#: Most question words put in a suggested ``query``.
MAX_QUERY_WORDS = 8

T = TypeVar("T")

#: What a line of these hints does (its part's ``kind``): after a global search, where
#: to ``read_passages``; after a hop that returned passages, ``add_passages``, or
#: ``passages_in_answer`` when they all are; after a hop along a relation phrase,
#: ``to_passages``; after an add of passages, the ``bridges`` to the next fact, the
#: question's words no passage added has (``unstated``), or the ``further_fact`` to
#: search for; after an add of entities, the passages
#: ``mentioning`` them, or how to ``find_passages``.
KINDS = (
    "read_passages",
    "add_passages",
    "passages_in_answer",
    "to_passages",
    "bridges",
    "unstated",
    "further_fact",
    "mentioning",
    "find_passages",
)

_PARENTHESIS = re.compile(r"\s*\([^)]*\)\s*$")


def has_passages(index: Index) -> bool:
    """Whether ``index``'s graph has passage nodes that mention other nodes
    (``passage -[mentions]-> …`` in its schema): a curated graph has no passage type,
    so none of these hints ever shows on it."""
    if not is_document_graph(index.graph):
        return False
    return any(
        r.name == MENTIONS and r.source_type == PASSAGE_TYPE and r.count
        for r in index.schema.relations
    )


def named_in(question: str, name: str) -> bool:
    """Whether ``name`` is written in ``question`` as a name: its words in a row, and
    written with a capital or a digit (*the area*, *song*, *state* are nodes of such a
    graph too, but a question's common nouns do not name them)."""
    if not any(c.isupper() or c.isdigit() for c in name):
        return False
    own = tokens(name)
    if not own or all(w in STOPWORDS for w in own):
        return False
    words = tokens(question)
    n = len(own)
    return any(words[i : i + n] == own for i in range(len(words) - n + 1))


def titled_in(question: str, title: str) -> bool:
    """Whether a passage's ``title`` is a name ``question`` uses (:func:`named_in`),
    once told from its namesakes: without a closing parenthesis (*Norris Mountain
    (Montana)*) or what follows its first comma (*Black Hawk Township, Jefferson
    County, Iowa*)."""
    bare = _PARENTHESIS.sub("", title) or title
    return named_in(question, bare) or named_in(question, bare.split(",")[0])


def same_name(title: str, name: str) -> bool:
    """Whether a passage's ``title`` is ``name`` (case aside), once told from its
    namesakes as :func:`titled_in` tells them: the passage about that node."""
    bare = (_PARENTHESIS.sub("", title) or title).casefold().strip()
    key = name.casefold().strip()
    return bool(key) and key in (bare, bare.split(",")[0].strip())


def content_words(question: str, names: Iterable[str]) -> list[str]:
    """The question's content words that none of ``names`` has, in order, once each."""
    taken = {w for n in names for w in tokens(n)}
    out: list[str] = []
    for w in tokens(question):
        if w not in STOPWORDS and w not in taken and w not in out and len(w) > 1:
            out.append(w)
    return out


def query_words(question: str, names: Iterable[str]) -> str:
    """The question's content words that none of ``names`` has, in order, at most
    :data:`MAX_QUERY_WORDS`: what a neighborhood ``query`` ranks the passages by once
    the named node has chosen them."""
    return " ".join(content_words(question, names)[:MAX_QUERY_WORDS])


def unstated_words(question: str, names: Iterable[str], texts: Iterable[str]) -> list[str]:
    """The question's content words (:func:`content_words`) that none of ``texts`` has
    (the passages of an answer): a fact the question asks is not among them yet."""
    stated = {w for text in texts for w in tokens(text)}
    return [w for w in content_words(question, names) if w not in stated]


def _node(i: int, name: str, node_type: str) -> str:
    return f"[{i}] {name} ({node_type})"


def written(nodes: Sequence[T], multi: bool) -> list[T]:
    """The prefix of ``nodes`` a ready-made passages call writes: up to
    :data:`MAX_ANCHORS` when the neighborhood tool takes a list, else the first. The
    hint declares exactly these shown, so a session that refuses unseen nodes runs
    the call it wrote and no other."""
    return list(nodes[:MAX_ANCHORS]) if multi else list(nodes[:1])


def passages_arguments(ids: Sequence[int], query: str, multi: bool) -> dict[str, Any]:
    """The arguments of the ready-made call for the passages that mention ``ids``: a
    list of them where the neighborhood tool takes one, else the first."""
    target: Any = list(ids) if multi and len(ids) > 1 else ids[0]
    out = {"node_index": target, "edge_type": MENTIONS, "node_type": PASSAGE_TYPE}
    return {**out, "query": query} if query else out


def passages_call(ids: Sequence[int], query: str, multi: bool) -> NextCall:
    """The ready-made call for the passages that mention ``ids``, made of
    :func:`passages_arguments`, so the call a hint offers is the one it checks for a
    repeat."""
    return NextCall("search_in_neighborhood", passages_arguments(ids, query, multi))


def _passages_written(call: NextCall) -> str:
    """A passages call as these hints write it: each value in JSON."""
    return f"{call.tool}({written_arguments(call.arguments)})"


def _add(ids: Sequence[int]) -> NextCall:
    return NextCall("add_to_answer", {"node_indices": list(ids)})


def after_global(
    titled: Sequence[tuple[int, str]],
    anchors: Sequence[tuple[int, str, str]],
    query: str,
    *,
    multi: bool,
) -> Hint:
    """After a global search: the passages titled with a name the question uses
    (``titled``: (index, name)), to add if their text states a needed fact, and the
    passages that mention the question's named nodes (``anchors``: (index, name,
    type)), ready to copy."""
    text = "on this graph the facts are stated in the text of passage nodes."
    calls: list[NextCall] = []
    nodes: list[int] = []
    if titled:
        ids = [i for i, _ in titled[:PASSAGES_OFFERED]]
        shown = ", ".join(_node(i, n, PASSAGE_TYPE) for i, n in titled[:PASSAGES_OFFERED])
        one = len(ids) == 1
        calls.append(_add(ids))
        nodes += ids
        text += (
            f" {shown} {'is' if one else 'are'} titled with a name the question uses: if "
            f"{'its' if one else 'their'} text states a fact the question needs, add "
            f"{'it' if one else 'them'}: {_written(calls[-1])}."
        )
    if anchors:
        chosen = written(anchors, multi)
        ids = [i for i, _, _ in chosen]
        shown = ", ".join(_node(i, n, t) for i, n, t in chosen)
        first = " (the passages that mention all of them come first)" if len(ids) > 1 else ""
        calls.append(passages_call(ids, query, multi))
        nodes += ids
        text += f" The passages that mention {shown}{first}: {_passages_written(calls[-1])}."
    elif not titled:
        text += " Add the passages above whose text states a fact the question needs."
    return Hint(text, "read_passages", tuple(calls), tuple(nodes))


def after_passages(passages: Sequence[int], *, ranked: bool, n_shown: int) -> Hint:
    """After a neighborhood that returned ``passages`` not in the answer yet (their
    indices in the order shown; ``ranked``: by a query or by how many nodes mention
    them; ``n_shown``: how many it returned): add the ones whose text states a needed
    fact, the first ones ready to copy; and how to go on."""
    if not passages:
        return Hint(
            "these passages are in your answer already. If the question needs a "
            "further fact, search for the next thing they name with search_in_graph; "
            "else finish.",
            "passages_in_answer",
        )
    return _after_passages(passages, ranked=ranked, n_shown=n_shown)


def _after_passages(passages: Sequence[int], *, ranked: bool, n_shown: int) -> Hint:
    """After a neighborhood that returned ``passages`` (their indices in the order
    shown; ``ranked``: by a query or by how many nodes mention them): add the ones
    whose text states a needed fact, the first ones ready to copy; and how to go on."""
    add = _add(passages[:PASSAGES_OFFERED])
    order = "listed first" if ranked else "listed"
    n = len(passages)
    text = (
        f"{n_shown} {PASSAGE_TYPE} node{'s' if n_shown != 1 else ''}; their "
        f"text is above. Add those that state a fact the question needs, best first (the "
        f"{order}: {_written(add)}, if they do)."
        if n > 1
        else f"its text is above. If it states a fact the question needs, add it: {_written(add)}."
    )
    text += (
        " If the question needs a further fact about something a passage names (a "
        "person, place or work), search for that name with search_in_graph and read "
        "its passages the same way."
    )
    return Hint(text, "add_passages", (add,))


def to_passages(
    nodes: Sequence[tuple[int, str, str]],
    query: str,
    *,
    multi: bool,
    named_by_passages: bool,
) -> Hint | None:
    """After a hop that returned no passage: the passages that mention ``nodes``
    ((index, name, type): this call's entity centers, or the entities the passages
    it explored name, when ``named_by_passages``), ready to copy."""
    if not nodes:
        return None
    chosen = written(nodes, multi)
    ids = [i for i, _, _ in chosen]
    if named_by_passages:
        lead = "these are the nodes the passages name. To read the passages about"
    else:
        lead = (
            "on this graph the relations between entities are few and the facts "
            "are in the passages. To read the passages that mention"
        )
    shown = ", ".join(_node(i, n, t) for i, n, t in chosen)
    call = passages_call(ids, query, multi)
    return Hint(f"{lead} {shown}: {_passages_written(call)}.", "to_passages", (call,), tuple(ids))


def after_add(
    added: Sequence[tuple[int, str, str]],
    mentioning: Sequence[tuple[int, str, int]],
    bridges: Sequence[tuple[int, str, str]] = (),
    query: str = "",
    *,
    multi: bool = True,
    unstated: Sequence[str] = (),
) -> Note:
    """After an add: with passages among ``added``, how to reach a further fact — the
    passages about ``bridges`` ((index, name, type): nodes the added passages name
    that a few other passages mention too, the question does not name), ready to copy;
    without bridges, the question's words no passage of the answer has (``unstated``),
    which say a fact is still missing, so the note does not offer to finish
    (``docs/decisions/documents.md``); with entities only,
    the passages already shown that mention them (``mentioning``: (passage, its name,
    the added node it mentions)), to add instead of or beside."""
    if any(t == PASSAGE_TYPE for _, _, t in added):
        if bridges:
            chosen = written(bridges, multi)
            shown = ", ".join(_node(i, n, t) for i, n, t in chosen)
            ids = [i for i, _, _ in chosen]
            call = passages_call(ids, query, multi)
            return Note(
                "a question that chains facts needs a passage for each of them. "
                f"These passages name {shown}, which other passages are about or mention "
                f"too; to read them for the next fact: {_passages_written(call)}.",
                "bridges",
                (call,),
                tuple(ids),
            )
        if unstated:
            words = ", ".join(repr(w) for w in unstated[:MAX_QUERY_WORDS])
            return Note(
                f"the question's words {words} are in no passage of your answer yet, so it "
                "needs a further fact. It is about something these passages name: search "
                "for that name with search_in_graph and add the passage that states it.",
                "unstated",
            )
        return Note(
            "if the question needs a further fact that these passages do not state "
            "(a question that chains facts does), search for the next thing they name with "
            "search_in_graph and add its passage; else finish.",
            "further_fact",
        )
    if not mentioning:
        return Note(
            "on this graph the evidence for a node is the passages that mention it; "
            f'find them with edge_type="{MENTIONS}", '
            f'node_type="{PASSAGE_TYPE}" and add those that state the facts.',
            "find_passages",
        )
    ids = list(dict.fromkeys(p for p, _, _ in mentioning))[:PASSAGES_OFFERED]
    shown = ", ".join(
        f"{_node(p, n, PASSAGE_TYPE)} mentions [{e}]" for p, n, e in mentioning[:PASSAGES_OFFERED]
    )
    add = _add(ids)
    return Note(
        f"on this graph the evidence is in passages; shown above, {shown}. Add the "
        f"passages whose text states the facts: {_written(add)}, if they do.",
        "mentioning",
        (add,),
        tuple(dict.fromkeys(p for p, _, _ in mentioning[:PASSAGES_OFFERED])),
    )
