"""``ark eval --resume`` end to end: failed queries redone (or kept with
``--no-retry-failed``), and the run's full settings written and compared."""

import json

import pytest
from typer.testing import CliRunner

from ark.cli import app

pytest.importorskip("openai", reason="the [openai] extra is not installed")
from fake_openai import FakeOpenAIServer, first_hit_policy

runner = CliRunner()


def ark_eval(index, queries, out, server, *extra, code=0):
    args = [
        "eval", "--dataset", f"jsonl:{queries}", "--index", index.path, "--out", out,
        "--agents", "1", "--base-url", server.base_url, "--model", "m", "--max-retries", "0",
        *extra,
    ]  # fmt: skip
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result


def statuses(out):
    return [json.loads(x)["status"] for x in (out / "results.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_resume_redoes_failed_queries_and_says_so(metaqa_index, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"id": "a", "query": "Forrest Gump", "answer_names": ["Forrest Gump"]}\n'
        '{"id": "b", "query": "Big", "answer_names": ["Big"]}\n'
    )
    out = tmp_path / "run"
    down = True  # the server fails every request, then recovers

    def respond(request):
        return (500, {}) if down else first_hit_policy(request)

    with FakeOpenAIServer(respond=respond) as server:
        ark_eval(metaqa_index, queries, out, server, code=1)
        assert statuses(out) == ["failed", "failed"]
        config = json.loads((out / "config.json").read_text())
        assert config["adapter"] is None and config["prompt"] == "full"  # always written

        down, sent = False, len(server.requests)
        ark_eval(metaqa_index, queries, out, server, "--resume", "--no-retry-failed", code=1)
        assert len(server.requests) == sent  # told not to: nothing redone
        result = ark_eval(metaqa_index, queries, out, server, "--resume")
        assert len(server.requests) == sent + 2 * 3  # search, add, finish for each query
        assert "redid 2 failed queries" in result.output
        assert statuses(out) == ["ok", "ok"]
        summary = json.loads((out / "summary.json").read_text())
        assert summary["failed"] == 0 and summary["redone"]["failed"] == 2

        # A run made with an adapter never resumes without one.
        config["adapter"] = "/students/a.gguf"
        (out / "config.json").write_text(json.dumps(config))
        result = ark_eval(metaqa_index, queries, out, server, "--resume", code=1)
    assert "settings differ" in result.output and "adapter" in result.output
