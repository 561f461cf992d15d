"""Bad input files: every one is refused with the file and line (or row), none
builds a wrong graph silently."""

import gzip

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ark.errors import GraphFormatError
from ark.graph import load_graph

GOOD = b"Forrest Gump|directed_by|Robert Zemeckis\nCast Away|directed_by|Robert Zemeckis\n"


def refused(path, match, line=None, file=None):
    with pytest.raises(GraphFormatError, match=match) as info:
        load_graph(path)
    assert info.value.path == str(file or path) and info.value.line == line
    return info.value


@pytest.mark.parametrize(
    ("data", "match", "line"),
    [
        (GOOD + b"Big|directed_by|Penny \xff Marshall\n", "not UTF-8 text: byte 0xff", 3),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "a binary file", 1),
        (b"GIF89a\x00\x01\n", "NUL byte", 1),
        (GOOD + b"Big|directed_by|Penny\x00Marshall\n", "NUL byte", 3),
    ],
    ids=["invalid-utf8", "png", "gif", "nul-in-name"],
)
def test_triples_that_are_not_text(tmp_path, data, match, line):
    path = tmp_path / "kb.txt"
    path.write_bytes(data)
    refused(path, match, line)


def test_a_gz_that_is_not_gzip(tmp_path):
    path = tmp_path / "kb.txt.gz"
    path.write_bytes(GOOD)
    refused(path, "not a valid gzip file", 1)


def test_a_truncated_gz(tmp_path):
    path = tmp_path / "kb.txt.gz"
    data = gzip.compress(GOOD * 2000)
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(GraphFormatError, match="cut short") as info:
        load_graph(path)
    assert info.value.path == str(path) and info.value.line > 1


def test_a_byte_order_mark_is_not_part_of_the_first_name(tmp_path):
    path = tmp_path / "kb.txt"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD)
    graph = load_graph(path)
    assert graph.names.to_pylist()[0] == "Forrest Gump"


def write_tables(tmp_path, nodes, edges, fmt):
    for name, table in (("nodes", nodes), ("edges", edges)):
        if fmt == "parquet":
            pq.write_table(table, tmp_path / f"{name}.parquet")
        else:
            import pyarrow.csv as pacsv

            pacsv.write_csv(table, tmp_path / f"{name}.csv")
    return tmp_path


EDGES = pa.table({"from": [1], "to": [2], "type": ["r"]})


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_tables_without_rows_are_refused(tmp_path, fmt):
    empty = pa.table({"id": pa.array([], pa.int64()), "name": pa.array([], pa.string()),
                      "type": pa.array([], pa.string())})  # fmt: skip
    write_tables(tmp_path, empty, EDGES, fmt)
    refused(tmp_path, "no nodes", file=tmp_path / f"nodes.{fmt}")


def test_nan_ids_are_refused_with_their_row(tmp_path):
    nodes = pa.table({"id": [1.0, float("nan")], "name": ["a", "b"], "type": ["t", "t"]})
    write_tables(tmp_path, nodes, EDGES, "parquet")
    error = refused(tmp_path, "node id nan is not a whole number", 1, tmp_path / "nodes.parquet")
    assert error.unit == "row"


def test_list_ids_are_refused(tmp_path):
    nodes = pa.table({"id": [[1], [2]], "name": ["a", "b"], "type": ["t", "t"]})
    write_tables(tmp_path, nodes, EDGES, "parquet")
    refused(tmp_path, "the 'id' column holds list", file=tmp_path / "nodes.parquet")


def test_whole_float_ids_are_read_as_integers(tmp_path):
    nodes = pa.table({"id": [1.0, 2.0], "name": ["a", "b"], "type": ["t", "t"]})
    write_tables(tmp_path, nodes, EDGES, "parquet")
    assert load_graph(tmp_path).n_edges == 1


def test_nul_in_a_table_name_is_refused(tmp_path):
    nodes = pa.table({"id": [1, 2], "name": ["a", "b\x00c"], "type": ["t", "t"]})
    write_tables(tmp_path, nodes, EDGES, "csv")
    refused(tmp_path, "NUL byte in 'name'", 3, tmp_path / "nodes.csv")


def test_csv_byte_order_mark(tmp_path):
    (tmp_path / "nodes.csv").write_bytes(b"\xef\xbb\xbfid,name,type\n1,a,t\n2,b,t\n")
    (tmp_path / "edges.csv").write_bytes(b"from,to,type\n1,2,r\n")
    graph = load_graph(tmp_path)
    assert graph.names.to_pylist() == ["a", "b"]
