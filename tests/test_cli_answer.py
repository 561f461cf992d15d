"""``ark ask --answer``: the answer in words with its citations, and in ``--json`` an
``answer`` object beside ``ranking`` (against a scripted OpenAI-compatible server)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from _passages_fixture import build_document_index
from ark.cli import app
from ark.index import Index

P_LENA, P_PORT, P_TOMAS = 0, 1, 2
LENA, PORT, TOMAS = 5, 6, 9


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_document_index(tmp_path_factory.mktemp("docs") / "idx")


def ask(index: Index, answer: dict[str, object], *flags: str):  # type: ignore[no-untyped-def]
    """One agent follows Lena Marsh -born in-> Port Avel <-mayor of- Tomas Reed and
    adds Tomas Reed; the answer step (by default in steps: its plan of one lookup
    falls back to the one call) gets ``answer`` as JSON."""
    pytest.importorskip("openai", reason="the [openai] extra is not installed")
    from fake_openai import FakeOpenAIServer, chat_reply, function_call

    calls = [
        ("search_in_graph", '{"query": "Lena Marsh painter"}'),
        ("search_in_neighborhood", f'{{"node_index": {LENA}}}'),
        ("search_in_neighborhood", f'{{"node_index": {PORT}}}'),
        ("add_to_answer", f'{{"node_indices": [{TOMAS}]}}'),
        ("finish", "{}"),
    ]
    replies = [(200, chat_reply(tool_calls=[function_call(n, a)])) for n, a in calls]
    if "--answer" in flags and not {"--writer", "--reader"} & set(flags):
        plan = {"lookups": ["Who is the mayor of Lena Marsh's birthplace?"]}
        replies.append((200, chat_reply(content=json.dumps(plan))))
    replies.append((200, chat_reply(content=json.dumps(answer))))
    with FakeOpenAIServer(replies) as server:
        result = CliRunner().invoke(
            app,
            [
                "ask", str(index.path), "Who is the mayor of Lena Marsh's birthplace?",
                "--agents", "1", "--base-url", server.base_url, "--model", "fake", *flags,
            ],
        )  # fmt: skip
        requests = server.requests
    assert result.exit_code == 0, result.output
    return result.output, requests


def test_ask_answer_json_has_the_answer_beside_the_ranking(docs, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    reply = {"answerable": True, "answer": "Tomas Reed", "citations": [P_TOMAS, 99]}
    out, requests = ask(docs, reply, "--answer", "--json")
    data = json.loads(out)
    assert [r["index"] for r in data["ranking"]] == [TOMAS]
    assert data["answer"]["text"] == "Tomas Reed"
    assert data["answer"]["citations"] == [P_TOMAS]  # 99 was not shown: dropped
    assert data["answer"]["dropped_citations"] == 1
    assert data["answer"]["answerable"] is True
    assert data["answer"]["evidence"][str(P_TOMAS)][0]["anchor"] == LENA
    # the chain's passages, then those the agent was only shown
    supporting = [p["index"] for p in data["passages"] if p["via"] != "seen"]
    assert sorted(supporting) == [P_LENA, P_PORT, P_TOMAS]  # order: tests/retrieval/test_passages
    # Read in steps by default: the plan had one lookup, so the one call answered.
    assert "lookups" in json.dumps(requests[-2]["response_format"])
    assert data["answer"]["steps"][-1] == {"fallback": "one lookup"}
    # The answer step asked for JSON and read the passages' text.
    assert "response_format" in requests[-1]
    assert "mayor of Port Avel since 2010" in requests[-1]["messages"][-1]["content"]


def test_ask_answer_prints_the_answer_and_its_citations(docs, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    reply = {"answerable": True, "answer": "Tomas Reed", "citations": [P_TOMAS]}
    out, _ = ask(docs, reply, "--answer", "--why")
    text = " ".join(out.split())
    assert "Answer: Tomas Reed" in text
    assert f"cites [{P_TOMAS}] Tomas Reed (passage)" in text
    assert f"search 'Lena Marsh painter' (step 1) → [{LENA}] Lena Marsh" in text


def test_ask_answer_says_when_the_evidence_does_not_answer(docs, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    reply = {"answerable": False, "answer": "No passage names a mayor.", "citations": []}
    out, _ = ask(docs, reply, "--answer")
    assert "No answer: the model said the evidence does not answer" in " ".join(out.split())


def test_without_answer_no_answer_step(docs, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out, requests = ask(docs, {}, "--json")
    data = json.loads(out)
    assert "answer" not in data and len(requests) == 5
    # the chain's passages, then those the agent was only shown
    supporting = [p["index"] for p in data["passages"] if p["via"] != "seen"]
    assert sorted(supporting) == [P_LENA, P_PORT, P_TOMAS]  # order: tests/retrieval/test_passages


@pytest.mark.parametrize("option", ["--writer", "--reader"])
def test_writer_one_writes_in_one_call_and_reader_is_its_old_name(docs, monkeypatch, option):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    reply = {"answerable": True, "answer": "Tomas Reed", "citations": [P_TOMAS]}
    out, requests = ask(docs, reply, "--answer", "--json", option, "one")
    data = json.loads(out)
    assert data["answer"]["text"] == "Tomas Reed" and "steps" not in data["answer"]
    assert len(requests) == 6  # the agent's five calls, then the one answer call


def test_help_documents_writer_not_its_old_name():
    out = CliRunner().invoke(app, ["ask", "--help"], env={"COLUMNS": "200"}).output
    assert "--writer" in out and "--reader" not in out


def test_reader_and_writer_that_disagree_are_refused(docs):
    result = CliRunner().invoke(
        app,
        ["ask", str(docs.path), "Who?", "--answer", "--writer", "one", "--reader", "steps"],
    )
    assert result.exit_code != 0 and "--reader is the old name of --writer" in result.output
