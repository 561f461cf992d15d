"""Read Microsoft GraphRAG's output tables as a graph in the document layout.

``ark index build OUTPUT --format graphrag`` takes the folder GraphRAG's indexing
writes (its ``output/``), whose parquet tables hold what a model extracted from the
user's documents:

- ``text_units.parquet`` (``id``, ``text``, ``document_id`` or ``document_ids``): the
  chunks, which become ``passage`` nodes, named by their document's title (from
  ``documents.parquet`` when it is there) and their place in it;
- ``entities.parquet`` (``title`` — ``name`` in GraphRAG 0.x —, ``type``,
  ``description``, ``text_unit_ids``): ``entity`` nodes, one per :func:`entity_key`
  of the title; their text is the title, then the description GraphRAG wrote and the
  type, so that global search reads what GraphRAG's own local search reads; each
  entity is ``mentions``-linked from the chunks it was extracted from;
- ``relationships.parquet`` (``source``, ``target``, ``description``,
  ``text_unit_ids``): one edge per relationship, from source to target. GraphRAG
  writes no relation label, only a description in sentences; the edge's relation is
  that description's first sentence (cut to :data:`MAX_RELATION_CHARS` at a word),
  so that every observation shows what links the two, as the relation phrases of the
  other document formats do.

The tables of GraphRAG 0.x (``create_final_*.parquet``) are read too. As with the
other stores, a row that is the model's output gone wrong (an entity without a
title, a relationship without an end) is skipped and counted in the index's notes;
a table or column missing, or a chunk without an id or text, is a
:class:`~ark.errors.GraphFormatError` naming the file (and the row).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from ark.errors import GraphFormatError
from ark.graph._documents import entity_key, passage_name, relation_key
from ark.graph._graph import Graph
from ark.graph._stores import _Builder as Builder
from ark.graph._tables import read_table

#: Each table under the names GraphRAG's releases give it: 1.x and later, then 0.x.
TABLES = {
    "text_units": ("text_units.parquet", "create_final_text_units.parquet"),
    "entities": ("entities.parquet", "create_final_entities.parquet"),
    "relationships": ("relationships.parquet", "create_final_relationships.parquet"),
    "documents": ("documents.parquet", "create_final_documents.parquet"),
}
#: The tables a GraphRAG output must have (``documents`` only names the chunks).
REQUIRED = ("text_units", "entities", "relationships")
#: Longest relation phrase taken from a relationship's description.
MAX_RELATION_CHARS = 160
#: Fewest words of a description's first sentence (a shorter one is an abbreviation's
#: end: "Dr.", "U.S.").
MIN_SENTENCE_WORDS = 4
#: The relation of a relationship GraphRAG gave no description.
RELATED = "related to"

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def graphrag_tables(folder: Path) -> dict[str, Path]:
    """The GraphRAG tables present in ``folder``, by their role."""
    found = {}
    for role, names in TABLES.items():
        for name in names:
            if (folder / name).is_file():
                found[role] = folder / name
                break
    return found


def is_graphrag_dir(path: Path) -> bool:
    """Whether a folder holds GraphRAG's text units, entities and relationships."""
    return path.is_dir() and all(role in graphrag_tables(path) for role in REQUIRED)


def relation_phrase(description: object) -> str:
    """A relationship's relation: the first sentence of its description, cut at a word
    to :data:`MAX_RELATION_CHARS`; :data:`RELATED` when it has none."""
    if not isinstance(description, str) or not description.strip():
        return RELATED
    parts = _SENTENCE_END.split(" ".join(description.split()))
    first = parts[0]
    for more in parts[1:]:  # "Dr. Hayes ...": an abbreviation is no sentence
        if len(first.split()) >= MIN_SENTENCE_WORDS:
            break
        first += " " + more
    first = first.rstrip(" .")
    if len(first) > MAX_RELATION_CHARS:
        first = first[:MAX_RELATION_CHARS].rsplit(" ", 1)[0].rstrip(",;: ") + " …"
    return relation_key(first) or RELATED


