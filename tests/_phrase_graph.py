"""A graph of free-text relations, shaped like one built from documents: passages that
mention entities, and thousands of distinct relation phrases between the entities (as an
extractor writes them), a few real English ones among generated filler.

Built as ``nodes.csv``/``edges.csv`` in the layout of ``ark.graph._documents``."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

from ark.index import Index, build_index

#: The real edges the tests look for: (subject, relation phrase, object).
STORY = [
    ("The Silent Shore", "written by", "Ann Lee"),
    ("The Silent Shore", "published by", "Blue House"),
    ("Ann Lee", "was born in", "Port Vale"),
    ("Ann Lee", "educated at", "Hill College"),
    ("Hill College", "founded by", "Tom Ray"),
    ("Port Vale", "is located in", "North Land"),
    ("Ann Lee", "won", "Gold Quill"),
]
#: Consonant-vowel syllables for filler words that are no English word (so that no
#: filler phrase shares a lemma with the story's).
_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


def filler_word(i: int) -> str:
    """A pronounceable word of three syllables, distinct for each ``i`` below 343,000
    (``bababa``, ``bababe``...): long enough to share no lemma with the story's."""
    n = len(_SYLLABLES)
    return _SYLLABLES[(i // (n * n)) % n] + _SYLLABLES[(i // n) % n] + _SYLLABLES[i % n]


def write_phrase_graph(
    root: Path, n_relations: int = 3000, story: Sequence[tuple[str, str, str]] = STORY
) -> Path:
    """The tables of a graph with ``n_relations`` filler relation phrases (plus the
    ``story``'s and ``mentions``), the k-th filler phrase on ``1 + (k % 3)`` edges."""
    root.mkdir(parents=True, exist_ok=True)
    nodes: list[tuple[int, str, str, str]] = []
    ids: dict[str, int] = {}

    def entity(name: str) -> int:
        if name not in ids:
            ids[name] = len(nodes)
            nodes.append((len(nodes), name, "entity", ""))
        return ids[name]

    edges: list[tuple[int, int, str]] = []
    passage = len(nodes)
    nodes.append(
        (
            passage,
            "The Silent Shore",
            "passage",
            json.dumps({"text": "The Silent Shore is a novel by Ann Lee, born in Port Vale."}),
        )
    )
    for s, r, o in story:
        edges.append((entity(s), entity(o), r))
    for name in ("The Silent Shore", "Ann Lee", "Port Vale"):
        edges.append((passage, entity(name), "mentions"))
    hub = entity("Ann Lee")
    for k in range(n_relations):
        phrase = f"{filler_word(k)} {filler_word(k + 7)}"
        for j in range(1 + k % 3):
            a = entity(f"Node {filler_word(3 * k + j)}")
            edges.append((hub if k < 40 and j == 0 else a, entity(f"Item {k}"), phrase))
    with (root / "nodes.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "name", "type", "properties"])
        writer.writerows(nodes)
    with (root / "edges.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["from", "to", "type", "properties"])
        writer.writerows((a, b, r, "") for a, b, r in edges)
    return root


def phrase_index(
    root: Path, n_relations: int = 3000, story: Sequence[tuple[str, str, str]] = STORY
) -> Index:
    """The graph built into an index under ``root``."""
    return build_index(write_phrase_graph(root / "tables", n_relations, story), root / "idx")
