"""Small helpers shared by tests (importable thanks to pytest's pythonpath)."""

from __future__ import annotations

import gzip
import shutil
from importlib.resources import files
from pathlib import Path

from ark.index import Index

REPO = Path(__file__).resolve().parents[1]


def metaqa_dir() -> Path:
    """The tests' MetaQA questions: the first 500 dev questions of each hop, in the
    layout ``ark eval --data-dir`` reads (``tests/data/metaqa/README.md``)."""
    return Path(__file__).resolve().parent / "data" / "metaqa"


def write_metaqa_kb(target: Path) -> Path:
    """The MetaQA graph bundled with the package, written to ``target`` as a plain
    ``head|relation|tail`` file (the same file as MetaQA's ``kb.txt``)."""
    packed = files("ark") / "data" / "metaqa_kb.txt.gz"
    with packed.open("rb") as raw, gzip.open(raw) as src, target.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return target


def node(index: Index, name: str) -> int:
    """The index of the node called ``name``."""
    return index.graph.names.to_pylist().index(name)
