"""Read graphs from files: nodes/edges tables (parquet or CSV), triple files, and the
stores extraction tools write (HippoRAG's OpenIE, a passages JSONL: ``_stores.py``).

Every loader reports bad input as :class:`~ark.errors.GraphFormatError` naming the
file and the line (CSV/triples, 1-based, header included) or row (parquet, 0-based).
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from ark.errors import GraphFormatError
from ark.graph._described import is_described_schema_file, read_schema_file
from ark.graph._graph import Graph
from ark.graph._layout import TableLayout, is_ladybug_file, is_postgres_source

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
SOURCE_FORMATS = (
    "parquet",
    "csv",
    "triples",
    "hipporag",
    "passages",
    "graphrag",
    "lightrag",
    "postgres",
    "ladybug",
)
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
    from ark.graph._databases import load_ladybug, load_postgres
    from ark.graph._graphrag import load_graphrag  # (import cycle: they read with ours)
    from ark.graph._lightrag import load_lightrag
    from ark.graph._stores import load_hipporag, load_passages

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
    from ark.graph._graphrag import is_graphrag_dir  # (import cycle)
    from ark.graph._lightrag import is_lightrag_dir
    from ark.graph._stores import is_hipporag_dir, sniff_file_format

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


# -- nodes/edges tables --------------------------------------------------------------


class Rows:
    """Where a table's rows came from, so that an error names the row a user can find.

    A file's row is its CSV line (header included) or parquet row; a database's row is
    named by its key column's values, since a table's rows have no fixed position.
    """

    def __init__(
        self,
        source: str | Path,
        *,
        offset: int = 0,
        unit: str = "row",
        keys: Callable[[int], str] | None = None,
    ) -> None:
        self.source = str(source)
        self.offset = offset
        self.unit = unit
        self.keys = keys

    @classmethod
    def of_file(cls, path: Path) -> Rows:
        """A CSV's rows by line (its header is line 1), a parquet file's by 0-based row."""
        if path.suffix == ".csv":
            return cls(path, offset=2, unit="line")
        return cls(path)

    def error(self, message: str, row: int | None = None) -> GraphFormatError:
        if row is None:
            return GraphFormatError(self.source, message)
        if self.keys is not None:
            return GraphFormatError(f"{self.source} (row {self.keys(row)})", message)
        return GraphFormatError(self.source, message, row + self.offset, self.unit)


def load_tables(nodes_path: Path, edges_path: Path) -> Graph:
    """Nodes ``id, name, type, properties`` and edges ``from, to, type, properties``.

    ``properties`` is a JSON object (string); its entries become the node's text
    fields. Node indices follow the row order of the nodes table.
    """
    nodes = _read_table(nodes_path, ["id", "name", "type"])
    edges = _read_table(edges_path, ["from", "to", "type"])
    return tables_to_graph(nodes, edges, Rows.of_file(nodes_path), Rows.of_file(edges_path))


def tables_to_graph(nodes: pa.Table, edges: pa.Table, node_rows: Rows, edge_rows: Rows) -> Graph:
    """The graph of a nodes table (``id, name, type``, optional ``properties``) and an
    edges table (``from, to, type``), whatever they were read from: files and
    databases build through here, so the same rows give the same graph."""
    if nodes.num_rows == 0:
        raise node_rows.error("no nodes (only a header, or an empty table)")
    ids = _id_column(nodes.column("id").combine_chunks(), node_rows)
    unique = pc.unique(ids)
    if len(unique) != len(ids):
        counts = pc.value_counts(ids)
        dup = counts.filter(pc.greater(counts.field("counts"), 1))[0]["values"].as_py()
        same = np.asarray(pc.equal(ids, pa.scalar(dup, ids.type)).to_numpy(zero_copy_only=False))
        row = int(np.flatnonzero(same)[1])  # the second occurrence is the duplicate
        raise node_rows.error(f"duplicate node id {dup!r}", row)

    names = _string_column(nodes, "name", node_rows)
    type_col = _string_column(nodes, "type", node_rows)
    type_names, type_codes = _encode(type_col)
    texts = _properties_text(nodes, node_rows)

    endpoints = []
    for col in ("from", "to"):
        values = edges.column(col).combine_chunks()
        if values.type != ids.type:
            try:
                values = values.cast(ids.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise edge_rows.error(f"column {col!r} cannot be read as node ids ({exc})") from exc
        position = pc.index_in(values, value_set=ids)
        if position.null_count:
            row = _first_true(position.is_null())
            raise edge_rows.error(
                f"edge {col!r} refers to unknown node id {values[row].as_py()!r}", row
            )
        endpoints.append(position.to_numpy(zero_copy_only=False).astype(np.int64))
    rel_col = _string_column(edges, "type", edge_rows)
    rel_names, rel_codes = _encode(rel_col)
    return Graph.from_edges(
        names=names,
        node_type=type_codes,
        node_type_names=type_names,
        texts=texts,
        src=endpoints[0],
        dst=endpoints[1],
        rel=rel_codes,
        relation_names=rel_names,
    )


def _id_column(ids: pa.Array, rows: Rows) -> pa.Array:
    """Node ids as integers or strings; a float column only when every id is whole."""
    if ids.null_count:
        raise rows.error("node id is empty", _first_true(ids.is_null()))
    if pa.types.is_floating(ids.type):
        values = ids.to_numpy(zero_copy_only=False)
        bad = np.flatnonzero(~np.isfinite(values) | (values != np.round(values)))
        if len(bad):
            bad_id = float(values[bad[0]])
            raise rows.error(f"node id {bad_id!r} is not a whole number", int(bad[0]))
        return ids.cast(pa.int64())
    if not (
        pa.types.is_integer(ids.type)
        or pa.types.is_string(ids.type)
        or pa.types.is_large_string(ids.type)
    ):
        raise rows.error(f"node ids must be integers or strings, the 'id' column holds {ids.type}")
    return ids


def _read_table(path: Path, required: list[str]) -> pa.Table:
    if not path.exists():
        raise GraphFormatError(path, "file not found")
    try:
        if path.suffix == ".parquet":
            table = pq.read_table(path)
        else:
            table = pacsv.read_csv(
                path,
                convert_options=pacsv.ConvertOptions(
                    column_types={"properties": pa.string(), "name": pa.string()},
                    strings_can_be_null=False,
                ),
            )
    except (pa.ArrowInvalid, OSError) as exc:
        raise GraphFormatError(path, _arrow_message(exc)) from exc
    missing = [c for c in required if c not in table.column_names]
    if missing:
        raise GraphFormatError(
            path,
            f"missing column(s) {missing}; found {table.column_names}",
            1 if path.suffix == ".csv" else None,
        )
    return table


def _arrow_message(exc: Exception) -> str:
    # pyarrow's CSV errors already carry "Row #N"; keep them whole.
    return str(exc).strip().replace("\n", " ")


def _string_column(table: pa.Table, name: str, rows: Rows) -> pa.Array:
    col = table.column(name).combine_chunks()
    if col.null_count:
        raise rows.error(f"empty {name!r}", _first_true(col.is_null()))
    try:
        col = col.cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise rows.error(f"column {name!r} is not text ({col.type}: {exc})") from None
    empty = pc.equal(pc.utf8_length(col), 0)
    if pc.any(empty).as_py():
        raise rows.error(f"empty {name!r}", _first_true(empty))
    nul = pc.match_substring(col, "\x00")
    if pc.any(nul).as_py():
        raise rows.error(f"NUL byte in {name!r} (a binary value?)", _first_true(nul))
    return col


def _properties_text(table: pa.Table, rows: Rows) -> list[str]:
    if "properties" not in table.column_names:
        return [""] * table.num_rows
    texts: list[str] = []
    for row, raw in enumerate(table.column("properties").to_pylist()):
        if raw is None or raw == "":
            texts.append("")
            continue
        try:
            props = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError as exc:
            raise rows.error(f"'properties' is not valid JSON ({exc.msg})", row) from exc
        if not isinstance(props, dict):
            raise rows.error("'properties' must be a JSON object", row)
        texts.append(properties_to_text(props))
    return texts


def properties_to_text(props: dict[str, object]) -> str:
    """``key: value`` lines; lists are joined, empty values and ``_private`` keys dropped."""
    lines = []
    for key, value in props.items():
        if key.startswith("_") or value is None or value == "" or value == []:
            continue
        if isinstance(value, list):
            value = "; ".join(str(v) for v in value)
        elif isinstance(value, dict):
            value = json.dumps(value, ensure_ascii=False)
        lines.append(f"{key}: {value}")
    return "\n".join(lines)


def _encode(col: pa.Array) -> tuple[list[str], np.ndarray]:
    encoded = pc.dictionary_encode(col)
    names = [str(v) for v in encoded.dictionary.to_pylist()]
    return names, encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)


def _first_true(mask: pa.Array) -> int:
    return int(np.flatnonzero(np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool))[0])


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


def text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a UTF-8 text file, transparently gunzipping ``*.gz``.

    Every way a file can fail to be text is a :class:`GraphFormatError` with the file
    and line: invalid UTF-8, a NUL byte (a binary file), a ``.gz`` that is not gzip or
    is cut short. A UTF-8 byte-order mark at the start is dropped, not kept in a name.
    """
    lineno = 0
    try:
        with gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb") as f:
            for lineno, raw in enumerate(f, start=1):
                if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
                if b"\x00" in raw:
                    raise GraphFormatError(path, "NUL byte in the line (a binary file?)", lineno)
                try:
                    yield lineno, raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise GraphFormatError(
                        path,
                        f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at column {exc.start + 1} "
                        "(a binary file, or another encoding?)",
                        lineno,
                    ) from None
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise GraphFormatError(path, f"not a valid gzip file ({exc})", lineno + 1) from None
    except EOFError:
        raise GraphFormatError(
            path, "the gzip file is cut short (truncated download or copy?)", lineno + 1
        ) from None
    except OSError as exc:
        raise GraphFormatError(path, exc.strerror or str(exc)) from None


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
