"""Loaders: parquet/CSV tables and triple files, and their errors (file and line)."""

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ark.errors import GraphFormatError
from ark.graph import load_graph

NODES = [
    {
        "id": 10,
        "name": "Aspirin",
        "type": "drug",
        "properties": json.dumps({"source": "DrugBank", "note": ""}),
    },
    {
        "id": 20,
        "name": "Headache",
        "type": "disease",
        "properties": json.dumps({"details": ["pain", "head"]}),
    },
    {"id": 30, "name": "COX1", "type": "gene", "properties": ""},
]
EDGES = [
    {"from": 10, "to": 20, "type": "indication", "properties": "{}"},
    {"from": 10, "to": 30, "type": "target", "properties": "{}"},
]


def write_csv(path: Path, rows: list[dict]) -> None:
    import csv

    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_tables(tmp_path, fmt):
    if fmt == "parquet":
        pq.write_table(pa.Table.from_pylist(NODES), tmp_path / "nodes.parquet")
        pq.write_table(pa.Table.from_pylist(EDGES), tmp_path / "edges.parquet")
    else:
        write_csv(tmp_path / "nodes.csv", NODES)
        write_csv(tmp_path / "edges.csv", EDGES)
    g = load_graph(tmp_path)
    assert g.n_nodes == 3 and g.n_edges == 2
    assert [g.name(i) for i in range(3)] == ["Aspirin", "Headache", "COX1"]
    assert [g.type_name(i) for i in range(3)] == ["drug", "disease", "gene"]
    assert g.text(0) == "source: DrugBank"  # empty values dropped
    assert g.text(1) == "details: pain; head"
    assert g.neighborhood(0).neighbors.tolist() == [1, 2]
    assert "Aspirin" in g.descriptor(0) and "drug" in g.descriptor(0)


def write_bad_csv(tmp_path, nodes_text, edges_text):
    (tmp_path / "nodes.csv").write_text(nodes_text)
    (tmp_path / "edges.csv").write_text(edges_text)
    return tmp_path


GOOD_NODES = 'id,name,type,properties\n1,a,t,"{}"\n2,b,t,"{}"\n'
GOOD_EDGES = "from,to,type,properties\n1,2,r,{}\n"


@pytest.mark.parametrize(
    ("nodes", "edges", "file", "line", "message"),
    [
        ('id,name,type,properties\n1,a,t,"{}"\n2,b,t,"{bad"\n', GOOD_EDGES, "nodes.csv", 3, "JSON"),
        ("id,name,properties\n1,a,{}\n", GOOD_EDGES, "nodes.csv", 1, "missing column"),
        (
            GOOD_NODES,
            "from,to,type,properties\n1,2,r,{}\n1,9,r,{}\n",
            "edges.csv",
            3,
            "unknown node id 9",
        ),
        (
            'id,name,type,properties\n1,a,t,"{}"\n1,b,t,"{}"\n',
            GOOD_EDGES,
            "nodes.csv",
            3,
            "duplicate node id",
        ),
        (
            'id,name,type,properties\n1,a,t,"{}"\n2,,t,"{}"\n',
            GOOD_EDGES,
            "nodes.csv",
            3,
            "empty 'name'",
        ),
        ('id,name,type,properties\n1,a,t,"[1]"\n', GOOD_EDGES, "nodes.csv", 2, "JSON object"),
    ],
)
def test_table_errors_name_file_and_line(tmp_path, nodes, edges, file, line, message):
    write_bad_csv(tmp_path, nodes, edges)
    with pytest.raises(GraphFormatError) as err:
        load_graph(tmp_path)
    assert Path(err.value.path).name == file
    assert err.value.line == line
    assert message in str(err.value)


def test_missing_directory_and_files(tmp_path):
    with pytest.raises(GraphFormatError, match="no such file"):
        load_graph(tmp_path / "nope")
    with pytest.raises(GraphFormatError, match=r"neither nodes\.parquet"):
        load_graph(tmp_path, "auto")


def test_triples_with_schema_and_tabs(tmp_path):
    kb = tmp_path / "kb.tsv"
    kb.write_text("Alice\tworks_at\tAcme\nBob\tworks_at\tAcme\nAlice\tknows\tBob\n")
    schema = tmp_path / "schema.tsv"
    schema.write_text("works_at\tperson\tcompany\nknows\tperson\tperson\n")
    g = load_graph(kb, schema_file=schema)
    types = {g.name(i): g.type_name(i) for i in range(g.n_nodes)}
    assert types == {"Alice": "person", "Bob": "person", "Acme": "company"}


