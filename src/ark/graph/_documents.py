"""The layout of a graph built from documents, shared by every step after it.

A document-derived graph (``ark index build --format hipporag|graphrag|lightrag|passages``,
``ark ingest``) has two node types and one structural relation, so that the steps after it
(evidence passages, passage recall, the answer step, GraphSearch's semantic channel)
find the passages by a name rather than by guessing:

- ``passage`` nodes: a chunk or passage; name = its title (or ``"<doc> #<position>"``
  when it has none), text = ``title + "\\n" + text`` (the text alone with no title);
- ``entity`` nodes: an extracted entity; name = its first spelling, text = the name
  (GraphRAG's store: the name, then the description and type it wrote); entities are
  one node per :func:`entity_key`;
- ``passage -[mentions]-> entity`` for every entity a passage names, and
  ``entity -[<relation phrase>]-> entity`` for every extracted triple, the relation
  named by :func:`relation_key` of its free-text phrase.

A curated graph has no ``passage`` type: :func:`passage_ids` is then empty and every
step behaves as before.
"""

from __future__ import annotations

import re

import numpy as np

from ark.graph._graph import Graph

PASSAGE_TYPE = "passage"
ENTITY_TYPE = "entity"
MENTIONS = "mentions"
#: Bumped when the layout changes, so that an index records which one it follows.
LAYOUT_VERSION = 1

_SPACE = re.compile(r"\s+")


def entity_key(name: str) -> str:
    """Two spellings of one entity that differ only in case or spacing are one node."""
    return _SPACE.sub(" ", name).strip().casefold()


#: What an extracted phrase that is the layout's own relation name becomes: a fact
#: "X mentions Y" is not the passage-to-entity edge, and merged into it, it made
#: entities look like passages to every tool (issue 67).
EXTRACTED_SUFFIX = " (extracted)"


def relation_key(phrase: str) -> str:
    """A free-text relation phrase as a relation name: lower case, spaces collapsed;
    the layout's own :data:`MENTIONS` marked as extracted (:data:`EXTRACTED_SUFFIX`)."""
    key = _SPACE.sub(" ", phrase).strip().lower()
    return key + EXTRACTED_SUFFIX if key == MENTIONS else key


def passage_text(title: str | None, text: str) -> str:
    """The text of a passage node: its title on the first line, when it has one."""
    return f"{title}\n{text}" if title else text


def passage_name(title: str | None, doc: str | None, position: int | None) -> str:
    """The name of a passage node: its title; else ``"<doc> #<position>"``, so that the
    chunks of one untitled document read as its parts (``#0`` when no position is given)."""
    if title:
        return title
    return f"{doc or 'passage'} #{position if position is not None else 0}"


def layout_meta() -> dict[str, object]:
    """The layout as an index records it (``meta.json``'s ``documents.layout``), so a
    reader of the index knows which types and relation hold the passages."""
    return {
        "version": LAYOUT_VERSION,
        "passage_type": PASSAGE_TYPE,
        "entity_type": ENTITY_TYPE,
        "mentions": MENTIONS,
        "passage_text": "title + newline + text (the text alone with no title)",
        "entity_key": "case-folded, whitespace collapsed",
        "relation_key": f"lower case, whitespace collapsed; {MENTIONS!r} + {EXTRACTED_SUFFIX!r}",
    }


def is_document_graph(graph: Graph) -> bool:
    """Whether ``graph`` has passage nodes (a graph built from documents)."""
    return graph.type_id(PASSAGE_TYPE) is not None


def passage_ids(graph: Graph) -> np.ndarray:
    """The indices of the live passage nodes, ascending (empty for a curated graph).

    An updated index's graph keeps a removed node's index until ``compact`` and says
    which are removed (its ``removed`` mask): those are left out, or a passage an
    update replaced would still be scored and shown as evidence."""
    code = graph.type_id(PASSAGE_TYPE)
    if code is None:
        return np.zeros(0, dtype=np.int64)
    live = np.asarray(graph.node_type) == code
    removed = getattr(graph, "removed", None)
    if removed is not None:
        live &= ~np.asarray(removed, dtype=bool)
    return np.flatnonzero(live).astype(np.int64)


#: An entity named by at most this many passages links them: a bridge between the
#: passages that name it, where an entity most passages name (a country, a year)
#: links nothing (:mod:`ark.retrieval._passages`, the documents hints).
LINK_MAX_MENTIONS = 5


class Mentions:
    """Who mentions whom, read from the graph on demand and kept for one call."""

    def __init__(self, graph: Graph, passage_type: int, mentions: int | None) -> None:
        self.graph = graph
        self.passage_type = passage_type
        self.mentions = mentions
        self._by: dict[int, np.ndarray] = {}
        self._of: dict[int, set[int]] = {}

    def is_passage(self, node: int | None) -> bool:
        g = self.graph
        return node is not None and 0 <= node < g.n_nodes and g.node_type[node] == self.passage_type

    def passages_naming(self, node: int) -> np.ndarray:
        """The passages with a ``mentions`` edge to ``node`` (ascending)."""
        if self.mentions is None:
            return np.zeros(0, dtype=np.int64)
        if node not in self._by:
            hood = self.graph.neighborhood(node, [self.passage_type], [self.mentions])
            self._by[node] = np.sort(np.asarray(hood.neighbors, dtype=np.int64))
        return self._by[node]

    def named_by(self, passage: int) -> set[int]:
        """The nodes ``passage`` mentions."""
        if self.mentions is None:
            return set()
        if passage not in self._of:
            hood = self.graph.neighborhood(passage, None, [self.mentions])
            self._of[passage] = {int(n) for n in hood.neighbors}
        return self._of[passage]
