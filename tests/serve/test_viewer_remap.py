"""``ark view`` of a run made before a compact names the nodes the run meant
(``remap.npy``), and says so; when the indices cannot be mapped it shows no names
rather than wrong ones (issue 42, item 9)."""

from __future__ import annotations

import asyncio
import time

import pytest

from ark.datasets import Query
from ark.eval import BM25Method, RunStore, run_queries
from ark.index import build_index, compact_index, open_index, remove_from_index
from ark.serve.viewer import load_source

KB = "".join(f"Film {i}|directed_by|Person {i}\n" for i in range(6))


def _run(tmp_path, index):
    method = BM25Method(index)
    film5 = index.graph.names.to_pylist().index("Film 5")
    config = {
        "method": method.name,
        "dataset": "test",
        "index": str(index.path),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    asyncio.run(
        run_queries(
            [Query("q1", "Film 5", frozenset({film5}))], method, RunStore(tmp_path / "run"), config
        )
    )
    return film5


@pytest.mark.slow
def test_a_run_before_a_compact_shows_the_nodes_it_meant(tmp_path):
    (tmp_path / "kb.txt").write_text(KB)
    index = build_index(tmp_path / "kb.txt", tmp_path / "idx")
    time.sleep(1.1)  # timestamps have one-second resolution
    film5 = _run(tmp_path, open_index(tmp_path / "idx"))
    (tmp_path / "rm.txt").write_text("Film 0\nPerson 0\n")
    remove_from_index(index.path, nodes_file=tmp_path / "rm.txt")
    time.sleep(1.1)
    compact_index(index.path)
    assert open_index(index.path).graph.name(film5) != "Film 5"  # indices moved
    header, _rows, details = load_source(tmp_path / "run")
    assert details[0]["names"][str(film5)][0] == "Film 5"
    assert "remap.npy" in header["index_note"]


@pytest.mark.slow
def test_a_run_before_a_rebuild_shows_no_names_and_says_why(tmp_path):
    (tmp_path / "kb.txt").write_text(KB)
    build_index(tmp_path / "kb.txt", tmp_path / "idx")
    time.sleep(1.1)
    film5 = _run(tmp_path, open_index(tmp_path / "idx"))
    time.sleep(1.1)
    (tmp_path / "kb.txt").write_text("".join(reversed(KB.splitlines(keepends=True))))
    build_index(tmp_path / "kb.txt", tmp_path / "idx")
    header, _rows, details = load_source(tmp_path / "run")
    assert header["names"] is False and "rebuilt" in header["names_note"]
    assert str(film5) not in details[0]["names"]
