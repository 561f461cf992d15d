"""Read graphs from files: nodes/edges tables (parquet or CSV), triple files, and the
stores extraction tools write (HippoRAG's OpenIE, a passages JSONL: ``_stores.py``).

Every loader reports bad input as :class:`~ark.errors.GraphFormatError` naming the
file and the line (CSV/triples, 1-based, header included) or row (parquet, 0-based).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np

from ark.errors import GraphFormatError
from ark.graph._databases import load_ladybug, load_postgres
from ark.graph._described import is_described_schema_file, read_schema_file
from ark.graph._graph import Graph
from ark.graph._graphrag import is_graphrag_dir, load_graphrag
from ark.graph._layout import TableLayout, is_ladybug_file, is_postgres_source
from ark.graph._lightrag import is_lightrag_dir, load_lightrag
from ark.graph._stores import is_hipporag_dir, load_hipporag, load_passages, sniff_file_format
from ark.graph._tables import load_tables, text_lines

SourceFormat = Literal[
    "auto",
    "parquet",
    "csv",
    "triples",
    "hipporag",
    "passages",
    "graphrag",
    "lightrag",
    "postgres",
    "ladybug",
]
#: The formats ``fmt`` may name (besides ``auto``), for messages and the CLI.
SOURCE_FORMATS: tuple[str, ...] = get_args(SourceFormat)[1:]
#: The formats whose nodes are rows that state each node's type and text (an update
#: from them names existing nodes with their text, not as bare references).
TABLE_FORMATS = ("parquet", "csv", "postgres", "ladybug")

#: Relation schemas recognised by their set of relations, so that a well-known triple
#: file gets meaningful node types without a schema file. Datasets add theirs
#: (``ark.datasets`` registers MetaQA's when ``ark`` is imported); the graph package
#: itself knows none.
KNOWN_SCHEMAS: dict[str, dict[str, tuple[str, str]]] = {}


def register_known_schema(name: str, schema: dict[str, tuple[str, str]]) -> None:
    """Type the nodes of any triple file whose relations are all in ``schema``
    (relation -> (head type, tail type)), as if given as its schema file."""
    KNOWN_SCHEMAS[name] = dict(schema)


#: Readers of what a dataset's converter wrote beside its tables (a directory source):
#: name -> reader(directory) -> metadata or None. An index build records each found
#: under its name; the dataset adapters register them (the graph knows no dataset).
SOURCE_META: dict[str, Callable[[Path], dict[str, Any] | None]] = {}


def register_source_meta(name: str, reader: Callable[[Path], dict[str, Any] | None]) -> None:
    """Record, on every index build from a directory, ``reader(directory)`` under
    ``name`` in the index metadata when it returns something."""
    SOURCE_META[name] = reader


def read_source_meta(source: str | Path) -> dict[str, Any]:
    """What the registered readers find beside a directory source's tables."""
    path = Path(source)
    if not path.is_dir():
        return {}
    found = {name: read(path) for name, read in SOURCE_META.items()}
    return {name: meta for name, meta in found.items() if meta is not None}


DEFAULT_NODE_TYPE = "entity"


