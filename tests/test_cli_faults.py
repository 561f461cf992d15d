"""The command line under faults: bad characters, bad replies, secrets, bad options."""

import json

import pytest
from typer.testing import CliRunner

from ark.cli import app

pytest.importorskip("openai", reason="the [openai] extra is not installed")
from fake_openai import FakeOpenAIServer, chat_reply, function_call

runner = CliRunner()


def run(*args, code=0):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result


@pytest.fixture(autouse=True)
def no_env_endpoint(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ARK_BASE_URL", "ARK_MODEL"):
        monkeypatch.delenv(name, raising=False)


def test_ask_json_survives_a_lone_surrogate(metaqa_index, tmp_path):
    replies = [
        (200, chat_reply("\ud800", [function_call("search_in_graph", '{"query": "\\ud800"}')])),
        (200, chat_reply(tool_calls=[function_call("finish", "{}")])),
        (200, chat_reply(tool_calls=[function_call("finish", "{}")])),
    ]
    with FakeOpenAIServer(replies) as server:
        result = run(
            "ask", metaqa_index.path, "who directed Forrest Gump", "--agents", "1",
            "--base-url", server.base_url, "--model", "fake-model", "--json",
            "--save-trajectories", tmp_path / "traj",
        )  # fmt: skip
    data = json.loads(result.stdout)
    assert data["trajectories"][0]["stop_reason"] == "finish"
    assert "\ufffd" in json.dumps(data, ensure_ascii=False)
    saved = (tmp_path / "traj" / "trajectories.jsonl").read_bytes().decode("utf-8")
    assert saved.count("\n") == 1
