"""The command line under faults: bad characters, bad replies, secrets, bad options."""

import json

import pytest
from typer.testing import CliRunner

from ark.cli import app
from ark.index import build_index

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


def ask(index, server, *extra, code=0):
    return run(
        "ask", index.path, "who directed Forrest Gump", "--agents", "1",
        "--base-url", server.base_url, "--model", "fake-model", "--json", *extra, code=code,
    )  # fmt: skip


@pytest.mark.slow
def test_request_timeout_and_max_retries_reach_the_server_calls(metaqa_index):
    with FakeOpenAIServer([(200, chat_reply("slow"))] * 5, delay=1.0) as server:
        result = ask(metaqa_index, server, "--request-timeout", "0.2", "--max-retries", "1", code=1)
        sent = len(server.requests)
    data = json.loads(result.stdout)
    assert data["trajectories"][0]["stop_reason"] == "error"
    assert "2 attempts" in data["trajectories"][0]["error"]
    assert sent == 2


def test_eval_exits_non_zero_when_every_query_failed(metaqa_index, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"id": "a", "query": "who directed Forrest Gump", "answer_names": ["Robert Zemeckis"]}\n'
        '{"id": "b", "query": "who starred in Big", "answer_names": ["Tom Hanks"]}\n'
    )
    with FakeOpenAIServer([(500, {})] * 10) as server:
        run(
            "eval", "--dataset", f"jsonl:{queries}", "--index", metaqa_index.path,
            "--out", tmp_path / "run", "--agents", "1", "--base-url", server.base_url,
            "--model", "m", "--max-retries", "0", code=1,
        )  # fmt: skip
    records = (tmp_path / "run" / "results.jsonl").read_text().splitlines()
    assert [json.loads(r)["status"] for r in records] == ["failed", "failed"]


def test_a_model_name_without_an_endpoint_is_a_clear_error(metaqa_index):
    result = run("ask", metaqa_index.path, "q", "--model", "gpt-4.1", "--json", code=1)
    message = json.loads(result.stdout)["error"]["message"]
    assert "not a .gguf file" in message and "--base-url" in message


def test_demo_ignores_endpoints_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ARK_CACHE_DIR", str(tmp_path / "cache"))
    kb = tmp_path / "kb.txt"  # a small demo index in place, so the demo does not build one
    kb.write_text("Forrest Gump|directed_by|Robert Zemeckis\n")
    build_index(kb, tmp_path / "cache" / "demo" / "metaqa.idx")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000000000000000")
    with FakeOpenAIServer([]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("ARK_BASE_URL", server.base_url)
        result = run("demo", "--model", "gpt-4.1", "--json", code=1)
        assert server.requests == []  # nothing was sent to the configured server
    assert "not a .gguf file" in json.loads(result.stdout)["error"]["message"]


def test_a_key_echoed_in_a_401_body_is_not_written(metaqa_index, tmp_path, monkeypatch):
    key = "my-own-key-0123456789"  # not shaped like an OpenAI key: redacted by value
    monkeypatch.setenv("OPENAI_API_KEY", key)
    body = {"error": {"message": f"Incorrect API key provided: {key} (sk-proj-abcdefghijkl)"}}
    with FakeOpenAIServer([(401, body)]) as server:
        result = ask(metaqa_index, server, "--save-trajectories", tmp_path / "t", code=1)
        assert server.auth == [f"Bearer {key}"]  # the key was used ...
    saved = (tmp_path / "t" / "trajectories.jsonl").read_text()
    for text in (result.stdout, saved):  # ... and is nowhere in what was written
        assert key not in text and "sk-proj-abcdefghijkl" not in text
        assert "Incorrect API key" in text and "[redacted]" in text


def test_a_password_in_the_base_url_is_not_written(metaqa_index, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "a", "query": "q", "answer_names": ["Robert Zemeckis"]}\n')
    with FakeOpenAIServer([(500, {})] * 3) as server:
        url = server.base_url.replace("http://", "http://alice:hunter2-secret@")
        run(
            "eval", "--dataset", f"jsonl:{queries}", "--index", metaqa_index.path,
            "--out", tmp_path / "run", "--agents", "1", "--base-url", url,
            "--model", "m", "--max-retries", "0", code=1,
        )  # fmt: skip
    written = {p.name: p.read_text() for p in (tmp_path / "run").iterdir()}
    assert {"config.json", "results.jsonl", "trajectories.jsonl", "summary.json"} <= set(written)
    for name, text in written.items():
        assert "hunter2-secret" not in text, name
    assert "alice:[redacted]@127.0.0.1" in written["config.json"]


def test_eval_and_report_take_json(metaqa_index, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "a", "query": "Forrest Gump", "answer_names": ["Forrest Gump"]}\n')
    result = run(
        "eval", "--dataset", f"jsonl:{queries}", "--index", metaqa_index.path,
        "--out", tmp_path / "run", "--method", "bm25", "--json",
    )  # fmt: skip
    summary = json.loads(result.stdout)
    assert summary["queries"] == 1 and summary["metrics"]["hit@1"] == 100.0
    report = json.loads(run("report", tmp_path / "run", "--json").stdout)
    assert "comparison.csv" in report["files"] and "## Comparison" in report["markdown"]
    error = json.loads(run("report", tmp_path / "nothing", "--json", code=1).stdout)
    assert "summary.json" in error["error"]["message"]


def test_every_command_that_prints_a_result_takes_json():
    import typer.main

    group = typer.main.get_command(app)

    def commands(cmd, prefix=""):
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from (
                commands(sub, f"{prefix}{name} ")
                if hasattr(sub, "commands")
                else [(f"{prefix}{name}", sub)]
            )

    found = dict(commands(group))
    assert {"ask", "eval", "report", "index build", "index verify"} <= set(found)
    # A protocol server and an interactive session print no result to take as JSON.
    interactive = {"mcp", "chat"}
    missing = [
        n
        for n, c in found.items()
        if n not in interactive and "--json" not in {o for p in c.params for o in p.opts}
    ]
    assert missing == []


def test_live_steps_with_markup_in_a_tool_name_are_printed(capsys):
    from ark.probes import live_printer
    from ark.strategies import AgentEvent

    show = live_printer(2)
    show(AgentEvent(0, 0, "[/]", {"query": "[/bold] \ud800"}, False, "Error in [/]: [red]x"))
    err = capsys.readouterr().err
    assert "[/]" in err and "[/bold]" in err


def test_resume_with_a_damaged_config_is_a_clear_error(tmp_path):
    from ark.errors import ArkError
    from ark.eval import RunStore

    (tmp_path / "results.jsonl").write_text("")
    (tmp_path / "config.json").write_bytes(b"{\xff")
    with pytest.raises(ArkError, match=r"config\.json is damaged"):
        RunStore(tmp_path).start({"method": "bm25"}, resume=True)
