"""Draw docs/assets/layers.svg, the picture of ARK's layers, from the layers contract
in pyproject.toml (``[tool.importlinter]``, id ``layers``).

    python scripts/draw_layers.py            # rewrites docs/assets/layers.svg

Run it after changing the contract; ``tests/test_docs_layers.py`` fails until the
picture is drawn again. A plain SVG, with no font or script to fetch, so the site
builds and reads offline. The captions below are the one hand-written part: a package
new to the contract gets an empty one until it is given its own.
"""

from __future__ import annotations

import sys
import tomllib
from html import escape
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "assets" / "layers.svg"

#: One line under each box.
CAPTIONS = {
    "cli": "the command line",
    "testing": "test models for users",
    "distill": "training data from runs",
    "serve": "MCP, viewer, chat",
    "eval": "runs, metrics, reports",
    "agent": "session, hints, strategies, retriever",
    "answer": "the answer in words",
    "reading": "question → relations, nodes, chain",
    "tools": "search_in_graph, search_in_neighborhood",
    "ingest": "documents → graph",
    "datasets": "MetaQA, STaRK, JSONL",
    "describe": "model → schema words",
    "index": "BM25 + graph arrays on disk, updates",
    "graph": "typed arrays, schema, loaders",
    "words": "tokens, lemmas, stopwords, word matches",
    "llm": "model protocol, backends",
    "cost": "cost of a run",
    "profile": "time of a run",
    "trajectory": "the one record of a retrieval",
}
#: Fill and stroke by a level's place: consumers, retrieval, data, foundation.
BANDS = [
    ("#e8eaf6", "#5c6bc0"),
    ("#e3f2fd", "#1e88e5"),
    ("#e8f5e9", "#43a047"),
    ("#fff8e1", "#f9a825"),
]
FIRST_OF_BAND = {"agent": 1, "ingest": 2, "llm": 3}

W, X0, X1 = 760, 96, 560  # width; the boxes' left and right edges
TOP, H, GAP = 64, 38, 8  # first box's top; a box's height; the gap between levels


def contract_layers(pyproject: Path = REPO / "pyproject.toml") -> list[str]:
    """The layers contract's levels, top to bottom, as written (``"a | b"``)."""
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["id"] == "layers")["layers"]


def draw(layers: list[str]) -> str:
    """The picture of ``layers`` as SVG text."""
    body: list[str] = []
    add = body.append
    band = 0
    for i, layer in enumerate(layers):
        names = [s.strip() for s in layer.split("|")]
        band = FIRST_OF_BAND.get(names[0], band)
        fill, stroke = BANDS[band]
        y = TOP + i * (H + GAP)
        width = (X1 - X0 - (len(names) - 1) * 12) / len(names)
        add(f'<g class="layer" data-layer="{escape(layer)}">')
        for j, name in enumerate(names):
            x = X0 + j * (width + 12)
            add(
                f'<rect x="{x:.0f}" y="{y}" width="{width:.0f}" height="{H}" rx="5" '
                f'fill="{fill}" stroke="{stroke}" stroke-width="1.4"/>'
            )
            add(
                f'<text x="{x + 10:.0f}" y="{y + 16}" font-size="13" font-weight="bold" '
                f'fill="#263238">{escape(name)}</text>'
            )
            add(
                f'<text x="{x + 10:.0f}" y="{y + 31}" font-size="10.5" fill="#455a64">'
                f"{escape(CAPTIONS.get(name, ''))}</text>"
            )
            if j:
                add(f'<text x="{x - 8:.0f}" y="{y + 24}" font-size="14" fill="#90a4ae">|</text>')
        add("</g>")
    bottom = TOP + len(layers) * (H + GAP) - GAP
    mid = (TOP + bottom) // 2
    # Imports point down (left); data flows up (right).
    add(
        f'<line x1="56" y1="{TOP}" x2="56" y2="{bottom}" stroke="#37474f" stroke-width="2.2" '
        'marker-end="url(#head)"/>'
    )
    add(
        f'<text x="44" y="{mid}" font-size="12.5" fill="#37474f" text-anchor="middle" '
        f'transform="rotate(-90 44 {mid})">imports point down: a layer imports only those '
        "below it</text>"
    )
    add(
        f'<line x1="580" y1="{bottom}" x2="580" y2="{TOP}" stroke="#2e7d32" stroke-width="2.2" '
        'marker-end="url(#head)"/>'
    )
    add(
        f'<text x="596" y="{mid}" font-size="12.5" fill="#2e7d32" text-anchor="middle" '
        f'transform="rotate(-90 596 {mid})">data flows up: documents → graph → index → tools '
        "→ agent → eval → cli</text>"
    )
    # The second contract: graph, index and words never import llm.
    level = {name.strip(): i for i, layer in enumerate(layers) for name in layer.split("|")}
    if {"index", "llm"} <= level.keys():
        top = TOP + level["index"] * (H + GAP) + 6
        end = TOP + level["llm"] * (H + GAP) + H // 2
        add(
            f'<path d="M 620 {top} L 630 {top} L 630 {end} L 620 {end}" fill="none" '
            'stroke="#c62828" stroke-width="1.6" stroke-dasharray="5 3"/>'
        )
        add(
            f'<text x="638" y="{(top + end) // 2}" font-size="11" fill="#c62828">'
            "graph, index, words</text>"
        )
        add(
            f'<text x="638" y="{(top + end) // 2 + 14}" font-size="11" fill="#c62828">'
            "never import llm</text>"
        )
    y = bottom + 18
    add(
        f'<rect x="{X0}" y="{y}" width="{X1 - X0}" height="30" rx="5" fill="#fafafa" '
        'stroke="#9e9e9e" stroke-dasharray="4 3"/>'
    )
    add(
        f'<text x="{X0 + 10}" y="{y + 19}" font-size="11.5" fill="#424242">under every layer, '
        "in no contract: ark.errors, ark._safe, ark._coerce</text>"
    )
    y += 56
    for line in (
        "a | b: one level; the two never import each other.  Also checked: no package imports "
        "another's",
        "private module (ark.x._y from outside ark.x); the tool session never imports the hints; "
        "the reading",
        "never imports llm; inside ark.llm, the llama.cpp engine (ark.llm.local) sits behind the "
        "protocol.",
    ):
        add(f'<text x="24" y="{y}" font-size="11.5" fill="#37474f">{escape(line)}</text>')
        y += 17
    height = y - 6
    head = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" '
        f'viewBox="0 0 {W} {height}" font-family="sans-serif" role="img" '
        'aria-labelledby="title desc">',
        '<title id="title">The layers of ARK</title>',
        '<desc id="desc">The layers contract of pyproject.toml, top to bottom: '
        + escape("; ".join(layers))
        + ". A layer imports only the layers below it; names on one level do not import "
        "each other. Data flows up, imports point down.</desc>",
        '<defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#37474f"/></marker></defs>',
        '<rect width="100%" height="100%" fill="#ffffff"/>',
        '<text x="24" y="30" font-size="18" font-weight="bold" fill="#263238">The house: '
        "ARK's layers, as lint-imports checks them</text>",
        '<text x="24" y="50" font-size="12" fill="#546e7a">Top to bottom as in pyproject.toml '
        '([tool.importlinter], contract "layers"); each box is a package or module of ark.</text>',
    ]
    return "\n".join([*head, *body, "</svg>"]) + "\n"


def main() -> None:
    OUT.write_text(draw(contract_layers()), encoding="utf-8")
    sys.stdout.write(f"{OUT.relative_to(REPO)}\n")


if __name__ == "__main__":
    main()