def load_graph(
    source: str | Path,
    fmt: SourceFormat = "auto",
    *,
    schema_file: str | Path | None = None,
    types_file: str | Path | None = None,
    layout: TableLayout | None = None,
) -> Graph:
    """Load a graph from ``source``.

    ``source`` is a directory holding ``nodes.parquet``/``edges.parquet`` (or
    ``nodes.csv``/``edges.csv``), or a triple file (``head|relation|tail`` or
    tab-separated); or, built in the document layout (:mod:`ark.graph._documents`), a
    HippoRAG store (``hipporag``: a folder with its corpus and OpenIE JSON, or the
    OpenIE JSON), a passages JSONL (``passages``), Microsoft GraphRAG's output folder
    (``graphrag``: its text units, entities and relationships tables) or a LightRAG
    working directory (``lightrag``: its chunk store and entity GraphML); or a
    database (:mod:`ark.graph._databases`): a PostgreSQL connection string
    (``postgres``: a nodes and an edges table) or a LadybugDB file (``ladybug``), whose
    tables and columns ``layout`` names. ``schema_file``/``types_file`` only apply to
    triples.
    """
    if is_postgres_source(source) or fmt == "postgres":
        return load_postgres(str(source), layout)
    path = Path(source)
    if not path.exists():
        raise GraphFormatError(path, "no such file or directory")
    fmt = detect_format(path) if fmt == "auto" else fmt
    if fmt == "ladybug":
        return load_ladybug(path, layout)
    if fmt == "hipporag":
        return load_hipporag(path)
    if fmt == "graphrag":
        return load_graphrag(path)
    if fmt == "lightrag":
        return load_lightrag(path)
    if fmt == "passages":
        if path.is_dir():
            raise GraphFormatError(path, "expected a passages JSONL file, not a directory")
        return load_passages(path)
    if fmt == "triples":
        return load_triples(path, schema_file=schema_file, types_file=types_file)
    if fmt in ("parquet", "csv"):
        if not path.is_dir():
            raise GraphFormatError(path, f"expected a directory with nodes.{fmt} and edges.{fmt}")
        return load_tables(path / f"nodes.{fmt}", path / f"edges.{fmt}")
    raise GraphFormatError(path, f"unknown format {fmt!r}; use auto, {', '.join(SOURCE_FORMATS)}")


def detect_format(path: str | Path) -> SourceFormat:
    """The format of ``path`` from its layout and first bytes: a PostgreSQL
    connection URI; a folder's node/edge tables or HippoRAG OpenIE JSON; a file's
    LadybugDB database, OpenIE JSON, passages JSONL (a ``.jsonl`` name, or a first
    line that is a JSON object with ``text``) or triples."""
    if is_postgres_source(path):
        return "postgres"
    path = Path(path)
    if path.is_file() and is_ladybug_file(path):
        return "ladybug"
    if path.is_dir():
        for fmt in ("parquet", "csv"):
            if (path / f"nodes.{fmt}").exists() and (path / f"edges.{fmt}").exists():
                return fmt  # type: ignore[return-value]
        if is_hipporag_dir(path):
            return "hipporag"
        if is_graphrag_dir(path):
            return "graphrag"
        if is_lightrag_dir(path):
            return "lightrag"
        raise GraphFormatError(
            path,
            "directory has neither nodes.parquet+edges.parquet, nodes.csv+edges.csv, a "
            "HippoRAG OpenIE JSON, GraphRAG's text_units/entities/relationships tables nor "
            "LightRAG's chunk store and graph",
        )
    return sniff_file_format(path)  # type: ignore[return-value]


# -- triples ------------------------------------------------------------------------


def load_triples(
    path: Path,
    *,
    schema_file: str | Path | None = None,
    types_file: str | Path | None = None,
) -> Graph:
    """``head|relation|tail`` (or tab-separated) lines; one distinct string is one node.

    Node types, in order of precedence: the ``types_file`` (``name<TAB>type``; the
    first line for a name wins); else the relation schema (``schema_file`` with
    ``relation<TAB>head_type<TAB>tail_type`` lines, or a known schema recognised by
    its relations, e.g. MetaQA's). A string that plays several roles gets the type
    of the role it plays in the most triples; ties go to the type listed first in
    the schema. Without either, every node is an ``entity``.
    """
    heads: list[str] = []
    rels: list[str] = []
    tails: list[str] = []
    sep: str | None = None
    for lineno, raw in text_lines(path):
        line = raw.rstrip("\r\n")
        if not line.strip() or line.startswith("#"):
            continue
        if sep is None:
            sep = "\t" if "\t" in line else "|"
        parts = line.split(sep)
        if len(parts) != 3 or not all(p.strip() for p in parts):
            raise GraphFormatError(
                path,
                f"expected 'head{sep}relation{sep}tail' with three non-empty fields, "
                f"got {len(parts)} field(s): {line[:80]!r}",
                lineno,
            )
        heads.append(parts[0].strip())
        rels.append(parts[1].strip())
        tails.append(parts[2].strip())
    if not heads:
        raise GraphFormatError(path, "no triples found")

    node_ids: dict[str, int] = {}
    src = np.fromiter((node_ids.setdefault(h, len(node_ids)) for h in heads), np.int64, len(heads))
    dst = np.fromiter((node_ids.setdefault(t, len(node_ids)) for t in tails), np.int64, len(tails))
    rel_ids: dict[str, int] = {}
    rel = np.fromiter((rel_ids.setdefault(r, len(rel_ids)) for r in rels), np.int64, len(rels))
    names = list(node_ids)
    relation_names = list(rel_ids)

    schema = _relation_schema(schema_file, relation_names)
    if types_file is not None:
        type_of = _read_types_file(Path(types_file))
        schema_types, schema_codes = _types_from_schema(
            len(names), src, dst, rel, relation_names, schema
        )
        per_node = [
            type_of.get(n, schema_types[c]) for n, c in zip(names, schema_codes, strict=True)
        ]
        type_names = list(dict.fromkeys(per_node))
        index = {t: i for i, t in enumerate(type_names)}
        codes = np.fromiter((index[t] for t in per_node), np.int64, len(per_node))
    else:
        type_names, codes = _types_from_schema(len(names), src, dst, rel, relation_names, schema)
    return Graph.from_edges(
        names=names,
        node_type=codes,
        node_type_names=type_names,
        texts=[""] * len(names),
        src=src,
        dst=dst,
        rel=rel,
        relation_names=relation_names,
    )


