"""Read graphs where their owners keep them: PostgreSQL tables and LadybugDB.

Two input formats of ``ark index build``, ``ark index add`` and ``ark index sync``
(and :func:`ark.graph.load_graph`):

- ``postgres``: a libpq connection string (``postgresql://user@host/db``, or
  ``host=… dbname=…``) and two tables (or views) laid out as the table files are —
  nodes ``id, name, type, properties?`` and edges ``from, to, type`` — each name
  changeable by a :class:`TableLayout`. Read through psycopg 3 in one read-only,
  repeatable-read transaction, so the nodes and the edges are one snapshot of the
  database. A password is never taken in the connection string (it would be in the
  shell's history and in the index's metadata): libpq reads ``PGPASSWORD`` or a
  ``~/.pgpass`` file (``PGPASSFILE``) itself.
- ``ladybug``: a LadybugDB database file (the maintained fork of Kùzu), opened read
  only. Every node table is a node type and every relationship table a relation; a
  node's name is its ``name`` property (the layout's ``name`` column), or its primary
  key where the table has none; its other properties are its text.

Both build through :func:`ark.graph._tables.tables_to_graph`, the code the table
files take, so the same rows give the same graph; a bad row is a
:class:`~ark.errors.GraphFormatError` naming the table and the row by its key.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from ark.errors import ArkError, GraphFormatError
from ark.graph._graph import Graph
from ark.graph._layout import TableLayout
from ark.graph._tables import Rows, tables_to_graph

#: Rows fetched from the server at a time (a named cursor streams the rest).
_BATCH = 10_000


# -- PostgreSQL -----------------------------------------------------------------------


def postgres_where(conninfo: str) -> str:
    """The connection as a user reads it in an error or the index's metadata: its
    host, port and database, nothing else (the string itself may hold options)."""
    params = _conninfo_params(conninfo)
    host = params.get("host") or "localhost"
    port = f":{params['port']}" if params.get("port") else ""
    user = f"{params['user']}@" if params.get("user") else ""
    return f"postgresql://{user}{host}{port}/{params.get('dbname', '')}"


def _conninfo_params(conninfo: str) -> dict[str, str]:
    psycopg = _import_psycopg()
    try:
        params = psycopg.conninfo.conninfo_to_dict(conninfo)
    except psycopg.ProgrammingError as exc:
        raise ArkError(f"not a PostgreSQL connection string: {exc}") from None
    if params.get("password"):
        raise ArkError(
            "the connection string holds a password: ARK takes none on the command line "
            "(it would stay in the shell's history and the index's metadata); remove it "
            "and set PGPASSWORD, or put it in ~/.pgpass (or the file PGPASSFILE names)"
        )
    return {k: str(v) for k, v in params.items() if v is not None}


def load_postgres(conninfo: str, layout: TableLayout | None = None) -> Graph:
    """The graph in two PostgreSQL tables (see the module's docstring)."""
    psycopg = _import_psycopg()
    from psycopg import sql

    layout = layout or TableLayout()
    where = postgres_where(conninfo)  # also refuses a password
    try:
        conn = psycopg.connect(conninfo, connect_timeout=30)
    except psycopg.OperationalError as exc:
        raise ArkError(f"cannot connect to {where}: {_message(exc)}") from None
    with conn:
        conn.read_only = True
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        with conn.transaction():
            node_cols = [layout.id, layout.name, layout.type]
            found = _pg_columns(conn, layout.nodes_table, where)
            table = f"{where} table {layout.nodes_table}"
            _require(found, node_cols, table)
            with_props = layout.properties in found
            if with_props:
                node_cols.append(layout.properties)
            nodes = _pg_rows(conn, sql, layout.nodes_table, node_cols, [layout.id], table)
            edge_cols = [layout.source, layout.target, layout.relation]
            edge_table = f"{where} table {layout.edges_table}"
            _require(_pg_columns(conn, layout.edges_table, where), edge_cols, edge_table)
            edges = _pg_rows(conn, sql, layout.edges_table, edge_cols, edge_cols, edge_table)
    ids = [_key(v) for v in nodes[0]]
    node_table = pa.table(
        {
            "id": _array(ids),
            "name": _array(nodes[1]),
            "type": _array(nodes[2]),
            **({"properties": _array([_json(v) for v in nodes[3]])} if with_props else {}),
        }
    )
    edge_table_data = pa.table(
        {
            "from": _array([_key(v) for v in edges[0]]),
            "to": _array([_key(v) for v in edges[1]]),
            "type": _array(edges[2]),
        }
    )
    return tables_to_graph(
        node_table,
        edge_table_data,
        Rows(table, keys=_keys([layout.id], [nodes[0]])),
        Rows(edge_table, keys=_keys(edge_cols, edges)),
    )


def _pg_columns(conn: Any, table: str, where: str) -> list[str]:
    """The columns of ``table`` (a relation the user can read), in order."""
    psycopg = _import_psycopg()
    from psycopg import sql

    try:
        with conn.cursor() as cur:
            cur.execute(sql.SQL("SELECT * FROM {} LIMIT 0").format(_identifier(sql, table)))
            return [d.name for d in cur.description or ()]
    except psycopg.Error as exc:
        raise GraphFormatError(f"{where} table {table}", _message(exc)) from None


def _pg_rows(
    conn: Any, sql: Any, table: str, columns: list[str], order: list[str], where: str
) -> list[list[Any]]:
    """``columns`` of every row of ``table`` ordered by ``order``, column by column,
    streamed from a server-side cursor."""
    psycopg = _import_psycopg()
    query = sql.SQL("SELECT {} FROM {} ORDER BY {}").format(
        sql.SQL(", ").join(sql.Identifier(c) for c in columns),
        _identifier(sql, table),
        sql.SQL(", ").join(sql.Identifier(c) for c in order),
    )
    out: list[list[Any]] = [[] for _ in columns]
    try:
        with conn.cursor(name="ark_read") as cur:
            cur.itersize = _BATCH
            cur.execute(query)
            while batch := cur.fetchmany(_BATCH):
                for row in batch:
                    for col, value in zip(out, row, strict=True):
                        col.append(value)
    except psycopg.Error as exc:
        raise GraphFormatError(where, _message(exc)) from None
    return out


def _identifier(sql: Any, table: str) -> Any:
    """A possibly schema-qualified table name, quoted part by part."""
    return sql.Identifier(*table.split("."))


def _require(found: Sequence[str], needed: Sequence[str], where: str) -> None:
    missing = [c for c in needed if c not in found]
    if missing:
        raise GraphFormatError(where, f"missing column(s) {missing}; found {list(found)}")


def _message(exc: Exception) -> str:
    """An error's message on one line (a driver's may span several)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def _import_psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise ArkError(
            "PostgreSQL sources need psycopg 3: pip install 'ark-retriever[postgres]'"
        ) from None
    return psycopg


# -- LadybugDB ------------------------------------------------------------------------


def load_ladybug(path: str | Path, layout: TableLayout | None = None) -> Graph:
    """The graph in a LadybugDB database file (see the module's docstring)."""
    lb = _import_ladybug()
    layout = layout or TableLayout()
    file = Path(path)
    try:
        db = lb.Database(str(file), read_only=True)
        conn = lb.Connection(db)
    except RuntimeError as exc:
        raise GraphFormatError(file, f"cannot open the database: {_message(exc)}") from None
    try:
        return _read_ladybug(conn, file, layout)
    finally:  # the file stays the owner's: let go of it at once
        conn.close()
        db.close()


def _read_ladybug(conn: Any, file: Path, layout: TableLayout) -> Graph:
    """:func:`load_ladybug`'s reading, over an open connection."""

    def query(cypher: str) -> list[list[Any]]:
        try:
            return list(conn.execute(cypher).get_all())
        except RuntimeError as exc:
            raise GraphFormatError(file, f"{_message(exc)} (in {cypher!r})") from None

    tables = query("CALL show_tables() RETURN id, name, type ORDER BY id")
    node_tables = [str(name) for _, name, kind in tables if kind == "NODE"]
    rel_tables = [str(name) for _, name, kind in tables if kind == "REL"]
    if not node_tables:
        raise GraphFormatError(file, "the database has no node tables")

    ids: list[int] = []
    names: list[Any] = []
    types: list[str] = []
    props: list[str | None] = []
    keys: list[str] = []
    position: dict[tuple[str, Any], int] = {}
    primary: dict[str, str] = {}
    for label in node_tables:
        info = query(f"CALL table_info({_cypher_string(label)}) RETURN *")
        columns = [str(row[1]) for row in info]
        pk = next(str(row[1]) for row in info if row[4])
        primary[label] = pk
        name_col = layout.name if layout.name in columns else pk
        text_cols = [c for c in columns if c not in (pk, name_col)]
        returned = ", ".join(f"n.{_cypher_name(c)}" for c in [pk, name_col, *text_cols])
        for row in query(
            f"MATCH (n:{_cypher_name(label)}) RETURN {returned} ORDER BY n.{_cypher_name(pk)}"
        ):
            key, name, *values = row
            position[(label, key)] = len(ids)
            ids.append(len(ids))
            names.append(name if name is None or isinstance(name, str) else str(name))
            types.append(label)
            fields_ = {c: v for c, v in zip(text_cols, values, strict=True)}
            props.append(json.dumps(fields_, ensure_ascii=False, default=str))
            keys.append(f"{label} {pk}={key!r}")
    sources: list[int] = []
    targets: list[int] = []
    relations: list[str] = []
    edge_keys: list[str] = []
    for rel in rel_tables:
        for src_label, dst_label, *_ in query(
            f"CALL show_connection({_cypher_string(rel)}) RETURN *"
        ):
            src_pk, dst_pk = primary[str(src_label)], primary[str(dst_label)]
            for a, b in query(
                f"MATCH (a:{_cypher_name(str(src_label))})-[:{_cypher_name(rel)}]->"
                f"(b:{_cypher_name(str(dst_label))}) RETURN a.{_cypher_name(src_pk)}, "
                f"b.{_cypher_name(dst_pk)} ORDER BY a.{_cypher_name(src_pk)}, "
                f"b.{_cypher_name(dst_pk)}"
            ):
                sources.append(position[(str(src_label), a)])
                targets.append(position[(str(dst_label), b)])
                relations.append(rel)
                edge_keys.append(f"{rel} from {src_label} {a!r} to {dst_label} {b!r}")
    node_table = pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": _array(names),
            "type": pa.array(types, pa.string()),
            "properties": pa.array(props, pa.string()),
        }
    )
    edge_table = pa.table(
        {
            "from": pa.array(sources, pa.int64()),
            "to": pa.array(targets, pa.int64()),
            "type": pa.array(relations, pa.string()),
        }
    )
    return tables_to_graph(
        node_table,
        edge_table,
        Rows(f"{file} node table", keys=keys.__getitem__),
        Rows(f"{file} relationship table", keys=edge_keys.__getitem__),
    )


