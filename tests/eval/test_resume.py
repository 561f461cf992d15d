"""A run killed with SIGKILL and resumed gives exactly the records of a clean run."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ark.errors import ArkError
from ark.eval import RunStore

HERE = Path(__file__).parent
SCRIPT = HERE / "slow_run.py"


def run(index_dir, out, delay, resume):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}
    return subprocess.Popen(
        [sys.executable, str(SCRIPT), str(index_dir), str(out), str(delay), "1" if resume else "0"],
        env=env,
    )


def records(out: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    ids = [r["query_id"] for r in rows]
    assert len(ids) == len(set(ids)), "a query was recorded twice"
    for r in rows:
        r.pop("wall_s")
    return {r["query_id"]: r for r in rows}


def test_sigkill_then_resume_matches_a_clean_run(metaqa_index, tmp_path):
    clean = tmp_path / "clean"
    assert run(metaqa_index.path, clean, 0, False).wait(timeout=120) == 0

    killed = tmp_path / "killed"
    proc = run(metaqa_index.path, killed, 0.1, False)
    results = killed / "results.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline:
        if results.exists() and results.read_text().count("\n") >= 15:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = results.read_text().count("\n")
    assert 15 <= partial < 60, "the kill should land mid-run"
    # Simulate the worst case too: a record cut in the middle of its line.
    with results.open("a") as f:
        f.write('{"query_id": "2-hop/dev/1", "status": "ok", "ranki')

    assert run(metaqa_index.path, killed, 0, True).wait(timeout=120) == 0
    assert records(killed) == records(clean)
    assert len(records(clean)) == 60
    summary = json.loads((killed / "summary.json").read_text())
    assert summary["queries"] == 60
    assert summary == {
        **json.loads((clean / "summary.json").read_text()),
        "wall_s_per_query": summary["wall_s_per_query"],
    }


def test_existing_run_needs_resume_and_same_settings(tmp_path):
    store = RunStore(tmp_path)
    store.start({"method": "bm25", "limit": 5}, resume=False)
    store.append({"query_id": "a"}, [])
    with pytest.raises(ArkError, match="--resume"):
        RunStore(tmp_path).start({"method": "bm25", "limit": 5}, resume=False)
    with pytest.raises(ArkError, match="limit"):
        RunStore(tmp_path).start({"method": "bm25", "limit": 6}, resume=True)
    done = RunStore(tmp_path).start({"method": "bm25", "limit": 5, "concurrency": 4}, resume=True)
    assert list(done) == ["a"]
