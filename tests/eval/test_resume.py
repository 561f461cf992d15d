"""A run killed with SIGKILL and resumed gives exactly the records of a clean run."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ark
from ark.errors import ArkError
from ark.eval import RunStore

HERE = Path(__file__).parent
ARK_SRC = Path(ark.__file__).parents[1]
SCRIPT = HERE / "slow_run.py"


def run(index_dir, out, delay, resume):
    paths = [str(ARK_SRC), str(HERE.parent), str(HERE)]  # the ark this test imported
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
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


@pytest.mark.slow
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
    with RunStore(tmp_path) as store:
        store.start({"method": "bm25", "limit": 5}, resume=False)
        store.append({"query_id": "a"}, [])
    with pytest.raises(ArkError, match="--resume"):
        RunStore(tmp_path).start({"method": "bm25", "limit": 5}, resume=False)
    with pytest.raises(ArkError, match="limit"):
        RunStore(tmp_path).start({"method": "bm25", "limit": 6}, resume=True)
    done = RunStore(tmp_path).start({"method": "bm25", "limit": 5, "concurrency": 4}, resume=True)
    assert list(done) == ["a"]


def test_resume_compares_every_setting_of_either_run(tmp_path):
    """A setting only the original run recorded (an adapter, say) must not be
    silently dropped when the new run leaves it out."""
    original = {"method": "ark", "adapter": "/a/student.gguf", "prompt": "compact", "seed": 0}
    with RunStore(tmp_path) as store:
        store.start(original, resume=False)
    now = {"method": "ark", "seed": 0}
    with pytest.raises(ArkError) as caught:
        RunStore(tmp_path).start(now, resume=True)
    message = str(caught.value)
    assert 'adapter: "/a/student.gguf" -> (not set)' in message
    assert 'prompt: "compact" -> "full"' in message and "seed" not in message
    # Written explicitly, the same settings resume; tuples compare as the lists read back.
    assert RunStore(tmp_path).start({**original, "concurrency": 8}, resume=True) == {}


def test_an_older_config_without_adapter_and_prompt_means_neither(tmp_path):
    with RunStore(tmp_path) as store:
        store.start({"method": "ark", "tools": [1, 2]}, resume=False)
    new = {"method": "ark", "tools": (1, 2), "adapter": None, "prompt": "full"}
    assert RunStore(tmp_path).start(new, resume=True) == {}
    with pytest.raises(ArkError, match=r'prompt: "full" -> "compact"'):
        RunStore(tmp_path).start({**new, "prompt": "compact"}, resume=True)


def test_a_config_that_named_the_writer_reader_resumes(tmp_path):
    """Runs recorded the answer writer as ``answer_reader`` before it was renamed: the
    same writer resumes, another is refused under the new name."""
    with RunStore(tmp_path) as store:
        store.start({"method": "bm25", "answer": True, "answer_reader": "steps"}, resume=False)
    new = {"method": "bm25", "answer": True, "answer_writer": "steps"}
    assert RunStore(tmp_path).start(new, resume=True) == {}
    with RunStore(tmp_path) as store:
        store.start({"method": "bm25", "answer": True, "answer_reader": "steps"}, resume=True)
    with pytest.raises(ArkError, match=r'answer_writer: "steps" -> "twice"'):
        RunStore(tmp_path).start({**new, "answer_writer": "twice"}, resume=True)
