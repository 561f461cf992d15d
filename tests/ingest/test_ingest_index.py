"""From documents to an index: the graph ``ark ingest`` builds, and the command itself."""

from __future__ import annotations

import json
import time
from pathlib import Path

from typer.testing import CliRunner

from _doubles import ScriptedChatModel, json_reply
from ark.cli import app
from ark.graph import ENTITY_TYPE, MENTIONS, PASSAGE_TYPE, passage_ids
from ark.index import open_index
from ark.ingest import ingest
from ark.llm import Message
from fake_openai import FakeOpenAIServer, chat_reply

LONG = " ".join(f"Word{i}" for i in range(30))


def write_docs(tmp_path: Path) -> Path:
    docs = [
        {"id": "ada", "title": "Ada Lovelace", "text": "Ada Lovelace was born in London."},
        {"id": "long", "title": "Long", "text": LONG},
    ]
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


def reply(messages: list[Message]) -> Message:
    text = next(m.content for m in messages if m.role == "user")
    if "Ada" in text:
        return json_reply(
            {
                "entities": ["Ada Lovelace", "London"],
                "triples": [["Ada Lovelace", "born in", "London"]],
            }
        )
    return json_reply({"entities": [], "triples": []})


def test_the_index_has_a_passage_per_chunk_and_the_extracted_graph(tmp_path):
    out = tmp_path / "docs.idx"
    report = ingest(
        write_docs(tmp_path), out, llm=ScriptedChatModel(reply), chunk_tokens=12, overlap=2
    )
    assert report.chunks == 1 + 3  # 30 tokens in windows of 12, step 10
    index = open_index(out)
    graph = index.graph
    assert len(passage_ids(graph)) == report.chunks
    assert report.nodes == graph.n_nodes == report.chunks + 2
    names = {graph.name(i) for i in passage_ids(graph)}
    assert "Ada Lovelace" in names and "Long" in names  # chunks of a titled doc share its title
    relations = {r.name: r for r in index.schema.relations}
    assert relations["born in"].source_type == ENTITY_TYPE == relations["born in"].target_type
    assert relations[MENTIONS].source_type == PASSAGE_TYPE
    ada = next(i for i in passage_ids(graph) if graph.name(i) == "Ada Lovelace")
    assert graph.text(ada) == "Ada Lovelace\nAda Lovelace was born in London."
    assert report.work_dir == str(tmp_path / "docs.idx.ingest")  # the default, beside it


