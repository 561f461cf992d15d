"""`ark ask --json` reports cost and cache use; `ark llm-cache stats|clear`."""

import json

import pytest
from typer.testing import CliRunner

from ark.cli import app

pytest.importorskip("openai", reason="the [openai] extra is not installed")
from fake_openai import FakeOpenAIServer, first_hit_policy

runner = CliRunner()


def run(*args, code=0):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result


@pytest.mark.slow
def test_ask_reports_cost_and_replays_from_the_cache(metaqa_index, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cache = tmp_path / "cache"
    with FakeOpenAIServer(respond=first_hit_policy) as server:
        ask = (
            "ask", metaqa_index.path, "Forrest Gump", "--agents", "2", "--json",
            "--base-url", server.base_url, "--model", "fake-model", "--llm-cache", cache,
            "--price-in", "1", "--price-out", "4",
        )  # fmt: skip
        first = json.loads(run(*ask).output)
        assert len(server.requests) == 6
        second = json.loads(run(*ask).output)
        assert len(server.requests) == 6  # every reply from the cache
        text = run(*[a for a in ask if a != "--json"]).output
    assert first["cost"]["llm_calls"] == 6 and first["cost"]["prompt_tokens"] == 6 * 42
    assert first["cost"]["usd"] == pytest.approx(6 * (42 + 4 * 7) / 1e6)
    assert first["llm_cache"] == {"hits": 0, "misses": 6, "uncacheable": 0}
    assert second["cost"]["llm_calls"] == 0 and second["cost"]["cache_hits"] == 6
    assert second["cost"]["usd"] == 0.0 and second["llm_cache"]["hits"] == 6
    assert second["ranking"] == first["ranking"]
    assert first["trajectories"][0]["cost"]["llm_calls"] == 3
    # The profile: what the server reports (tokens), its seconds unsplit.
    prof = first["profile"]
    assert prof["steps"] == prof["profiled_steps"] == 6 and prof["prompt_tokens"] == 6 * 42
    assert prof["evaluated_tokens"] == 6 * 42 and prof["generated_tokens"] == 6 * 7
    assert prof["unsplit_s"] == pytest.approx(prof["llm_s"]) and prof["prompt_s"] == 0
    assert second["profile"]["profiled_steps"] == 0  # cache hits call no model
    assert "Time: 0.0 s evaluating the prompt (0 tokens; 0 reused)" in text
    assert "Cost: 0 model calls (6 from the cache), 0 prompt + 0 completion tokens, $0.0000" in text

    stats = json.loads(run("llm-cache", "stats", cache, "--json").output)
    assert stats["entries"] == 6 and stats["hits"] == 12
    assert stats["models"][0]["model"] == "fake-model"
    assert "6 entries, 12 hits" in run("llm-cache", "stats", cache).output
    assert json.loads(run("llm-cache", "clear", cache, "--json").output)["deleted"] == 6
    assert json.loads(run("llm-cache", "stats", cache, "--json").output)["entries"] == 0


def test_bad_cache_and_price_options(metaqa_index, tmp_path):
    out = run("llm-cache", "stats", tmp_path, "--json", code=1).output
    assert "holds no LLM cache" in json.loads(out)["error"]["message"]
    bad = tmp_path / "prices.json"
    bad.write_text('{"m": {"in": 1}}')
    out = run("ask", metaqa_index.path, "q", "--prices", bad, "--json", code=1).output
    assert "prices.json" in json.loads(out)["error"]["message"]
    out = run("ask", metaqa_index.path, "q", "--price-in", "1", "--json", code=1).output
    assert "--price-out" in json.loads(out)["error"]["message"]
