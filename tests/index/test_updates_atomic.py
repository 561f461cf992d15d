"""An update or compact killed at any point leaves the index as before or as after,
and ``verify`` passes; readers keep the snapshot they opened."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _helpers import REPO
from ark.index import (
    add_to_index,
    build_index,
    compact_index,
    open_index,
    remove_from_index,
    verify_index,
)
from ark.tools import GraphTools

KB = "".join(
    f"Movie {i}|directed_by|Person {i % 7}\nMovie {i}|starred_actors|Actor {i % 5}\n"
    for i in range(40)
)
ADD = "Movie 100|directed_by|Person 1\nMovie 100|starred_actors|Newcomer Star\n"

#: Run in a child: apply one operation, dying (like SIGKILL: no cleanup, no atexit)
#: at the given update step, or at the N-th file written.
CHILD = """
import os, sys
import numpy as np
from ark.probes import index_update as upd
from ark.index import add_to_index, compact_index, remove_from_index
op, root, arg, kind, at = sys.argv[1:6]
at_n = int(at) if kind == "save" else None
if kind == "step":
    upd.CHECKPOINT = lambda step: os._exit(9) if step == at else None
else:
    saved = [0]
    real_save = np.save
    def dying_save(*a, **k):
        saved[0] += 1
        if saved[0] == at_n:
            os._exit(9)
        return real_save(*a, **k)
    np.save = dying_save
if op == "add":
    add_to_index(root, arg)
elif op == "remove":
    remove_from_index(root, nodes_file=arg)
else:
    compact_index(root)
"""


def _state(root: Path) -> tuple[int, int, int]:
    """Live nodes, live edges and how many segments (0 once compacted)."""
    index = open_index(root)
    live = (index.meta.get("segments") or {}).get("live", 0)
    return index.meta["counts"]["nodes"], index.meta["counts"]["edges"], live


def _run(args: list[str]) -> int:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run([sys.executable, "-c", CHILD, *args], env=env, timeout=120).returncode


@pytest.fixture()
def built(tmp_path):
    (tmp_path / "kb.txt").write_text(KB)
    (tmp_path / "add.txt").write_text(ADD)
    (tmp_path / "rm.txt").write_text("Person 3\n")
    build_index(tmp_path / "kb.txt", tmp_path / "idx")
    return tmp_path


@pytest.mark.slow
@pytest.mark.parametrize("op", ["add", "remove", "compact"])
def test_killed_at_every_step_leaves_before_or_after(built, op):
    root = built / "idx"
    arg = str(built / ("add.txt" if op == "add" else "rm.txt"))
    if op == "compact":
        add_to_index(root, built / "add.txt")  # something to merge
    before = _state(root)
    outcomes = set()
    kills = [("step", s) for s in ("locked", "planned", "written", "renamed", "committed")]
    kills += [("save", str(n)) for n in range(1, 16)]
    for kind, at in kills:
        rc = _run([op, str(root), arg, kind, at])
        after = _state(root)  # opens: never in between
        report = verify_index(root)
        assert report["ok"], (kind, at, report["problems"])
        outcomes.add((rc, after))
        if after != before:  # it committed: undo the change for the next kill
            assert rc in (0, 9)
            build_index(built / "kb.txt", root)
            if op == "compact":
                add_to_index(root, built / "add.txt")
            assert _state(root) == before
    states = {after for _, after in outcomes}
    assert before in states and len(states) == 2, outcomes  # both before and after seen


@pytest.mark.slow
def test_a_random_sigkill_never_breaks_the_index(built):
    root = built / "idx"
    before = _state(root)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    seen = set()
    for delay in (0.3, 0.6, 0.9, 1.2, 1.6, 2.5):
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, "add", str(root), str(built / "add.txt"), "step", "-"],
            env=env,
        )
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        child.wait()
        state = _state(root)
        assert verify_index(root)["ok"]
        seen.add(state)
    assert all(nodes >= before[0] for nodes, _, _ in seen)
    # Whatever was left behind, the next update works and verifies.
    add_to_index(root, built / "add.txt")
    assert verify_index(root)["ok"]


def test_a_reader_keeps_its_snapshot(built):
    root = built / "idx"
    old = open_index(root)
    old_tools = GraphTools(old)
    first = old_tools.search_in_graph("Newcomer Star").to_dict()
    add_to_index(root, built / "add.txt")
    remove_from_index(root, nodes_file=built / "rm.txt")
    # The opened snapshot still answers as before, from the files it mapped.
    assert old_tools.search_in_graph("Newcomer Star").to_dict() == first
    assert old.graph.n_nodes == 40 + 7 + 5
    new = GraphTools(open_index(root))
    assert new.search_in_graph("Newcomer Star").hits[0].name == "Newcomer Star"
    compact_index(root)
    assert old_tools.search_in_graph("Newcomer Star").to_dict() == first  # still mapped
    assert json.loads((root / "meta.json").read_text())["compacted"]["segments"] == 2


@pytest.mark.slow
def test_what_a_killed_update_left_is_cleared_by_the_next(built):
    root = built / "idx"
    assert _run(["add", str(root), str(built / "add.txt"), "step", "written"]) == 9
    assert _run(["add", str(root), str(built / "add.txt"), "step", "renamed"]) == 9
    left = sorted(p.name for p in (root / "segments").iterdir())
    assert left and all(p.startswith(".tmp-") or p == "000001" for p in left), left
    add_to_index(root, built / "add.txt")
    assert sorted(p.name for p in (root / "segments").iterdir()) == ["000001"]
    assert verify_index(root)["ok"]
