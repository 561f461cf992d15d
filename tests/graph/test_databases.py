"""Graphs read from databases: a real PostgreSQL server (``tests/_postgres.py``) and a
real LadybugDB file give the graph and the index the same rows give as table files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from _postgres import fresh_database
from _updates_model import rows
from ark.errors import ArkError, GraphFormatError
from ark.graph import Graph, TableLayout, load_graph
from ark.index import build_index
from ark.tools import GraphTools

psycopg = pytest.importorskip("psycopg")

NODES = [
    (1, "Heat", "movie", {"year": 1995, "genre": ["crime", "drama"]}),
    (2, "Michael Mann", "person", {"born": 1943}),
    (3, "Al Pacino", "person", None),
    (4, "Robert De Niro", "person", {"note": "plays McCauley"}),
    (5, "Crime", "genre", {}),
]
EDGES = [
    (1, 2, "directed_by"),
    (1, 3, "starred_actors"),
    (1, 4, "starred_actors"),
    (1, 5, "has_genre"),
]


def _create(conninfo: str, db: str) -> str:
    """A fresh database holding NODES and EDGES; its connection string."""
    target = fresh_database(conninfo, db)
    with psycopg.connect(target, autocommit=True) as conn, conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO nodes VALUES (%s, %s, %s, %s)",
            [(i, n, t, None if p is None else json.dumps(p)) for i, n, t, p in NODES],
        )
        cur.executemany("INSERT INTO edges VALUES (%s, %s, %s)", EDGES)
    return target


def _write_files(folder: Path, nodes=NODES, edges=EDGES) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "nodes.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "name", "type", "properties"])
        for i, n, t, p in nodes:
            w.writerow([i, n, t, "" if p is None else json.dumps(p)])
    with (folder / "edges.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["from", "to", "type"])
        w.writerows(edges)
    return folder


def _same_graph(a: Graph, b: Graph) -> None:
    assert a.names.to_pylist() == b.names.to_pylist()
    assert a.texts.to_pylist() == b.texts.to_pylist()
    assert [a.type_name(i) for i in range(a.n_nodes)] == [b.type_name(i) for i in range(b.n_nodes)]
    assert a.relation_names == b.relation_names
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.adj_node, b.adj_node)
    np.testing.assert_array_equal(a.adj_code, b.adj_code)


def test_postgres_tables_give_the_graph_and_index_of_the_same_rows_as_files(pg, tmp_path):
    conninfo = _create(pg, "same")
    from_db = load_graph(conninfo)
    from_files = load_graph(_write_files(tmp_path / "files"))
    _same_graph(from_db, from_files)
    assert "year: 1995" in from_db.text(0) and "genre: crime; drama" in from_db.text(0)

    a = build_index(conninfo, tmp_path / "db.idx")
    b = build_index(tmp_path / "files", tmp_path / "files.idx")
    for query in ("heat crime", "pacino", "mccauley"):
        got = GraphTools(a).search_in_graph(query, k=5)
        assert rows(got) == rows(GraphTools(b).search_in_graph(query, k=5))
        assert rows(got)
    assert a.meta["source"]["format"] == "postgres"
    assert a.meta["source"]["tables"]["nodes_table"] == "nodes"
    assert "password" not in json.dumps(a.meta)


def test_postgres_layout_names_tables_and_columns(pg):
    conninfo = _create(pg, "layout")
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA kg")
        conn.execute(
            "CREATE TABLE kg.things AS SELECT id AS node_id, name AS label, type AS kind, "
            "properties::jsonb AS props FROM nodes"
        )
        conn.execute(
            'CREATE VIEW kg.links AS SELECT "from" AS head, "to" AS tail, type AS rel FROM edges'
        )
    layout = TableLayout.parse(
        [
            "id=node_id",
            "name=label",
            "type=kind",
            "properties=props",
            "from=head",
            "to=tail",
            "relation=rel",
        ],
        nodes_table="kg.things",
        edges_table="kg.links",
    )
    g = load_graph(conninfo, layout=layout)
    assert g.names.to_pylist() == [n for _, n, _, _ in NODES]
    assert g.n_edges == len(EDGES)
    assert "born: 1943" in g.text(1)


def test_postgres_bad_rows_name_the_table_and_row(pg):
    conninfo = _create(pg, "bad")
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("INSERT INTO nodes VALUES (9, NULL, 'person', NULL)")
    with pytest.raises(GraphFormatError, match=r"table nodes \(row id=9\): empty 'name'"):
        load_graph(conninfo)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("DELETE FROM nodes WHERE id = 9")
        conn.execute("INSERT INTO edges VALUES (1, 77, 'directed_by')")
    with pytest.raises(
        GraphFormatError, match=r"table edges \(row from=1, to=77.*unknown node id 77"
    ):
        load_graph(conninfo)
    with pytest.raises(GraphFormatError, match="table nowhere"):
        load_graph(conninfo, layout=TableLayout(nodes_table="nowhere"))
    with pytest.raises(GraphFormatError, match=r"missing column\(s\) \['label'\]"):
        load_graph(conninfo, layout=TableLayout.parse(["name=label"]))


def test_postgres_password_is_refused_before_connecting():
    for conninfo in ("postgresql://me:secret@localhost/db", "host=localhost password=secret"):
        with pytest.raises(ArkError, match="PGPASSWORD"):
            load_graph(conninfo, fmt="postgres")


def test_layout_refuses_an_unknown_column_key():
    with pytest.raises(ArkError, match="KEY one of"):
        TableLayout.parse(["label=title"])


# -- LadybugDB ------------------------------------------------------------------------


def _ladybug(path: Path) -> Path:
    lb = pytest.importorskip("ladybug")
    db = lb.Database(str(path))
    conn = lb.Connection(db)
    conn.execute("CREATE NODE TABLE Person(id INT64, name STRING, born INT64, PRIMARY KEY(id))")
    conn.execute("CREATE NODE TABLE Movie(title STRING, year INT64, PRIMARY KEY(title))")
    conn.execute("CREATE REL TABLE ACTED_IN(FROM Person TO Movie, role STRING)")
    conn.execute("CREATE REL TABLE DIRECTED(FROM Person TO Movie)")
    for i, name, born in (
        (1, "Al Pacino", 1940),
        (2, "Michael Mann", 1943),
        (3, "Val Kilmer", None),
    ):
        conn.execute(
            "CREATE (:Person {id: $id, name: $name, born: $born})",
            {"id": i, "name": name, "born": born},
        )
    for title, year in (("Heat", 1995), ("The Insider", 1999)):
        conn.execute("CREATE (:Movie {title: $t, year: $y})", {"t": title, "y": year})
    for rel, pid, title in (
        ("ACTED_IN", 1, "Heat"),
        ("ACTED_IN", 3, "Heat"),
        ("ACTED_IN", 1, "The Insider"),
        ("DIRECTED", 2, "Heat"),
        ("DIRECTED", 2, "The Insider"),
    ):
        conn.execute(
            "MATCH (p:Person), (m:Movie) WHERE p.id = $p AND m.title = $t "
            f"CREATE (p)-[:{rel}]->(m)",
            {"p": pid, "t": title},
        )
    conn.close()
    db.close()
    return path


def test_ladybug_tables_give_the_graph_of_the_same_rows_as_files(tmp_path):
    db = _ladybug(tmp_path / "movies.lbug")
    g = load_graph(db)  # recognised by its first bytes
    nodes = [
        (0, "Al Pacino", "Person", {"born": 1940}),
        (1, "Michael Mann", "Person", {"born": 1943}),
        (2, "Val Kilmer", "Person", {"born": None}),
        (3, "Heat", "Movie", {"year": 1995}),  # no name property: the key is the name
        (4, "The Insider", "Movie", {"year": 1999}),
    ]
    edges = [
        (0, 3, "ACTED_IN"),
        (0, 4, "ACTED_IN"),
        (2, 3, "ACTED_IN"),
        (1, 3, "DIRECTED"),
        (1, 4, "DIRECTED"),
    ]
    _same_graph(g, load_graph(_write_files(tmp_path / "files", nodes, edges)))
    index = build_index(db, tmp_path / "lb.idx")
    assert index.meta["source"]["format"] == "ladybug"
    assert rows(GraphTools(index).search_in_graph("pacino", k=1))[0][0][0] == "Al Pacino"


def test_ladybug_node_without_a_name_names_the_table_and_key(tmp_path):
    db = _ladybug(tmp_path / "movies.lbug")
    lb = pytest.importorskip("ladybug")
    database = lb.Database(str(db))
    conn = lb.Connection(database)
    conn.execute("CREATE (:Person {id: 7})")
    conn.close()
    database.close()
    with pytest.raises(GraphFormatError, match=r"\(row Person id=7\): empty 'name'"):
        load_graph(db)
