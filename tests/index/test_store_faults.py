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
    def swap(a):  # another valid node: the structure cannot tell, the checksums can
        a[0] = (int(a[0]) + 1) % 3

    damage_array(index_dir / "adj_node.npy", swap)
    with pytest.raises(IndexFormatError, match=r"adj_node\.npy does not match its sampled"):
        open_index(index_dir)  # a small file is sampled whole
    report = verify_index(index_dir)
    assert not report["ok"]
    assert report["problems"] == ["adj_node.npy does not match its checksum (damaged or replaced)"]


def test_an_array_rolled_by_one_is_refused_on_open(index_dir):
    """The audit's case: every value valid, the size unchanged, every neighbor wrong."""
    import numpy as np
    from typer.testing import CliRunner

    from ark.cli import app

    before = CliRunner().invoke(app, ["neighbors", str(index_dir), "0"])
    assert before.exit_code == 0
    damage_array(index_dir / "adj_node.npy", lambda a: a.__setitem__(slice(None), np.roll(a, 1)))
    with pytest.raises(IndexFormatError, match=r"adj_node\.npy does not match its sampled"):
        open_index(index_dir)
    after = CliRunner().invoke(app, ["neighbors", str(index_dir), "0"])
    assert after.exit_code == 1 and "adj_node.npy does not match" in after.output
    assert "ark index build" in after.output  # says what to do


@pytest.fixture()
def sampled_index(tmp_path, monkeypatch):
    """An index whose large files are sampled (64-byte blocks, 4 per file), not whole."""
    from ark.probes import index_verify as _verify

    monkeypatch.setattr(_verify, "SAMPLE_BLOCK", 64)
    monkeypatch.setattr(_verify, "SAMPLE_BLOCKS", 4)
    monkeypatch.setattr(_verify, "SAMPLE_WHOLE_UPTO", 0)
    kb = tmp_path / "kb.txt"
    kb.write_text("".join(f"Film {i}|directed_by|Director {i % 7}\n" for i in range(400)))
    build_index(kb, tmp_path / "idx")
    monkeypatch.undo()  # opening reads the parameters meta.json recorded, not these
    meta = json.loads((tmp_path / "idx" / "meta.json").read_text())
    assert meta["samples"]["params"] == {"block": 64, "blocks": 4, "whole_upto": 0}
    return tmp_path / "idx"


