"""A run's cost in its records and summary, and a re-run served by the LLM response
cache: two `ark eval` processes, the second making no model call at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _helpers import metaqa_dir
from ark.trajectory import read_trajectories

pytest.importorskip("openai", reason="the [openai] extra is not installed")
from fake_openai import FakeOpenAIServer, first_hit_policy

HERE = Path(__file__).parent


def ark_eval(index_dir, out, base_url, cache, *extra):
    args = [
        "eval", "--dataset", "metaqa:1-hop", "--data-dir", metaqa_dir(), "--index", index_dir,
        "--limit", "4", "--agents", "2", "--max-steps", "5", "--base-url", base_url,
        "--model", "fake-model", "--llm-cache", cache, "--out", out, *extra,
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parents[1] / "src"), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-c", "from ark.cli import app; app()", *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((Path(out) / "summary.json").read_text())
    summary["stderr"] = proc.stderr
    return summary


#: What may differ between a run and its replay: ids, clocks, and the accounting of
#: where each reply came from.
VOLATILE = {"id", "created", "wall_s", "llm_latency_s", "duration_s", "cached", "cost", "profile"}


def stable(value):
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


@pytest.mark.slow
def test_a_rerun_with_the_same_seed_replays_from_the_cache(metaqa_index, tmp_path):
    cache = tmp_path / "llm-cache"
    with FakeOpenAIServer(respond=first_hit_policy) as server:
        first = ark_eval(
            metaqa_index.path, tmp_path / "run1", server.base_url, cache,
            "--price-in", "2", "--price-out", "8",
        )  # fmt: skip
        calls = len(server.requests)
        second = ark_eval(
            metaqa_index.path, tmp_path / "run2", server.base_url, cache,
            "--price-in", "2", "--price-out", "8",
        )  # fmt: skip
        assert len(server.requests) == calls, "the re-run called the model"
    assert calls == 4 * 2 * 3  # 4 questions, 2 agents, search + add + finish
    assert {r["seed"] for r in server.requests} == {0, 1, 2, 1000, 1001, 1002}

    # First run: every call paid for, a miss of the cache.
    assert first["cost"]["llm_calls"] == calls and first["cost"]["cache_hits"] == 0
    assert first["cost"]["prompt_tokens"] == 42 * calls  # what the server reported
    assert first["cost"]["usd"] == pytest.approx((2 * 42 + 8 * 7) * calls / 1e6)
    assert first["cost"]["per_query"]["llm_calls"] == calls / 4
    assert first["llm_cache"] == {"dir": str(cache), "hits": 0, "misses": calls, "hit_rate": 0.0}
    assert first["cost"]["llm_s"] > 0 and first["cost"]["tool_s"] > 0
    # Second run: nothing paid, every call a hit.
    assert second["cost"]["llm_calls"] == 0 and second["cost"]["usd"] == 0.0
    assert second["llm_cache"]["hits"] == calls and second["llm_cache"]["hit_rate"] == 1.0
    assert second["metrics"] == first["metrics"]

    runs = [list(read_trajectories(tmp_path / r / "trajectories.jsonl")) for r in ("run1", "run2")]
    assert len(runs[0]) == 8
    assert sorted(json.dumps(stable(t.to_dict()), sort_keys=True) for t in runs[0]) == sorted(
        json.dumps(stable(t.to_dict()), sort_keys=True) for t in runs[1]
    )
    assert all(s.cached for t in runs[1] for s in t.steps)
    assert not any(s.cached for t in runs[0] for s in t.steps)
    # Each record carries its query's cost; each trajectory its own.
    record = json.loads((tmp_path / "run1" / "results.jsonl").read_text().splitlines()[0])
    assert record["cost"]["llm_calls"] == 6 and record["cost"]["usd"] > 0
    assert runs[0][0].cost is not None and runs[0][0].cost["llm_calls"] == 3
    assert "Cost: 24 model calls" in (tmp_path / "run1" / "summary.md").read_text()


@pytest.mark.slow
def test_a_damaged_cache_is_bypassed_and_no_query_fails(metaqa_index, tmp_path):
    cache = tmp_path / "llm-cache"
    with FakeOpenAIServer(respond=first_hit_policy) as server:
        first = ark_eval(metaqa_index.path, tmp_path / "run1", server.base_url, cache)
        db = cache / "llm-cache.sqlite3"
        assert (
            not (cache / "llm-cache.sqlite3-wal").exists()
            or not (cache / "llm-cache.sqlite3-wal").stat().st_size
        )  # everything is in the database file
        data = bytearray(db.read_bytes())
        third = len(data) // 3
        data[third : 2 * third] = b"\xa5" * third  # the middle third overwritten, same size
        db.write_bytes(bytes(data))
        calls = len(server.requests)
        second = ark_eval(metaqa_index.path, tmp_path / "run2", server.base_url, cache)
        assert len(server.requests) > calls  # the model answered what the cache could not
    assert second["failed"] == 0 and second["metrics"] == first["metrics"]
    assert second["stderr"].count("CacheWarning") == 1
