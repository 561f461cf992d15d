"""benchmarks/bench_quality.py --stored: the decoder tables read from stored runs,
question by question, without a model."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_quality.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_quality", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def _store(out: Path, label: str, hits: list[int], calls: list[str], wall: float) -> None:
    """A finished run of set ``toy``: one question per entry, its Hit@1 and the query
    of its one search call."""
    run = out / label / "toy"
    run.mkdir(parents=True)
    rows = [{"query_id": f"q{i}", "metrics": {"hit@1": float(h)}} for i, h in enumerate(hits)]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    trajectories = [
        {
            "query_id": f"q{i}",
            "steps": [{"tool_calls": [{"name": "search", "arguments": {"q": c}}]}],
        }
        for i, c in enumerate(calls)
    ]
    (run / "trajectories.jsonl").write_text("".join(json.dumps(t) + "\n" for t in trajectories))
    summary = {
        "metrics": {"hit@1": 100.0 * sum(hits) / len(hits)},
        "wall_s_per_query": {"mean": wall},
    }
    (run / "summary.json").write_text(json.dumps(summary))


def test_stored_runs_make_the_decoder_and_paired_tables(bench, tmp_path, capsys):
    out = tmp_path / "quality"
    _store(out, "x-ark-s0", [1, 1, 0, 0, 1, 1], ["a", "b", "c", "d", "e", "f"], 10.0)
    _store(out, "x-llama-s0", [1, 0, 0, 0, 0, 0], ["a", "B", "c", "D", "E", "F"], 20.0)
    _store(out, "x-ark-s1", [1, 1, 1, 1, 1, 1], ["a"] * 6, 12.0)  # llama's seed 1 not run yet
    base = ["--sets", "toy=kb.tsv::jsonl:q.jsonl", "--label", "x", "--out", str(out)]
    bench.main([*base, "--decoders", "ark", "llama", "--seeds", "0", "1", "--stored"])
    printed = capsys.readouterr().out
    assert "| toy | ark | 66.7 | 100.0 | 83.3 | 11.0 |" in printed
    assert "| toy | llama | 16.7 | – | 16.7 | 20.0 |" in printed  # mean over the seeds run
    # only seed 0 has both; 3 of 6 pairs only ark answers, none only llama: p = 2 / 2**3
    assert "| toy | 0 | 6 | 2 | 1 | 3 | 0 | 0.25 |" in printed


def test_stored_needs_a_decoder_comparison_and_finished_runs(bench, tmp_path):
    base = ["--sets", "toy=kb.tsv::jsonl:q.jsonl", "--out", str(tmp_path)]
    with pytest.raises(SystemExit, match="give --decoders"):
        bench.main([*base, "--stored"])
    with pytest.raises(SystemExit, match="no finished runs"):
        bench.main([*base, "--decoders", "ark", "llama", "--stored"])
