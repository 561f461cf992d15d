"""The CLI reads the one strategy registry: a strategy registered with
``register_strategy`` or installed through the ``ark.strategies`` entry point group
is accepted by ``ark ask --strategy`` and ``ark eval --strategy``, with its own
default agent count."""

import json

import pytest
from typer.testing import CliRunner

from _strategy_plugin import first_hit
from ark.cli import app
from ark.errors import ArkError
from ark.probes import strategy_registry as _strategy
from ark.strategies import register_strategy, strategy_info, strategy_names

runner = CliRunner()


def run(*args, code=0):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result


@pytest.fixture
def registry():
    """Leave the registry and the entry point cache as they were."""
    before = dict(_strategy._STRATEGIES)
    _strategy._entry_points.cache_clear()
    yield
    _strategy._STRATEGIES.clear()
    _strategy._STRATEGIES.update(before)
    _strategy._entry_points.cache_clear()


@pytest.fixture
def server(monkeypatch):
    """An endpoint nothing is asked of: the test strategy never calls its model."""
    pytest.importorskip("openai")
    from fake_openai import FakeOpenAIServer

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer([]) as srv:
        yield srv
    assert srv.requests == []


def installed_plugin(tmp_path, monkeypatch, target="_strategy_plugin:first_hit"):
    """A distribution on sys.path whose entry point names ``target`` as ``first-hit-ep``."""
    dist = tmp_path / "site" / "ark_first_hit-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ark-first-hit\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[ark.strategies]\nfirst-hit-ep = {target}\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    _strategy._entry_points.cache_clear()


def test_ask_accepts_a_strategy_registered_in_code(metaqa_index, registry, server):
    register_strategy("first-hit-code", first_hit, default_agents=1)
    out = run(
        "ask", metaqa_index.path, "Forrest Gump", "--strategy", "first-hit-code",
        "--base-url", server.base_url, "--model", "fake-model", "--json",
    )  # fmt: skip
    data = json.loads(out.output)
    assert len(data["trajectories"]) == 1  # its registered default, not ark's three
    assert data["trajectories"][0]["config"]["strategy"] == "first-hit-code"
    assert data["ranking"][0]["name"] == "Forrest Gump"


def test_an_entry_point_strategy_is_listed_and_runs_in_ask_and_eval(
    metaqa_index, registry, server, tmp_path, monkeypatch
):
    installed_plugin(tmp_path, monkeypatch)
    assert "first-hit-ep" in strategy_names()
    assert strategy_info("first-hit-ep").default_agents == 2  # the factory's attribute

    out = run(
        "ask", metaqa_index.path, "Big", "--strategy", "first-hit-ep",
        "--base-url", server.base_url, "--model", "fake-model", "--json",
    )  # fmt: skip
    data = json.loads(out.output)
    assert [t["config"]["strategy"] for t in data["trajectories"]] == ["first-hit-ep"] * 2
    assert data["ranking"][0]["name"] == "Big"

    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "a", "query": "Big", "answer_names": ["Big"]}\n')
    run(
        "eval", "--dataset", f"jsonl:{queries}", "--index", metaqa_index.path,
        "--out", tmp_path / "run", "--strategy", "first-hit-ep",
        "--base-url", server.base_url, "--model", "fake-model",
    )  # fmt: skip
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["strategy"] == "first-hit-ep" and config["agents"] == 2
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["metrics"]["hit@1"] == 100.0


def test_a_broken_entry_point_fails_with_its_name(metaqa_index, registry, tmp_path, monkeypatch):
    installed_plugin(tmp_path, monkeypatch, target="no_such_module_xyz:factory")
    with pytest.raises(ArkError, match=r"first-hit-ep.*failed to load"):
        strategy_info("first-hit-ep")
    out = run("ask", metaqa_index.path, "Big", "--strategy", "first-hit-ep", code=1)
    assert "failed to load" in out.output
    assert "ark" in strategy_names()  # the built-ins are unaffected


def test_unknown_strategy_lists_the_registry(metaqa_index, registry):
    register_strategy("first-hit-code", first_hit)
    out = run("ask", metaqa_index.path, "Big", "--strategy", "nope", code=1)
    assert "unknown --strategy 'nope'" in out.output and "first-hit-code" in out.output
