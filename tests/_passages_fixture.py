"""A small graph built from documents, made by hand in the layout of
``ark.graph._documents`` (passage nodes with a title line, entity nodes, passage
-[mentions]-> entity, entity -[free-text phrase]-> entity), for the evidence-passage
and answer tests. Invented facts, so no model knows them beforehand."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from _helpers import index_of_graph
from ark.graph import Graph, passage_text
from ark.index import Index

PASSAGES = {
    "Lena Marsh": "Lena Marsh is a painter born in Port Avel. In 1921 she painted The "
    "Harbour at Dawn.",
    "Port Avel": "Port Avel is a fishing town on the coast of Norland. Its mayor is Tomas Reed.",
    "Tomas Reed": "Tomas Reed is a politician who has been mayor of Port Avel since 2010.",
    "The Harbour at Dawn": "The Harbour at Dawn is an oil painting by Lena Marsh. It "
    "hangs in the Kestrel Museum.",
    "Harbour seals": "Harbour seals rest on the rocks at dawn and feed at dusk.",
}
MENTIONS = {
    "Lena Marsh": ["Lena Marsh", "Port Avel", "The Harbour at Dawn"],
    "Port Avel": ["Port Avel", "Norland", "Tomas Reed"],
    "Tomas Reed": ["Tomas Reed", "Port Avel"],
    "The Harbour at Dawn": ["The Harbour at Dawn", "Lena Marsh", "Kestrel Museum"],
    "Harbour seals": [],
}
TRIPLES = [
    ("Lena Marsh", "born in", "Port Avel"),
    ("Lena Marsh", "painted", "The Harbour at Dawn"),
    ("The Harbour at Dawn", "hangs in", "Kestrel Museum"),
    ("Port Avel", "located on the coast of", "Norland"),
    ("Tomas Reed", "mayor of", "Port Avel"),
]


#: Node indices of :func:`document_graph` (passages in :data:`PASSAGES` order, then the
#: entities in order of first mention), for the tests that name nodes by index.
P_LENA, P_PORT, P_TOMAS, P_HARBOUR, P_SEALS = range(5)
LENA, PORT, HARBOUR, NORLAND, TOMAS = 5, 6, 7, 8, 9
#: A two-hop question over the graph (Lena Marsh -> Port Avel -> its mayor).
QUESTION = "Who is the mayor of the town where Lena Marsh was born?"


def document_graph() -> Graph:
    """Passages first (indices 0..4, in :data:`PASSAGES` order), then entities."""
    entities: list[str] = []
    for names in MENTIONS.values():
        entities += [e for e in names if e not in entities]
    for s, _, o in TRIPLES:
        entities += [e for e in (s, o) if e not in entities]
    titles = list(PASSAGES)
    names = titles + entities
    texts = [passage_text(t, PASSAGES[t]) for t in titles] + entities
    types = [0] * len(titles) + [1] * len(entities)
    ent = {e: len(titles) + i for i, e in enumerate(entities)}
    relations = ["mentions", *dict.fromkeys(r for _, r, _ in TRIPLES)]
    edges = [(i, ent[e], 0) for i, t in enumerate(titles) for e in MENTIONS[t]]
    edges += [(ent[s], ent[o], relations.index(r)) for s, r, o in TRIPLES]
    src, dst, rel = (np.array(c, dtype=np.int64) for c in zip(*edges, strict=True))
    return Graph.from_edges(
        names=names,
        node_type=np.array(types),
        node_type_names=["passage", "entity"],
        texts=texts,
        src=src,
        dst=dst,
        rel=rel,
        relation_names=relations,
    )


def build_document_index(out: Path) -> Index:
    """:func:`document_graph` as an index (BM25 over its node text)."""
    return index_of_graph(document_graph(), out)
