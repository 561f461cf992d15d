"""The picture of the layers (docs/assets/layers.svg) and architecture.md's list of them
say what the layers contract in pyproject.toml says, level by level in its order: a
layer moved, added or renamed in the contract fails here until the docs follow
(``python scripts/draw_layers.py`` draws the picture again)."""

from __future__ import annotations

import importlib.util
import re
import tomllib
from html import unescape
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PICTURE = REPO / "docs" / "assets" / "layers.svg"
ARCHITECTURE = REPO / "docs" / "architecture.md"


def contract_layers() -> list[str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["id"] == "layers")["layers"]


def test_the_picture_draws_the_contract_s_layers_in_order():
    drawn = [unescape(m) for m in re.findall(r'data-layer="([^"]*)"', PICTURE.read_text())]
    assert drawn == contract_layers()


def test_every_package_of_a_level_has_its_box():
    svg = PICTURE.read_text(encoding="utf-8")
    for layer in contract_layers():
        group = re.search(rf'data-layer="{re.escape(layer)}">(.*?)</g>', svg, re.S)
        assert group, layer
        boxes = re.findall(r'font-weight="bold"[^>]*>([^<]*)</text>', group.group(1))
        assert boxes == [name.strip() for name in layer.split("|")]


def test_architecture_lists_the_layers_in_order_and_shows_the_picture():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert "(assets/layers.svg)" in text
    lines = [line.split("  ")[0].strip() for line in text.splitlines()]
    layers = contract_layers()
    start = lines.index(layers[0])
    assert lines[start : start + len(layers)] == layers


def test_the_picture_is_what_the_script_draws_from_the_contract():
    spec = importlib.util.spec_from_file_location("draw_layers", REPO / "scripts/draw_layers.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.contract_layers() == contract_layers()
    assert PICTURE.read_text(encoding="utf-8") == script.draw(contract_layers())


def test_answering_sits_above_retrieval():
    """The one pipeline retrieve -> answer: ``ark.answer`` imports the retriever, and
    nothing that retrieves (the retriever, the strategies) may import the answer step."""
    layers = contract_layers()
    assert layers.index("answer") < layers.index("retrieval") < layers.index("strategies")
