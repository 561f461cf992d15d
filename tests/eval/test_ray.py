"""`ark eval --ray` on a local Ray cluster started here, with a fake LLM server: the
driver's run directory has every query once, even when a worker is killed mid-run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time

import pytest
from typer.testing import CliRunner

from _helpers import metaqa_dir
from ark.cli import app
from ark.datasets import load_metaqa, sample
from ark.eval import MethodSpec, RayMethod, RetrieverMethod, RunStore, run_queries
from ark.llm import make_chat_model
from ark.retrieval import Retriever

ray = pytest.importorskip("ray", reason="the [ray] extra is not installed")
pytest.importorskip("openai", reason="the [openai] extra is not installed")
from fake_openai import FakeOpenAIServer, first_hit_policy  # noqa: E402

N_QUERIES = 12
# Ray's start (~15 s on this project's busy 2-core machine) and worker processes make
# this module take ~50 s; it stays in the default run.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster():
    started = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    print(f"ray.init took {time.perf_counter() - started:.1f} s")
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def server():
    # Every model call takes 0.1 s, so a query (3 calls) is in flight long enough to
    # be killed in the middle.
    with FakeOpenAIServer(respond=first_hit_policy, delay=0.1) as s:
        yield s


@pytest.fixture(autouse=True)
def no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def queries(index):
    return sample(load_metaqa(metaqa_dir(), 1, index=index), N_QUERIES, 0)


def spec(index, base_url, **retriever):
    return MethodSpec(
        method="ark",
        index=str(index.path),
        llm={"model": "fake-model", "base_url": base_url},
        retriever={"n_agents": 1, "max_steps": 5, "seed": 0, **retriever},
    )


def rows(out):
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def comparable(records):
    keep = ("query_id", "status", "ranking", "metrics", "prompt_tokens", "completion_tokens")
    return sorted(({k: r[k] for k in keep} for r in records), key=lambda r: r["query_id"])


def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(
    cluster, server, metaqa_index, tmp_path
):
    qs = queries(metaqa_index)
    config = {"method": "ark", "dataset": "metaqa:1-hop"}
    # The same queries in this process, without Ray: what the records must be.
    local = RetrieverMethod(
        Retriever(
            metaqa_index,
            make_chat_model(model="fake-model", base_url=server.base_url),
            n_agents=1,
            max_steps=5,
            seed=0,
        )
    )
    asyncio.run(run_queries(qs, local, RunStore(tmp_path / "local"), config, concurrency=2))

    retried = []
    method = RayMethod(
        spec(metaqa_index, server.base_url),
        workers=2,
        on_retry=lambda qid, n, why: retried.append(qid),
    )
    victim = method.worker_info[0]["pid"]
    assert {w["pid"] for w in method.worker_info} != {os.getpid()}  # separate processes
    out = tmp_path / "ray"

    def kill_when_running() -> None:
        deadline = time.time() + 60
        while time.time() < deadline:
            results = out / "results.jsonl"
            if results.exists() and results.read_text().count("\n") >= 3:
                os.kill(victim, signal.SIGKILL)
                return
            time.sleep(0.01)

    killer = threading.Thread(target=kill_when_running)
    killer.start()
    progress = []
    try:
        summary = asyncio.run(
            run_queries(
                qs,
                method,
                RunStore(out),
                config,
                concurrency=method.slots,
                progress=lambda done, total: progress.append(done),
            )
        )
    finally:
        killer.join()
        method.close()
    records = rows(out)
    assert len(records) == N_QUERIES == len({r["query_id"] for r in records})
    assert summary["failed"] == 0, [r["error"] for r in records if r["error"]]
    assert method.retries >= 1 and retried, "the kill should land on a running worker"
    assert comparable(records) == comparable(rows(tmp_path / "local"))
    # The trajectories match the records exactly: the killed attempt left none behind.
    trajs = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    assert sorted(t["query_id"] for t in trajs) == sorted(r["query_id"] for r in records)
    assert progress[-1] == N_QUERIES and progress == sorted(progress)


def test_cli_eval_on_ray_resumes_in_the_driver(cluster, server, metaqa_index, tmp_path):
    out = tmp_path / "run"
    args = [
        "eval", "--dataset", "metaqa:1-hop", "--data-dir", metaqa_dir(), "--index",
        metaqa_index.path, "--limit", "6", "--agents", "1", "--max-steps", "5",
        "--base-url", server.base_url, "--model", "fake-model", "--ray", "--ray-workers", "2",
        "--out", out, "--llm-cache", tmp_path / "cache",
    ]  # fmt: skip
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"]["ray"] == {"address": None, "workers": 2}
    assert summary["config"]["model"] == "fake-model"
    assert summary["cost"]["llm_calls"] == 6 * 3
    assert summary["llm_cache"]["misses"] == 6 * 3
    full = rows(out)

    # Kill-and-resume, seen from the store: two records and half a line survive.
    lines = (out / "results.jsonl").read_text().splitlines(keepends=True)
    (out / "results.jsonl").write_text("".join(lines[:2]) + lines[2][:40])
    calls = len(server.requests)
    result = CliRunner().invoke(app, [*map(str, args), "--resume"])
    assert result.exit_code == 0, result.output
    resumed = rows(out)
    assert comparable(resumed) == comparable(full)
    assert len(server.requests) == calls  # the four redone queries came from the cache
    assert json.loads((out / "summary.json").read_text())["llm_cache"]["hits"] == 4 * 3


def test_teacher_collection_on_ray_keeps_the_store_in_the_driver(
    cluster, server, metaqa_index, tmp_path
):
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        "".join(json.dumps({"id": q.id, "query": q.text}) + "\n" for q in queries(metaqa_index)[:4])
    )
    out = tmp_path / "teacher"
    args = [
        "distill", "collect", questions, "--index", metaqa_index.path, "--out", out,
        "--base-url", server.base_url, "--model", "fake-model", "--per-query", "2",
        "--max-steps", "5", "--ray", "--ray-workers", "2", "--json",
    ]  # fmt: skip
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    records = rows(out)
    assert sorted(r["query_id"] for r in records) == sorted(
        json.loads(line)["id"] for line in questions.read_text().splitlines()
    )
    assert all(r["status"] == "ok" and len(r["trajectory_ids"]) == 2 for r in records)
    trajectories = (out / "trajectories.jsonl").read_text().splitlines()
    assert len(trajectories) == 8
    assert json.loads((out / "config.json").read_text())["model"] == "fake-model"
