"""Index directories: build, open without the source, refuse broken ones."""

import json
import shutil

import numpy as np
import pytest

from ark.errors import ArkError, IndexFormatError
from ark.index import build_index, open_index

KB = "Forrest Gump|directed_by|Robert Zemeckis\nCast Away|directed_by|Robert Zemeckis\n"


@pytest.fixture()
def built(tmp_path):
    src = tmp_path / "src" / "kb.txt"
    src.parent.mkdir()
    src.write_text(KB)
    build_index(src, tmp_path / "idx")
    return tmp_path


def test_open_does_not_need_the_source(built):
    shutil.rmtree(built / "src")
    index = open_index(built / "idx")
    assert index.graph.n_nodes == 3
    assert index.meta["counts"]["edges"] == 2
    assert len(index.meta["source"]["sha256"]) == 64
    docs, _ = index.bm25.top_k(index.bm25.query_terms("zemeckis"), 3)
    assert index.graph.name(int(docs[0])) == "Robert Zemeckis"
    assert isinstance(index.graph.adj_node, np.memmap)


def _assert_refused(path, match):
    with pytest.raises(IndexFormatError, match=match) as err:
        open_index(path)
    assert "ark index build" in str(err.value)


def test_missing_directory(tmp_path):
    _assert_refused(tmp_path / "nothing", "no index at")


def test_missing_meta(built):
    (built / "idx" / "meta.json").unlink()
    _assert_refused(built / "idx", "not an ARK index")


def test_corrupted_meta(built):
    (built / "idx" / "meta.json").write_text("{not json")
    _assert_refused(built / "idx", "corrupted")


def test_other_format_version(built):
    meta_path = built / "idx" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["format_version"] = 999
    meta_path.write_text(json.dumps(meta))
    _assert_refused(built / "idx", "version 999")


def test_truncated_array(built):
    path = built / "idx" / "adj_node.npy"
    path.write_bytes(path.read_bytes()[:-4])
    _assert_refused(built / "idx", "adj_node.npy has")


def test_missing_array(built):
    (built / "idx" / "bm25" / "vocab.index.json").unlink()
    _assert_refused(built / "idx", "missing")


def test_rebuild_replaces_an_index_but_not_other_directories(built):
    build_index(built / "src" / "kb.txt", built / "idx")  # replaces
    other = built / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    with pytest.raises(ArkError, match="not an ARK index"):
        build_index(built / "src" / "kb.txt", other)
    assert (other / "keep.txt").read_text() == "mine"


def test_failed_build_leaves_nothing(tmp_path):
    bad = tmp_path / "kb.txt"
    bad.write_text("a|b\n")
    with pytest.raises(ArkError):
        build_index(bad, tmp_path / "idx")
    assert not (tmp_path / "idx").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["kb.txt"]


def test_bm25s_opens_the_bm25_directory(built):
    import bm25s

    ref = bm25s.BM25.load(built / "idx" / "bm25", mmap=True)
    docs, _ = ref.retrieve([["zemeckis"]], k=1, show_progress=False)
    assert open_index(built / "idx").graph.name(int(docs[0][0])) == "Robert Zemeckis"


def test_memo_builds_once_per_opened_index_and_key(tmp_path):
    """What readers derive from an index is made once per opened snapshot: a second
    ask reuses it, another key or another opening builds its own."""
    (tmp_path / "kb.tsv").write_text("A\tr\tB\n", encoding="utf-8")
    built = build_index(tmp_path / "kb.tsv", tmp_path / "idx")
    made: list[str] = []

    def make(tag: str):  # type: ignore[no-untyped-def]
        return lambda: made.append(tag) or {"tag": tag}

    first = built.memo("k", make("a"))
    assert built.memo("k", make("b")) is first and made == ["a"]
    assert built.memo("other", make("c"))["tag"] == "c"
    reopened = open_index(tmp_path / "idx")
    assert reopened.memo("k", make("d")) is not first and made == ["a", "c", "d"]
