"""Small helpers shared by tests (importable thanks to pytest's pythonpath)."""

from __future__ import annotations

import os
from pathlib import Path

from ark.index import Index

REPO = Path(__file__).resolve().parents[1]


def metaqa_dir() -> Path:
    """``$ARK_METAQA_DIR``, else the shared MetaQA folder beside the repository."""
    return Path(os.environ.get("ARK_METAQA_DIR", REPO.parent / "shared" / "data" / "metaqa"))


def node(index: Index, name: str) -> int:
    """The index of the node called ``name``."""
    return index.graph.names.to_pylist().index(name)
