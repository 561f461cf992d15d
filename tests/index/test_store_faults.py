"""Index directories under faults: a build never removes what is not an index, and
damage is found (structure on open, everything with verify)."""

import json

import pytest

from ark.errors import ArkError, IndexFormatError
from ark.index import build_index, open_index, verify_index

KB = "Forrest Gump|directed_by|Robert Zemeckis\nCast Away|directed_by|Robert Zemeckis\n"


@pytest.fixture()
def src(tmp_path):
    path = tmp_path / "kb.txt"
    path.write_text(KB)
    return path


@pytest.mark.parametrize(
    "meta",
    [
        '{"title": "my project"}',
        '{"format": "something-else"}',
        "not json at all",
        "[1, 2]",
    ],
)
def test_a_folder_with_a_foreign_meta_json_is_left_alone(src, tmp_path, meta):
    project = tmp_path / "project"
    project.mkdir()
    (project / "meta.json").write_text(meta)
    (project / "notes.md").write_text("my notes")
    with pytest.raises(ArkError, match="not an ARK index"):
        build_index(src, project)
    assert (project / "notes.md").read_text() == "my notes"
    assert (project / "meta.json").read_text() == meta


def test_an_index_and_an_empty_folder_are_written(src, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    build_index(src, empty)
    build_index(src, empty)  # an existing index is replaced
    assert json.loads((empty / "meta.json").read_text())["format"] == "ark-index"
    assert open_index(empty).graph.n_nodes == 3


def test_a_file_is_not_replaced(src, tmp_path):
    target = tmp_path / "target"
    target.write_text("data")
    with pytest.raises(ArkError, match="not an ARK index"):
        build_index(src, target)
    assert target.read_text() == "data"


@pytest.fixture()
def index_dir(src, tmp_path):
    build_index(src, tmp_path / "idx")
    return tmp_path / "idx"


def damage_array(path, change):
    """Change an .npy file in place (same size, same header)."""
    import numpy as np

    array = np.load(path, mmap_mode="r+")
    change(array)
    array.flush()
    del array


def test_the_build_records_a_checksum_of_every_file(index_dir):
    meta = json.loads((index_dir / "meta.json").read_text())
    files = {str(p.relative_to(index_dir)) for p in index_dir.rglob("*") if p.is_file()}
    assert set(meta["checksums"]) == files - {"meta.json"}
    assert verify_index(index_dir)["ok"] is True


@pytest.mark.parametrize(
    ("file", "change", "problem"),
    [
        ("adj_node.npy", lambda a: a.__setitem__(0, -1), "adj_node.npy holds -1"),
        ("adj_node.npy", lambda a: a.__setitem__(0, 10**6), "adj_node.npy holds 1000000"),
        ("adj_code.npy", lambda a: a.__setitem__(0, 999), "adj_code.npy holds 999"),
        ("indptr.npy", lambda a: a.__setitem__(1, 4), "indptr.npy is not monotone"),
        ("node_type.npy", lambda a: a.__setitem__(0, 77), "node_type.npy holds 77"),
        ("bm25/indices.csc.index.npy", lambda a: a.__setitem__(0, -3), "BM25 indices holds -3"),
    ],
)
def test_same_size_damage_out_of_range_is_refused_on_open(index_dir, file, change, problem):
    damage_array(index_dir / file, change)
    with pytest.raises(IndexFormatError, match=problem):
        open_index(index_dir)
    report = verify_index(index_dir)
    assert not report["ok"] and any(problem in p for p in report["problems"])


def test_same_size_damage_in_range_is_found_by_verify(index_dir):
    def swap(a):  # another valid node: opening cannot tell, the checksum can
        a[0] = (int(a[0]) + 1) % 3

    damage_array(index_dir / "adj_node.npy", swap)
    open_index(index_dir)
    report = verify_index(index_dir)
    assert not report["ok"]
    assert report["problems"] == ["adj_node.npy does not match its checksum (damaged or replaced)"]


def test_verify_reads_every_file_whatever_its_kind(index_dir):
    import numpy as np

    damage_array(index_dir / "bm25" / "data.csc.index.npy", lambda a: a.__setitem__(0, np.nan))
    nodes = index_dir / "nodes.arrow"
    data = bytearray(nodes.read_bytes())
    at = data.find(b"Cast Away")
    data[at] = ord("K")
    nodes.write_bytes(bytes(data))
    problems = verify_index(index_dir)["problems"]
    assert "nodes.arrow does not match its checksum (damaged or replaced)" in problems
    assert "BM25 weights hold NaN or infinity" in problems


def test_verify_command(index_dir):
    from typer.testing import CliRunner

    from ark.cli import app

    runner = CliRunner()
    ok = runner.invoke(app, ["index", "verify", str(index_dir), "--json"])
    assert ok.exit_code == 0 and json.loads(ok.stdout)["ok"] is True
    damage_array(index_dir / "adj_code.npy", lambda a: a.__setitem__(0, 1 - int(a[0])))
    bad = runner.invoke(app, ["index", "verify", str(index_dir)])
    assert bad.exit_code == 1 and "adj_code.npy does not match" in bad.output


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o755), (0o002, 0o775), (0o077, 0o700)])
def test_index_directories_follow_the_umask(src, tmp_path, umask, mode):
    import os

    old = os.umask(umask)
    try:
        build_index(src, tmp_path / "idx")
    finally:
        os.umask(old)
    assert (tmp_path / "idx").stat().st_mode & 0o777 == mode
    assert (tmp_path / "idx" / "bm25").stat().st_mode & 0o777 == mode