def _relation_schema(
    schema_file: str | Path | None, relation_names: list[str]
) -> dict[str, tuple[str, str]] | None:
    if schema_file is not None and is_described_schema_file(schema_file):
        # A described schema types the nodes only when it gives every relation's ends.
        entries = read_schema_file(schema_file).get("relations") or {}
        typed = {
            name: (str(e["source_type"]), str(e["target_type"]))
            for name, e in entries.items()
            if e.get("source_type") and e.get("target_type")
        }
        if typed and all(r in typed for r in relation_names):
            return typed
        schema_file = None
    if schema_file is not None:
        path = Path(schema_file)
        schema: dict[str, tuple[str, str]] = {}
        for lineno, raw in text_lines(path):
            if not raw.strip() or raw.startswith("#"):
                continue
            parts = [p.strip() for p in raw.rstrip("\r\n").split("\t")]
            if len(parts) != 3 or not all(parts):
                raise GraphFormatError(
                    path, "expected 'relation<TAB>head_type<TAB>tail_type'", lineno
                )
            schema[parts[0]] = (parts[1], parts[2])
        missing = [r for r in relation_names if r not in schema]
        if missing:
            raise GraphFormatError(path, f"no schema line for relation(s) {missing}")
        return schema
    for known in KNOWN_SCHEMAS.values():
        if set(relation_names) <= set(known):
            return known
    return None


def _types_from_schema(
    n_nodes: int,
    src: np.ndarray,
    dst: np.ndarray,
    rel: np.ndarray,
    relation_names: list[str],
    schema: dict[str, tuple[str, str]] | None,
) -> tuple[list[str], np.ndarray]:
    if schema is None:
        return [DEFAULT_NODE_TYPE], np.zeros(n_nodes, dtype=np.int64)
    # Type names in schema order: that order breaks ties between roles.
    type_names = list(dict.fromkeys(t for pair in schema.values() for t in pair))
    index = {t: i for i, t in enumerate(type_names)}
    head_type = np.array([index[schema[r][0]] for r in relation_names], dtype=np.int64)
    tail_type = np.array([index[schema[r][1]] for r in relation_names], dtype=np.int64)
    n_types = len(type_names)
    # votes[node, type] = triples in which the node plays a role of that type.
    votes = np.zeros(n_nodes * n_types, dtype=np.int64)
    np.add.at(votes, src * n_types + head_type[rel], 1)
    np.add.at(votes, dst * n_types + tail_type[rel], 1)
    codes = votes.reshape(n_nodes, n_types).argmax(axis=1)  # argmax: first max wins
    return type_names, codes


def _read_types_file(path: Path) -> dict[str, str]:
    type_of: dict[str, str] = {}
    for lineno, raw in text_lines(path):
        if not raw.strip():
            continue
        parts = raw.rstrip("\r\n").split("\t")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            raise GraphFormatError(path, "expected 'name<TAB>type'", lineno)
        type_of.setdefault(parts[0].strip(), parts[1].strip())
    return type_of
