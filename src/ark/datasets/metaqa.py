"""MetaQA (Zhang et al., 2018): its movie graph's relation schema and its question files.

The bundled graph (``ark/data/metaqa_kb.txt.gz``) is MetaQA's ``kb.txt``; the schema
below gives its nodes types when it is loaded as triples (registered with
:data:`ark.graph.KNOWN_SCHEMAS`, which recognises a triple file by its relations).
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ark.datasets._queries import Query, name_lookup
from ark.errors import ArkError

if TYPE_CHECKING:
    from ark.index import Index

_BRACKETS = re.compile(r"\[([^\]]+)\]")

#: MetaQA's relations: (head type, tail type).
METAQA_SCHEMA: dict[str, tuple[str, str]] = {
    "directed_by": ("movie", "person"),
    "written_by": ("movie", "person"),
    "starred_actors": ("movie", "person"),
    "release_year": ("movie", "year"),
    "in_language": ("movie", "language"),
    "has_tags": ("movie", "tag"),
    "has_genre": ("movie", "genre"),
    "has_imdb_votes": ("movie", "votes"),
    "has_imdb_rating": ("movie", "rating"),
}


def default_metaqa_dir() -> Path:
    """Where MetaQA's question files are when ``--data-dir`` is not given:
    ``$ARK_METAQA_DIR``, else ``$ARK_DATA_DIR/metaqa``, else ``shared/data/metaqa`` in
    the working directory or one above it (a checkout beside the shared data).

    Never a path relative to the installed package, which means nothing once installed.
    """
    env = os.environ.get("ARK_METAQA_DIR")
    if env:
        return Path(env)
    data = os.environ.get("ARK_DATA_DIR")
    if data:
        return Path(data) / "metaqa"
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        candidate = folder / "shared" / "data" / "metaqa"
        if candidate.is_dir():
            return candidate
    raise ArkError(
        "MetaQA's question files not found: pass --data-dir (the folder holding 1-hop/, "
        "2-hop/, 3-hop/) or set ARK_METAQA_DIR"
    )


def load_metaqa(data_dir: str | Path, hop: int, *, split: str = "dev", index: Index) -> list[Query]:
    """``{hop}-hop/qa_{split}.txt`` (``question<TAB>a1|a2``) with its qtype file.

    The topic entity's square brackets are removed and HTML entities read (the
    paraphrased ``dev_ntm`` file writes every apostrophe as ``&apos;``): the agent
    reads the natural question. Answer names map to nodes by exact string match.
    """
    root = Path(data_dir) / f"{hop}-hop"
    qa = root / f"qa_{split}.txt"
    if not qa.exists():
        raise ArkError(f"MetaQA file {qa} not found; point --data-dir at the MetaQA folder")
    qtype_file = root / f"qa_{split}_qtype.txt"
    qtypes = qtype_file.read_text(encoding="utf-8").splitlines() if qtype_file.exists() else []
    lookup = name_lookup(index)
    queries = []
    with qa.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            line = line.rstrip("\n")
            if not line:
                continue
            question, sep, answers = line.partition("\t")
            if not sep or not answers:
                raise ArkError(f"{qa}:{lineno}: expected 'question<TAB>answer|answer'")
            gold: set[int] = set()
            missing = []
            for name in answers.split("|"):
                if name in lookup:
                    gold.update(lookup[name])
                else:
                    missing.append(name)
            queries.append(
                Query(
                    id=f"{hop}-hop/{split}/{lineno}",
                    text=html.unescape(_BRACKETS.sub(r"\1", question)),
                    gold=frozenset(gold),
                    qtype=qtypes[lineno - 1] if lineno - 1 < len(qtypes) else None,
                    missing=tuple(missing),
                )
            )
    return queries
