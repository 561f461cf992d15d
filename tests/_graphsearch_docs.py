"""A small graph built from documents, written by hand in the layout of
``ark.graph._documents``: passage nodes (a title and a text), entity nodes, passage
-[mentions]-> entity, and entity -[free-text phrase]-> entity from an extraction."""

import csv
import json
from pathlib import Path

PASSAGES = {
    "Lena Marsh": "Lena Marsh is a painter born in Port Avel. In 1921 she painted "
    "The Harbour at Dawn.",
    "Port Avel": "Port Avel is a fishing town on the coast of Norland. Its mayor is Tomas Reed.",
    "The Harbour at Dawn": "The Harbour at Dawn is an oil painting by Lena Marsh. It hangs "
    "in the Kestrel Museum.",
    "Kestrel Museum": "The Kestrel Museum is an art museum in the city of Valdor, founded in 1890.",
    "Tomas Reed": "Tomas Reed is a politician who has been mayor of Port Avel since 2010.",
    "Harbour seals": "Harbour seals rest on the rocks at dawn and feed at dusk.",
}
MENTIONS = {
    "Lena Marsh": ["Lena Marsh", "Port Avel", "The Harbour at Dawn"],
    "Port Avel": ["Port Avel", "Norland", "Tomas Reed"],
    "The Harbour at Dawn": ["The Harbour at Dawn", "Lena Marsh", "Kestrel Museum"],
    "Kestrel Museum": ["Kestrel Museum", "Valdor"],
    "Tomas Reed": ["Tomas Reed", "Port Avel"],
    "Harbour seals": [],
}
TRIPLES = [
    ("Lena Marsh", "born in", "Port Avel"),
    ("Lena Marsh", "painted", "The Harbour at Dawn"),
    ("The Harbour at Dawn", "hangs in", "Kestrel Museum"),
    ("Kestrel Museum", "located in", "Valdor"),
    ("Kestrel Museum", "founded in", "1890"),
    ("Port Avel", "located on the coast of", "Norland"),
    ("Tomas Reed", "mayor of", "Port Avel"),
]


def write_document_graph(root: Path) -> Path:
    """``nodes.csv``/``edges.csv`` of the graph above; passages first, then entities."""
    entities: list[str] = []
    for names in MENTIONS.values():
        entities += [e for e in names if e not in entities]
    for s, _, o in TRIPLES:
        entities += [e for e in (s, o) if e not in entities]
    nodes = [(f"p{i}", title, "passage", {"text": text}) for i, (title, text) in
             enumerate(PASSAGES.items())]  # fmt: skip
    ids = {e: f"e{i}" for i, e in enumerate(entities)}
    nodes += [(ids[e], e, "entity", {}) for e in entities]
    edges = [(f"p{i}", ids[e], "mentions") for i, t in enumerate(PASSAGES) for e in MENTIONS[t]]
    edges += [(ids[s], ids[o], r) for s, r, o in TRIPLES]
    root.mkdir(parents=True, exist_ok=True)
    with (root / "nodes.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "name", "type", "properties"])
        w.writerows((i, n, t, json.dumps(p) if p else "") for i, n, t, p in nodes)
    with (root / "edges.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["from", "to", "type"])
        w.writerows(edges)
    return root
