"""One writer per run directory: a second one fails fast naming the holder, a dead
holder's lock is taken over, and the store stays consistent should the lock not hold."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ark
from _doubles import ScriptedChatModel, tool_call
from ark.datasets import Query
from ark.eval import RetrieverMethod, RunLockedError, RunStore, read_records, run_queries
from ark.index import build_index
from ark.probes import LOCK_FILE, RunLock
from ark.retrieval import Retriever

HERE = Path(__file__).parent
ARK_SRC = Path(ark.__file__).parents[1]
SCRIPT = HERE / "slow_run.py"
CONFIG = {"method": "bm25", "dataset": "test"}


def test_a_second_writer_fails_fast_naming_the_holder(tmp_path):
    first = RunStore(tmp_path / "run")
    first.start(CONFIG, resume=False)
    with pytest.raises(RunLockedError, match=f"in use by process {os.getpid()}") as caught:
        RunStore(tmp_path / "run").start(CONFIG, resume=True)
    assert caught.value.holder["pid"] == os.getpid()
    first.append({"query_id": "a"}, [])  # the first writer is undisturbed
    first.close()
    assert not (tmp_path / "run" / LOCK_FILE).exists()
    done = RunStore(tmp_path / "run").start(CONFIG, resume=True)  # free again
    assert list(done) == ["a"]


def test_a_lock_left_by_a_dead_process_is_taken_over(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / LOCK_FILE).write_text(json.dumps({"pid": 2**22 + 1, "host": "elsewhere"}))
    store = RunStore(run)
    store.start(CONFIG, resume=False)  # no process holds the OS lock: taken over
    assert json.loads((run / LOCK_FILE).read_text())["pid"] == os.getpid()
    store.close()


def test_a_failed_start_releases_the_lock_and_leaves_no_directory(tmp_path):
    with RunStore(tmp_path / "run") as store:
        store.start(CONFIG, resume=False)
        store.append({"query_id": "a"}, [])
    with pytest.raises(Exception, match="--resume"):
        RunStore(tmp_path / "run").start(CONFIG, resume=False)
    assert not (tmp_path / "run" / LOCK_FILE).exists()
    lock = RunLock(tmp_path / "run")
    lock.acquire()  # nothing still holds it
    lock.release()


def slow_run(index_dir, out, delay, resume):
    paths = [str(ARK_SRC), str(HERE.parent), str(HERE)]  # the ark this test imported
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    return subprocess.Popen(
        [sys.executable, str(SCRIPT), str(index_dir), str(out), str(delay), "1" if resume else "0"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_two_processes_on_one_run_then_kill_9_and_resume(metaqa_index, tmp_path):
    out = tmp_path / "run"
    first = slow_run(metaqa_index.path, out, 2.0, False)  # 40 s: the second starts meanwhile
    results = out / "results.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and not (results.exists() and results.read_text().count("\n")):
        time.sleep(0.05)
    second = slow_run(metaqa_index.path, out, 0, True)
    _, err = second.communicate(timeout=120)
    assert first.poll() is None, "the first run should still be writing"
    assert second.returncode != 0
    assert f"in use by process {first.pid}" in err
    first.send_signal(signal.SIGKILL)  # the holder dies without releasing anything
    first.wait()
    assert (out / LOCK_FILE).exists()
    third = slow_run(metaqa_index.path, out, 0, True)
    assert third.wait(timeout=120) == 0, third.stderr.read()
    ids = [json.loads(x)["query_id"] for x in results.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 60
    assert not (out / LOCK_FILE).exists()


KB = "Forrest Gump|directed_by|Robert Zemeckis\nCast Away|directed_by|Robert Zemeckis\n"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    root = tmp_path_factory.mktemp("kb")
    (root / "kb.txt").write_text(KB)
    return build_index(root / "kb.txt", root / "idx")


def answer_gump(index):
    gump = index.graph.names.to_pylist().index("Forrest Gump")
    plan = [
        tool_call("search_in_graph", query="Forrest Gump"),
        tool_call("add_to_answer", node_indices=[gump]),
        tool_call("finish"),
    ]
    return lambda messages: plan[min(sum(m.role == "assistant" for m in messages), 2)]


def test_two_writers_without_the_lock_leave_one_record_per_query(index, tmp_path, monkeypatch):
    """Should the lock not hold (a file system without locks): both writers do the work,
    but readers, summaries and a resume see one record per query and its trajectories."""
    monkeypatch.setattr(RunLock, "acquire", lambda self: None)
    gump = index.graph.names.to_pylist().index("Forrest Gump")
    qs = [Query(f"q{i}", f"film {i}", frozenset({gump})) for i in range(4)]
    out = tmp_path / "run"

    def writer(resume):
        retriever = Retriever(index, ScriptedChatModel(answer_gump(index)), n_agents=2)
        method = RetrieverMethod(retriever)
        return run_queries(qs, method, RunStore(out), CONFIG, resume=resume)

    async def both():
        RunStore(out).start(CONFIG, resume=False)  # the directory exists for both
        return await asyncio.gather(writer(True), writer(True))

    summaries = asyncio.run(both())
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 8  # both did the work: the lock would have prevented this
    assert [s["queries"] for s in summaries] == [4, 4]
    records = read_records(out)
    assert sorted(r["query_id"] for r in records) == ["q0", "q1", "q2", "q3"]

    class Never:
        async def __call__(self, question_id, question):
            raise AssertionError(f"{question_id} was redone")

    summary = asyncio.run(run_queries(qs, Never(), RunStore(out), CONFIG, resume=True))
    assert summary["queries"] == summary["scored"] == 4 and "redone" not in summary
    kept = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [r["query_id"] for r in kept] == [r["query_id"] for r in records]
    trajectories = [json.loads(x) for x in (out / "trajectories.jsonl").read_text().splitlines()]
    assert sorted(t["id"] for t in trajectories) == sorted(
        i for r in kept for i in r["trajectory_ids"]
    )  # the duplicates' trajectories are gone, each kept one appears once
    assert len(trajectories) == 8


def test_ark_eval_on_a_directory_in_use_is_a_clear_error(metaqa_index, tmp_path):
    from typer.testing import CliRunner

    from ark.cli import app

    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "a", "query": "Forrest Gump", "answer_names": ["Forrest Gump"]}\n')
    args = ["eval", "--dataset", f"jsonl:{queries}", "--index", str(metaqa_index.path),
            "--method", "bm25", "--out", str(tmp_path / "run"), "--resume", "--json"]  # fmt: skip
    assert CliRunner().invoke(app, args).exit_code == 0
    holder = RunLock(tmp_path / "run")  # as another run would hold it
    holder.acquire()
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "RunLockedError" and f"process {os.getpid()}" in error["message"]
    holder.release()
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output


# -- issue 42, item 8: what run.lock may be ------------------------------------------


def test_a_symlinked_lock_is_refused_and_its_target_left_alone(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    precious = tmp_path / "precious.txt"
    precious.write_text("a user's file\n")
    (run / LOCK_FILE).symlink_to(precious)
    with pytest.raises(ark.errors.ArkError, match="symbolic link"):
        RunStore(run).start(CONFIG, resume=False)
    assert precious.read_text() == "a user's file\n"


def test_a_lock_that_is_a_directory_or_a_fifo_is_a_clear_error(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / LOCK_FILE).mkdir()
    with pytest.raises(ark.errors.ArkError, match="is a directory"):
        RunStore(run).start(CONFIG, resume=True)
    (run / LOCK_FILE).rmdir()
    os.mkfifo(run / LOCK_FILE)
    with pytest.raises(ark.errors.ArkError, match="not a regular file"):
        RunStore(run).start(CONFIG, resume=True)


def _read_only(monkeypatch, blocked: str) -> None:
    """As a read-only directory behaves for a non-root user (tests may run as root,
    whom permissions do not stop): creating or writing ``blocked`` fails."""
    real_open = os.open

    def deny(path, flags, *args, **kwargs):
        if Path(path).name == blocked and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)


def test_resuming_a_read_only_run_is_a_clear_error(tmp_path, monkeypatch):
    with RunStore(tmp_path / "run") as store:
        store.start(CONFIG, resume=False)
        store.append({"query_id": "a"}, [])
    _read_only(monkeypatch, LOCK_FILE)
    with pytest.raises(ark.errors.ArkError, match="read-only"):
        RunStore(tmp_path / "run").start(CONFIG, resume=True)
    monkeypatch.undo()
    real_write = Path.write_text

    def deny_config(self, *args, **kwargs):
        if self.name == "config.json":
            raise PermissionError(13, "Permission denied", str(self))
        return real_write(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", deny_config)
    with pytest.raises(ark.errors.ArkError, match=r"config\.json is read-only"):
        RunStore(tmp_path / "run").start(CONFIG, resume=True)
    monkeypatch.undo()
    assert [r["query_id"] for r in read_records(tmp_path / "run")] == ["a"]


def test_a_report_on_a_read_only_run_is_a_clear_error(tmp_path, monkeypatch):
    from ark.eval import BM25Method
    from ark.eval.report import write_report

    (tmp_path / "kb.txt").write_text("Forrest Gump|directed_by|Robert Zemeckis\n")
    index = build_index(tmp_path / "kb.txt", tmp_path / "idx")
    method = BM25Method(index)
    asyncio.run(
        run_queries(
            [Query("q1", "Forrest Gump", frozenset({0}))],
            method,
            RunStore(tmp_path / "run"),
            {"method": method.name, "dataset": "test"},
        )
    )
    real_mkdir = Path.mkdir

    def deny(self, *args, **kwargs):
        if self.name == "report":
            raise PermissionError(13, "Permission denied", str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", deny)
    with pytest.raises(ark.errors.ArkError, match=r"read-only.*--out"):
        write_report([tmp_path / "run"], tmp_path / "run" / "report", plots=False)
