"""Tables and text files as the loaders read them: the nodes/edges tables every
tabular source builds through (:func:`tables_to_graph`: files, PostgreSQL and
LadybugDB alike, so the same rows give the same graph), where a bad row is named
(:class:`Rows`), and the lines of a text file (:func:`text_lines`).

Its own module so that every reader of a format (``_loaders``, ``_stores``,
``_graphrag``, ``_databases``) imports it, and none imports the dispatch.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from ark.errors import GraphFormatError
from ark.graph._graph import Graph


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
    nodes = read_table(nodes_path, ["id", "name", "type"])
    edges = read_table(edges_path, ["from", "to", "type"])
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


def read_table(path: Path, required: list[str]) -> pa.Table:
    """A parquet or CSV table with its ``required`` columns, or an error naming the file."""
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


# -- text files ---------------------------------------------------------------------


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
