"""Runs made the real way — `ark eval` against a scripted OpenAI-compatible server, and
a BM25 baseline — for the viewer's tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from _helpers import node
from ark.cli import app


def _eval(*args: object) -> None:
    result = CliRunner().invoke(app, ["eval", *map(str, args)])
    assert result.exit_code == 0, result.output


def zemeckis_calls(index) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """A four-step trajectory: find the film, its director, answer, finish."""
    gump = node(index, "Forrest Gump")
    zemeckis = node(index, "Robert Zemeckis")
    return [
        ("search_in_graph", '{"query": "Forrest Gump"}'),
        ("search_in_neighborhood", f'{{"node_index": {gump}, "edge_type": "directed_by"}}'),
        ("add_to_answer", f'{{"node_indices": [{zemeckis}]}}'),
        ("finish", "{}"),
    ]


@pytest.fixture(scope="session")
def queries_file(metaqa_index, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("queries") / "q.jsonl"
    rows = [
        {"id": "q1", "query": "who directed [Forrest Gump]", "answer_names": ["Robert Zemeckis"]},
        {"id": "q2", "query": "who wrote <b>[Forrest Gump]</b>", "answer_names": ["Eric Roth"]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="session")
def ark_run(metaqa_index, queries_file, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real `ark eval --method ark` run of two queries, one agent each."""
    pytest.importorskip("openai", reason="the [openai] extra is not installed")
    from fake_openai import FakeOpenAIServer, chat_reply, function_call

    out = tmp_path_factory.mktemp("runs") / "ark"
    calls = zemeckis_calls(metaqa_index) * 2
    replies = [(200, chat_reply(tool_calls=[function_call(n, a)])) for n, a in calls]
    with FakeOpenAIServer(replies) as server:
        _eval(
            "--dataset", f"jsonl:{queries_file}", "--index", metaqa_index.path, "--out", out,
            "--agents", "1", "--base-url", server.base_url, "--model", "fake-model",
        )  # fmt: skip
    return out


@pytest.fixture(scope="session")
def bm25_run(metaqa_index, queries_file, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "bm25"
    _eval("--dataset", f"jsonl:{queries_file}", "--index", metaqa_index.path, "--out", out,
          "--method", "bm25")  # fmt: skip
    return out