def test_sampled_blocks_catch_a_roll_and_verify_catches_what_falls_between(sampled_index):
    import numpy as np

    path = sampled_index / "adj_node.npy"
    size = path.stat().st_size
    assert size > 4 * 64  # really sampled, not read whole
    open_index(sampled_index)
    original = path.read_bytes()
    damage_array(path, lambda a: a.__setitem__(slice(None), np.roll(a, 1)))
    with pytest.raises(IndexFormatError, match=r"adj_node\.npy does not match its sampled"):
        open_index(sampled_index)
    path.write_bytes(original)
    # One value changed between two sampled blocks: opening cannot see it, verify does.
    between = (size - 64) // 3 // 2  # halfway between the first two samples
    damage_array(path, lambda a: a.__setitem__(between // 4, (int(a[between // 4]) + 1) % 400))
    assert path.read_bytes() != original
    open_index(sampled_index)
    assert verify_index(sampled_index)["problems"] == [
        "adj_node.npy does not match its checksum (damaged or replaced)"
    ]


def test_an_index_without_sampled_digests_still_opens(index_dir):
    meta_file = index_dir / "meta.json"
    meta = json.loads(meta_file.read_text())
    del meta["samples"]  # built by an ARK that did not record them
    meta_file.write_text(json.dumps(meta))
    assert open_index(index_dir).graph.n_nodes == 3
    meta["samples"] = ["junk"]
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(IndexFormatError, match="malformed 'samples'"):
        open_index(index_dir)


def test_rewriting_the_described_schema_keeps_the_sampled_digests_true(index_dir):
    from ark.index import save_described

    index = open_index(index_dir)
    data = index.described.to_dict()
    data["relations"][0]["label"] = "was directed by"
    save_described(index, index.described.from_dict(data))
    assert open_index(index_dir).described.to_dict()["relations"][0]["label"] == "was directed by"
    assert verify_index(index_dir)["ok"] is True


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


@pytest.mark.parametrize(
    ("tokenizer", "problem"),
    [
        ({"token_pattern": "(?u)\\b\\w\\w+\\b["}, "token_pattern .* is not a valid regular"),
        ({"token_pattern": 42}, "token_pattern must be a string"),
        ({"stopwords": "klingon"}, "unknown stop word list"),
        ({"stemmer": "klingon"}, "PyStemmer has no stemmer|stemming needs PyStemmer"),
        ("not a dict", "tokenizer settings are missing or malformed"),
    ],
)
def test_bad_tokenizer_settings_are_an_error_naming_meta_json(index_dir, tokenizer, problem):
    meta_file = index_dir / "meta.json"
    meta = json.loads(meta_file.read_text())
    if isinstance(tokenizer, dict):
        tokenizer = {**meta["tokenizer"], **tokenizer}
    meta["tokenizer"] = tokenizer
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(ArkError, match=problem) as err:
        open_index(index_dir)
    assert str(meta_file) in str(err.value)


def test_a_bad_token_pattern_is_a_clean_cli_error(index_dir):
    from typer.testing import CliRunner

    from ark.cli import app

    meta_file = index_dir / "meta.json"
    meta = json.loads(meta_file.read_text())
    meta["tokenizer"]["token_pattern"] = "(unclosed"
    meta_file.write_text(json.dumps(meta))
    result = CliRunner().invoke(app, ["search", str(index_dir), "Zemeckis"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert "meta.json" in result.output and "token_pattern" in result.output


def _age(path, seconds=3600):
    import os
    import time

    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_killed_builds_temporary_directories_are_removed_by_the_next_build(src, tmp_path):
    out = tmp_path / "idx"
    build_index(src, out)
    stale = tmp_path / ".idx.k1ll3d_1"  # as mkdtemp names a build's copy
    (stale / "bm25").mkdir(parents=True)
    (stale / "adj_node.npy").write_bytes(b"x" * 1000)
    stale_old = tmp_path / ".idx.old.abcd1234"
    (stale_old / "index").mkdir(parents=True)
    for p in (stale, stale_old):
        _age(p)
    build_index(src, out)
    assert not stale.exists() and not stale_old.exists()
    assert open_index(out).graph.n_nodes == 3


def test_stale_build_cleanup_leaves_everything_else_alone(src, tmp_path):
    import fcntl
    import os

    out = tmp_path / "idx"
    build_index(src, out)
    keep = {
        "live": tmp_path / ".idx.l1vebld0",  # a concurrent build holds its lock
        "young": tmp_path / ".idx.y0ungbld",  # just created, not yet locked
        "other index": tmp_path / ".idx2.abcd1234",
        "not a build name": tmp_path / ".idx.notes",
        "a file": tmp_path / ".idx.f1lef1le",
    }
    for name, p in keep.items():
        if name == "a file":
            p.write_text("mine")
        else:
            p.mkdir()
            (p / "data").write_text("mine")
        if name != "young":
            _age(p)
    fd = os.open(keep["live"], os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        build_index(src, out)
    finally:
        os.close(fd)
    assert [n for n, p in keep.items() if not p.exists()] == []


def test_a_parked_old_index_is_kept_while_no_index_is_in_place(src, tmp_path):
    from ark.probes import remove_stale_builds

    out = tmp_path / "idx"
    build_index(src, out)
    parked = tmp_path / ".idx.old.p4rked00"
    parked.mkdir()
    out.rename(parked / "index")  # killed between the two renames: the only copy
    _age(parked)
    assert remove_stale_builds(out) == []
    assert (parked / "index" / "meta.json").is_file()
    build_index(src, out)  # the new index is in place: the parked copy may go
    assert not parked.exists()


@pytest.mark.slow
def test_an_index_with_more_relations_than_int16_codes_round_trips(tmp_path):
    """16,385 relations: relation 16384 * 2 no longer fits int16; the adjacency codes are
    stored as int32 and read back exactly by the tools."""
    import numpy as np

    from ark.tools import GraphTools

    n = 16_385
    kb = tmp_path / "kb.txt"
    kb.write_text("".join(f"Hub|rel{i}|Leaf {i}\n" for i in range(n)))
    build_index(kb, tmp_path / "idx")
    index = open_index(tmp_path / "idx")
    assert len(index.graph.relation_names) == n
    assert np.load(tmp_path / "idx" / "adj_code.npy", mmap_mode="r").dtype == np.int32
    tools = GraphTools(index)
    hub = index.graph.names.to_pylist().index("Hub")
    last = tools.search_in_neighborhood(hub, edge_type=f"rel{n - 1}")
    assert [h.name for h in last.hits] == [f"Leaf {n - 1}"]
    assert [(r.type, r.direction) for r in last.hits[0].relations] == [(f"rel{n - 1}", "out")]
    assert verify_index(tmp_path / "idx")["ok"] is True


@pytest.mark.slow
def test_a_build_killed_while_writing_is_cleaned_up_by_the_next(src, tmp_path):
    """kill -9 in the middle of writing: the temporary copy stays; its lock died with
    the process, so the next build (once the copy is no longer fresh) removes it."""
    import os
    import subprocess
    import sys

    from _helpers import REPO

    out = tmp_path / "idx"
    build_index(src, out)
    script = (
        "import os, signal\n"
        "from ark.index import _store\n"
        "def die(*a, **k):\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "_store._write_described = die\n"
        f"_store.build_index({str(src)!r}, {str(out)!r})\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.run([sys.executable, "-c", script], env=env, timeout=120)
    assert proc.returncode == -9
    # (``.idx.lock`` is the writers' lock file, not a build's leftover)
    left = [p for p in tmp_path.iterdir() if p.name.startswith(".idx.") and p.is_dir()]
    assert len(left) == 1 and (left[0] / "adj_node.npy").is_file()  # half written
    build_index(src, out)
    assert left[0].exists()  # too fresh to be told from a build that just started
    _age(left[0])
    build_index(src, out)
    assert not left[0].exists()
    assert open_index(out).graph.n_nodes == 3