def test_triples_without_schema_are_entities(tmp_path):
    kb = tmp_path / "kb.txt"
    kb.write_text("a|r|b\n")
    g = load_graph(kb)
    assert g.node_type_names == ["entity"]


def test_types_file_wins_over_schema(tmp_path):
    kb = tmp_path / "kb.txt"
    kb.write_text("Alice|knows|Bob\n")
    types = tmp_path / "types.tsv"
    types.write_text("Alice\tperson\nAlice\trobot\n")
    g = load_graph(kb, types_file=types)
    assert {g.name(i): g.type_name(i) for i in range(2)} == {"Alice": "person", "Bob": "entity"}


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("a|r|b\na|r\n", 2, "three non-empty fields"),
        ("a|r|b\n\n|r|b\n", 3, "three non-empty fields"),
        ("", None, "no triples"),
    ],
)
def test_triple_errors(tmp_path, text, line, message):
    kb = tmp_path / "kb.txt"
    kb.write_text(text)
    with pytest.raises(GraphFormatError) as err:
        load_graph(kb)
    assert err.value.line == line and message in str(err.value)


def test_schema_file_must_cover_every_relation(tmp_path):
    kb = tmp_path / "kb.txt"
    kb.write_text("a|r|b\na|s|b\n")
    schema = tmp_path / "schema.tsv"
    schema.write_text("r\tx\ty\n")
    with pytest.raises(GraphFormatError, match=r"relation\(s\) \['s'\]"):
        load_graph(kb, schema_file=schema)


def test_gzipped_triples(tmp_path):
    import gzip

    kb = tmp_path / "kb.txt.gz"
    with gzip.open(kb, "wt") as f:
        f.write("a|r|b\n")
    assert load_graph(kb).n_nodes == 2


# -- the real MetaQA graph ---------------------------------------------------------


def test_metaqa_counts_match_the_file(metaqa_index, metaqa_triples):
    g = metaqa_index.graph
    names = {h for h, _, _ in metaqa_triples} | {t for _, _, t in metaqa_triples}
    assert g.n_nodes == len(names) == 43_234
    assert g.n_edges == len(metaqa_triples) == 133_582
    assert len(g.adj_node) == 2 * g.n_edges


def test_metaqa_directors_are_exactly_those_in_the_file(metaqa_index, metaqa_triples):
    g = metaqa_index.graph
    names = g.names.to_pylist()
    position = {n: i for i, n in enumerate(names)}
    directed = rel = g.relation_id("directed_by")
    assert rel is not None
    films = sorted({h for h, r, _ in metaqa_triples if r == "directed_by"})[::500]
    assert len(films) > 20
    for film in films:
        expected = {position[t] for h, r, t in metaqa_triples if h == film and r == "directed_by"}
        got = set(g.neighborhood(position[film], relations=[directed]).neighbors.tolist())
        assert got == expected, film


def test_metaqa_type_rule_majority_role(metaqa_index, metaqa_triples):
    g = metaqa_index.graph
    names = g.names.to_pylist()
    ti = {n: g.type_name(i) for i, n in enumerate(names)}
    # "1981" is a film title (head of a few triples) and a release year of many films.
    assert any(h == "1981" for h, _, _ in metaqa_triples)
    assert ti["1981"] == "year"
    assert ti["Forrest Gump"] == "movie"
    assert ti["Tom Hanks"] == "person"
    assert ti["Drama"] == "genre"
    counts = np.bincount(np.asarray(g.node_type))
    assert counts.sum() == g.n_nodes


def test_parquet_errors_name_the_row(tmp_path):
    nodes = [dict(n) for n in NODES]
    nodes[2]["properties"] = "{oops"
    pq.write_table(pa.Table.from_pylist(nodes), tmp_path / "nodes.parquet")
    pq.write_table(pa.Table.from_pylist(EDGES), tmp_path / "edges.parquet")
    with pytest.raises(GraphFormatError) as err:
        load_graph(tmp_path)
    assert err.value.line == 2 and err.value.unit == "row"
    assert "nodes.parquet (row 2)" in str(err.value)