def _rows(path: Path, required: list[str], optional: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    table = read_table(path, required)
    keep = [c for c in (*required, *optional) if c in table.column_names]
    return table.select(keep).to_pylist()  # type: ignore[no-any-return]


def _ids(value: Any) -> list[str]:
    """A list-of-ids cell (a list, or GraphRAG 0.x's numpy array) as strings."""
    if value is None or isinstance(value, str):
        return [value] if value else []
    return [str(v) for v in value if v is not None]


def load_graphrag(folder: str | Path) -> Graph:
    """GraphRAG's output folder as a graph in the document layout (see the module)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise GraphFormatError(folder, "expected GraphRAG's output folder, not a file")
    tables = graphrag_tables(folder)
    missing = [TABLES[role][0] for role in REQUIRED if role not in tables]
    if missing:
        raise GraphFormatError(
            folder,
            f"not a GraphRAG output folder: no {', '.join(missing)} (nor its 0.x name "
            "create_final_*.parquet)",
        )
    builder = Builder()
    titles: dict[str, str] = {}
    if "documents" in tables:
        for row in _rows(tables["documents"], ["id"], ("title",)):
            if row["id"] is not None and isinstance(row.get("title"), str):
                titles[str(row["id"])] = row["title"]

    units_path = tables["text_units"]
    unit_node: dict[str, int] = {}
    per_doc: Counter[str] = Counter()
    units = _rows(units_path, ["id", "text"], ("document_id", "document_ids"))
    for row_no, row in enumerate(units):
        uid, text = row["id"], row["text"]
        if uid is None or not isinstance(text, str) or not text.strip():
            what = "id" if uid is None else "text"
            raise GraphFormatError(units_path, f"a text unit without {what}", row_no, "row")
        docs = _ids(row.get("document_id", row.get("document_ids")))
        doc = docs[0] if docs else None
        position = per_doc[doc] if doc is not None else row_no
        if doc is not None:
            per_doc[doc] += 1
        title = titles.get(doc) if doc is not None else None
        name = f"{title} #{position}" if title is not None else passage_name(None, doc, position)
        unit_node[str(uid)] = builder.passage(name, text.strip())

    ents_path = tables["entities"]
    ent_table = read_table(ents_path, ["text_unit_ids"])
    name_column = next((c for c in ("title", "name") if c in ent_table.column_names), None)
    if name_column is None:
        raise GraphFormatError(
            ents_path, f"missing column 'title' (or 'name'); found {ent_table.column_names}"
        )
    descriptions = 0
    for row_no, row in enumerate(
        ent_table.select(
            [
                c
                for c in (name_column, "type", "description", "text_unit_ids")
                if c in ent_table.column_names
            ]
        ).to_pylist()
    ):
        title = row[name_column]
        if not isinstance(title, str) or not entity_key(title):
            builder.skip("entity", f"{ents_path.name} row {row_no}", title)
            continue
        node = builder.entity(title)
        description = row.get("description")
        said = [description] if isinstance(description, str) else []
        descriptions += builder.set_entity_text(node, title, said, row.get("type"))
        for passage in builder.passages_of(_ids(row.get("text_unit_ids")), unit_node):
            builder.mention(passage, node)

    rels_path = tables["relationships"]
    for row_no, row in enumerate(
        _rows(rels_path, ["source", "target"], ("description", "text_unit_ids"))
    ):
        ends = (row["source"], row["target"])
        if not all(isinstance(e, str) and entity_key(e) for e in ends):
            builder.skip("triple", f"{rels_path.name} row {row_no}", ends)
            continue
        passages = builder.passages_of(_ids(row.get("text_unit_ids")), unit_node)
        builder.triple(ends[0], relation_phrase(row.get("description")), ends[1], passages)

    files = {role: str(path) for role, path in tables.items()}
    return builder.graph(
        "graphrag",
        files,
        {"entity_descriptions": descriptions, "unknown_text_unit_ids": builder.unknown_chunks},
    )


__all__ = ["is_graphrag_dir", "load_graphrag", "relation_phrase"]