def _cypher_name(name: str) -> str:
    """A table or property name quoted for Cypher (backticks, doubled inside)."""
    return "`" + name.replace("`", "``") + "`"


def _cypher_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _import_ladybug() -> Any:
    try:
        import ladybug
    except ImportError:
        raise ArkError(
            "LadybugDB sources need the ladybug package: pip install 'ark-retriever[ladybug]'"
        ) from None
    return ladybug


# -- shared -----------------------------------------------------------------------------


def _key(value: Any) -> Any:
    """A key as the table files would hold it: an integer or a string (a UUID, a
    date or a decimal key is compared by its text)."""
    if value is None or (isinstance(value, (int, str)) and not isinstance(value, bool)):
        return value
    return str(value)


def _json(value: Any) -> str | None:
    """A ``properties`` value as the JSON text a table file holds (``json``/``jsonb``
    columns arrive parsed)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _array(values: list[Any]) -> pa.Array:
    """An Arrow column of one kind: integers stay integers, anything else is text."""
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if v is None else str(v) for v in values], pa.string())


def _keys(columns: Sequence[str], values: Sequence[Sequence[Any]]) -> Callable[[int], str]:
    """A row's name in an error: its key columns and their values."""

    def key(row: int) -> str:
        return ", ".join(f"{c}={v[row]!r}" for c, v in zip(columns, values, strict=True))

    return key