def test_cli_ingest_through_an_openai_compatible_server(tmp_path):
    def respond(request: dict) -> tuple[int, dict]:
        user = next(m["content"] for m in request["messages"] if m["role"] == "user")
        if "Ada" in user:
            body = {
                "entities": ["Ada Lovelace", "London"],
                "triples": [["Ada Lovelace", "born in", "London"]],
            }
        else:
            body = "not json at all"
        return 200, chat_reply(json.dumps(body) if isinstance(body, dict) else body)

    docs, out = write_docs(tmp_path), tmp_path / "cli.idx"
    with FakeOpenAIServer(respond=respond) as server:
        result = CliRunner().invoke(
            app,
            [
                "ingest", str(docs), "-o", str(out), "--base-url", server.base_url,
                "--model", "fake-model", "--price-in", "1", "--price-out", "2", "--json",
            ],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["chunks"] == 2 and data["bad_replies"] == 1 and data["llm_calls"] == 2
    assert data["prompt_tokens"] == 84 and data["usd"] is not None  # the server's usage
    assert data["relations"] == 1 and data["nodes"] == 4
    assert all(r.get("response_format") for r in server.requests)  # JSON replies asked for
    assert open_index(out).graph.n_nodes == 4


def test_cli_bad_input_names_the_file_and_line(tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"text": "fine"}\n{"title": "no text"}\n')
    result = CliRunner().invoke(app, ["ingest", str(docs), "-o", str(tmp_path / "x.idx"), "--json"])
    assert result.exit_code == 1
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "GraphFormatError"
    assert error["message"].startswith(f"{docs}:2: ") and '"text"' in error["message"]
    assert not (tmp_path / "x.idx").exists()


def test_cli_refuses_an_unknown_extractor(tmp_path):
    result = CliRunner().invoke(
        app, ["ingest", str(tmp_path), "-o", str(tmp_path / "x.idx"), "--extractor", "magic"]
    )
    assert result.exit_code == 1 and "unknown --extractor" in result.output


def test_cli_names_the_files_of_a_folder_it_did_not_read(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ada.md").write_text("Ada Lovelace was born in London.", encoding="utf-8")
    for name in ("page.html", "report.pdf", "table.csv", "z.rtf"):
        (docs / name).write_text("x", encoding="utf-8")
    with FakeOpenAIServer(respond=lambda request: (200, chat_reply('{"entities": []}'))) as server:
        args = ["ingest", str(docs), "-o", str(tmp_path / "d.idx"), "--base-url", server.base_url]
        result = CliRunner().invoke(app, [*args, "--model", "fake-model"])
        as_json = CliRunner().invoke(app, [*args, "--model", "fake-model", "--json"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "3 files not read (only .txt, .md, .markdown, .rst, .html, .htm are documents): " in said
    assert "report.pdf, table.csv, z.rtf" in said  # the page is a document now
    assert json.loads(as_json.stdout)["other_files"] == ["report.pdf", "table.csv", "z.rtf"]


def test_cli_ingest_gives_up_on_a_slow_server_after_its_request_timeout(tmp_path):
    """``--request-timeout`` and ``--max-retries`` reach the model, as for the agents: a
    server that answers after 2 s is abandoned at 0.3 s per call, not waited on."""

    def respond(request: dict) -> tuple[int, dict]:
        return 200, chat_reply(json.dumps({"entities": ["Ada"], "triples": []}))

    docs, out = write_docs(tmp_path), tmp_path / "slow.idx"
    with FakeOpenAIServer(respond=respond, delay=2.0) as server:
        started = time.perf_counter()
        result = CliRunner().invoke(
            app,
            [
                "ingest", str(docs), "-o", str(out), "--base-url", server.base_url,
                "--model", "fake-model", "--request-timeout", "0.3", "--max-retries", "0",
                "--json",
            ],
        )  # fmt: skip
        elapsed = time.perf_counter() - started
    assert result.exit_code == 1 and elapsed < 4.0
    assert "failed on every chunk" in json.loads(result.stdout)["error"]["message"]


def test_an_extracted_mentions_phrase_stays_apart_from_the_passages_relation(tmp_path):
    """ "X mentions Y" between two entities is a fact, not the passage-to-entity edge:
    merged into it, entities looked like passages to the tools (issue 67)."""

    def mentions(messages: list[Message]) -> Message:
        return json_reply(
            {
                "entities": ["Ada Lovelace", "London"],
                "triples": [["Ada Lovelace", "mentions", "London"]],
            }
        )

    out = tmp_path / "m.idx"
    ingest(write_docs(tmp_path), out, llm=ScriptedChatModel(mentions), chunk_tokens=200)
    relations = {r.name: r for r in open_index(out).schema.relations}
    assert relations[MENTIONS].source_type == PASSAGE_TYPE
    assert relations["mentions (extracted)"].source_type == ENTITY_TYPE


def test_cli_ingest_interrupted_says_a_rerun_resumes(tmp_path, monkeypatch):
    """Ctrl-C exited 130 silently (issue 66): it says where the work is kept."""
    import ark.ingest

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(ark.ingest, "ingest", interrupted)
    docs, out = write_docs(tmp_path), tmp_path / "i.idx"
    result = CliRunner().invoke(app, ["ingest", str(docs), "-o", str(out)])
    assert result.exit_code == 130
    assert "run the same command again to resume" in result.output
    assert "i.idx.ingest" in result.output
