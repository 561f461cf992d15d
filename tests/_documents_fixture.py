"""A tiny graph built from documents, written by hand in the layout of
``ark.graph._documents`` (passage and entity nodes, ``mentions``, free-text relations),
and question files about it in MuSiQue's and HotpotQA's record formats.

The world is invented (no dataset's text): eight passages, one title ("Mira Dunfield")
shared by two passages, and one paragraph ("Orvin River") stored as two chunks, as
``ark ingest`` would cut a long paragraph. The "Velmar" paragraph of the questions is
not in the graph, so a loader must count it missing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from _helpers import index_of_graph
from ark.graph import ENTITY_TYPE, MENTIONS, PASSAGE_TYPE, Graph, passage_text
from ark.index import Index, open_index

#: (title, text) of each passage node, in node order (0..7).
PASSAGES = [
    ("Lake Orvin", "Lake Orvin is a glacial lake in Tarsk County. It feeds the Orvin River."),
    ("Tarsk County", "Tarsk County is a county of the state of Velmar. Its seat is Bellhaven."),
    ("Mira Dunfield", "Mira Dunfield was a landscape painter, born in Bellhaven in 1901."),
    ("Bellhaven", "Bellhaven is a market town in Tarsk County."),
    ("Mira Dunfield", "Her later works were shown at the Corran Gallery from 1950."),
    ("Corran Gallery", "The Corran Gallery is an art museum in the harbour city of Port Selby."),
    ("Orvin River", "The Orvin River flows north from Lake Orvin"),
    ("Orvin River", "through the marshes of Tarsk County to the sea at Port Selby."),
]
#: The paragraph the two "Orvin River" chunks were cut from.
ORVIN_RIVER = (
    "The Orvin River flows north from Lake Orvin through the marshes of Tarsk County "
    "to the sea at Port Selby."
)
ENTITIES = ["Tarsk County", "Bellhaven", "Mira Dunfield", "Corran Gallery", "Port Selby"]
#: (head entity, relation phrase, tail entity), indices into ENTITIES.
TRIPLES = [(1, "located in", 0), (2, "born in", 1), (3, "located in", 4)]
#: Which entities each passage mentions.
MENTIONED = {1: [0, 1], 2: [2, 1], 3: [1, 0], 4: [2, 3], 5: [3, 4], 7: [0, 4]}


def build_document_index(out: Path) -> Index:
    """Write the tiny document graph's index to ``out`` and open it."""
    n_p = len(PASSAGES)
    names = [t for t, _ in PASSAGES] + ENTITIES
    texts = [passage_text(t, x) for t, x in PASSAGES] + ENTITIES
    types = np.array([0] * n_p + [1] * len(ENTITIES))
    relations = [MENTIONS, "located in", "born in"]
    src, dst, rel = [], [], []
    for p, ents in MENTIONED.items():
        for e in ents:
            src.append(p), dst.append(n_p + e), rel.append(0)
    for h, phrase, t in TRIPLES:
        src.append(n_p + h), dst.append(n_p + t), rel.append(relations.index(phrase))
    graph = Graph.from_edges(
        names=names,
        node_type=types,
        node_type_names=[PASSAGE_TYPE, ENTITY_TYPE],
        texts=texts,
        src=np.array(src),
        dst=np.array(dst),
        rel=np.array(rel),
        relation_names=relations,
    )
    index_of_graph(graph, out, source="tests/_documents_fixture.py")
    return open_index(out)


def _paragraph(title: str, text: str, supporting: bool) -> dict[str, Any]:
    return {"idx": 0, "title": title, "paragraph_text": text, "is_supporting": supporting}


VELMAR = ("Velmar", "Velmar is an inland state whose capital is Aldmere.")

#: MuSiQue records: supporting passages by (title, text), distractors, answers.
MUSIQUE = [
    {
        "id": "2hop__1_2",
        "question": "In which county is the town where the painter Mira Dunfield was born?",
        "answer": "Tarsk County",
        "answer_aliases": ["Tarsk"],
        "paragraphs": [
            _paragraph(*PASSAGES[0], False),
            _paragraph(*PASSAGES[2], True),
            _paragraph(*PASSAGES[3], True),
        ],
        # one step a hop, in order; the last reads the paragraph stating the answer
        "question_decomposition": [
            {"question": "Where was Mira Dunfield born?", "paragraph_support_idx": 1},
            {"question": "#1 >> county", "paragraph_support_idx": 2},
        ],
    },
    {
        "id": "2hop__3_4",
        "question": "In what city is the gallery that showed Mira Dunfield's later works?",
        "answer": "Port Selby",
        "answer_aliases": [],
        "paragraphs": [
            _paragraph(*PASSAGES[2], False),
            # the shared title: only the text tells this passage from the other one
            _paragraph(*PASSAGES[4], True),
            _paragraph(*PASSAGES[5], True),
        ],
        # the steps need not follow the paragraphs' order: the last step's is the answer's
        "question_decomposition": [
            {"question": "gallery that showed Mira Dunfield's works", "paragraph_support_idx": 2},
            {"question": "#1 >> city", "paragraph_support_idx": 1},
        ],
    },
    {
        "id": "3hop1__5_6_7",
        "question": "What state's capital lies upriver of the river that Lake Orvin feeds?",
        "answer": "Aldmere",
        "paragraphs": [
            _paragraph(*PASSAGES[0], True),
            # spacing changed: still the same paragraph (stored as two chunks)
            _paragraph("Orvin River", ORVIN_RIVER.replace(" ", "  ", 3) + "\n", True),
            _paragraph(*VELMAR, True),  # not in the graph
        ],
        # the answer's paragraph is the one the graph lacks
        "question_decomposition": [
            {"question": "river Lake Orvin feeds", "paragraph_support_idx": 0},
            {"question": "#1 >> upriver state", "paragraph_support_idx": 1},
            {"question": "capital of #2", "paragraph_support_idx": 2},
        ],
    },
]


def _sentences(text: str) -> list[str]:
    parts = text.split(". ")
    return [p + ("." if i < len(parts) - 1 else "") for i, p in enumerate(parts)]


def _spaced(sentences: list[str]) -> list[str]:
    """HotpotQA's sentences after the first start with a space."""
    return [" " + s if i else s for i, s in enumerate(sentences)]


#: HotpotQA records over the same graph (sentences with HotpotQA's leading spaces).
HOTPOTQA = [
    {
        "_id": "h1",
        "question": "Which county's seat is the birthplace of Mira Dunfield?",
        "answer": "Tarsk County",
        "type": "bridge",
        "supporting_facts": [["Mira Dunfield", 0], ["Tarsk County", 1], ["Tarsk County", 0]],
        "context": [
            ["Mira Dunfield", _sentences(PASSAGES[2][1])],
            ["Tarsk County", _spaced(_sentences(PASSAGES[1][1]))],
            ["Lake Orvin", _sentences(PASSAGES[0][1])],
        ],
    },
    {
        "_id": "h2",
        "question": "Is Velmar a state?",
        "answer": "yes",
        "type": "comparison",
        "supporting_facts": [["Velmar", 0]],
        "context": [["Velmar", _sentences(VELMAR[1])]],
    },
]


def write_json(path: Path, records: list[dict[str, Any]], *, jsonl: bool = False) -> Path:
    """``records`` as a JSON array (indented: one key a line) or as JSONL."""
    if jsonl:
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    else:
        path.write_text(json.dumps(records, indent=1), encoding="utf-8")
    return path
