"""``--parallel/--no-parallel`` on ask and eval reach ``make_chat_model`` (None when
not given, so ``ARK_LOCAL_PARALLEL`` decides)."""

import json

import pytest
from typer.testing import CliRunner

import ark.llm
from ark.cli import app
from ark.index import build_index
from ark.llm import LLMError

runner = CliRunner()


@pytest.fixture
def tiny_index(tmp_path):
    kb = tmp_path / "kb.txt"
    kb.write_text("Forrest Gump|directed_by|Robert Zemeckis\nCast Away|starred_actors|Tom Hanks\n")
    return build_index(kb, tmp_path / "idx")


@pytest.fixture
def seen(monkeypatch):
    """The ``parallel`` each command asked for; the model then fails to load."""
    calls = []

    def refuse(*args, **kwargs):
        calls.append(kwargs.get("parallel"))
        raise LLMError("no model in this test")

    monkeypatch.setattr(ark.llm, "make_chat_model", refuse)
    return calls


@pytest.mark.parametrize(("flag", "expected"), [([], None), (["--parallel"], True),
                                               (["--no-parallel"], False)])  # fmt: skip
def test_ask_passes_parallel(tiny_index, seen, flag, expected):
    result = runner.invoke(
        app, ["ask", str(tiny_index.path), "who directed Forrest Gump", "--json", *flag]
    )
    assert result.exit_code == 1 and json.loads(result.output)["error"]["code"] == "LLMError"
    assert seen == [expected]


def test_eval_passes_parallel(tiny_index, seen, tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": "q1", "query": "who directed Forrest Gump", "answer_names": '
                         '["Robert Zemeckis"]}\n')  # fmt: skip
    runner.invoke(
        app,
        ["eval", "--dataset", f"jsonl:{questions}", "--index", str(tiny_index.path),
         "--out", str(tmp_path / "run"), "--parallel", "--json"],
    )  # fmt: skip
    assert seen == [True]
