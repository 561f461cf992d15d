"""``ark ingest DOCS --into INDEX``: documents added to an index an ingest built give
what a full ingest of every document gives; a document given again unchanged changes
nothing, with other text it replaces its passages; a kill at any point resumes."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from _doubles import ScriptedChatModel, json_reply
from ark.cli import app
from ark.errors import ArkError
from ark.index import build_index, live_edges, open_index
from ark.ingest import ingest
from ark.llm import Message
from ark.tools import GraphTools

DOCS = [
    {"id": "d1", "title": "Ada", "text": "Ada Lovelace met Charles Babbage in London."},
    {"id": "d2", "title": "Engine", "text": "Charles Babbage designed the Analytical Engine."},
    {"id": "d3", "title": "Notes", "text": "Ada Lovelace wrote Notes on the Analytical Engine."},
    {"id": "d4", "title": "Turing", "text": "Alan Turing read the Notes in Manchester."},
    {"id": "d5", "title": "Bletchley", "text": "Alan Turing worked at Bletchley Park."},
]


def reply(messages: list[Message]) -> Message:
    """Capitalised word runs as entities, each next pair as a triple ('near')."""
    prompt = next(m.content for m in messages if m.role == "user")
    text = prompt.split("Passage:\n", 1)[1].split("\n\nReply", 1)[0]
    names = re.findall(r"[A-Z][a-z]+(?: [A-Z][a-z]+)*", text)
    triples = [[a, "near", b] for a, b in itertools.pairwise(names)]
    return json_reply({"entities": names, "triples": triples})


def write(path: Path, docs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


def held(index_dir: Path) -> dict[str, list]:
    """What an index holds: every live node and edge, and a few searches' hits."""
    tools = GraphTools(open_index(index_dir))
    g = tools.graph
    removed = getattr(g, "removed", None)
    live = [i for i in range(g.n_nodes) if removed is None or not removed[i]]
    src, rel, dst = live_edges(g)
    out = {
        "nodes": sorted((g.names[i], g.type_name(i), g.text(i)) for i in live),
        "edges": sorted(
            (g.names[s], g.relation_names[r], g.names[d])
            for s, r, d in zip(src.tolist(), rel.tolist(), dst.tolist(), strict=True)
        ),
    }
    for q in ("Ada Lovelace", "analytical engine", "Turing Manchester", "London"):
        result = tools.search_in_graph(q, k=100)
        out[q] = sorted((h.name, h.type, round(h.score, 4)) for h in getattr(result, "hits", ()))
    return out


def run(docs: Path, tmp: Path, **kw) -> object:
    return ingest(docs, llm=ScriptedChatModel(reply), chunk_tokens=64, overlap=8, **kw)


def test_added_documents_give_the_index_of_a_full_ingest(tmp_path):
    full = run(write(tmp_path / "all.jsonl", DOCS), tmp_path, out=tmp_path / "full.idx")
    run(write(tmp_path / "first.jsonl", DOCS[:4]), tmp_path, out=tmp_path / "kb.idx")
    added = run(
        write(tmp_path / "last.jsonl", DOCS[4:]), tmp_path, out=None, into=tmp_path / "kb.idx"
    )
    assert added.extracted == 1  # the new document's one chunk; nothing else asked
    assert added.update["new_documents"] == 1 and added.update["added_nodes"] >= 1
    assert added.nodes == full.nodes and added.edges == full.edges
    assert held(tmp_path / "kb.idx") == held(tmp_path / "full.idx")


def test_a_document_given_again_replaces_its_passages_or_changes_nothing(tmp_path):
    run(write(tmp_path / "first.jsonl", DOCS[:3]), tmp_path, out=tmp_path / "kb.idx")
    changed = {**DOCS[1], "text": "Charles Babbage built the Difference Engine in London."}
    again = write(tmp_path / "again.jsonl", [DOCS[0], changed])
    report = run(again, tmp_path, out=None, into=tmp_path / "kb.idx")
    assert (report.update["changed_documents"], report.update["unchanged_documents"]) == (1, 1)
    final = [DOCS[0], changed, DOCS[2]]
    run(write(tmp_path / "final.jsonl", final), tmp_path, out=tmp_path / "full.idx")
    assert held(tmp_path / "kb.idx") == held(tmp_path / "full.idx")
    same = run(
        write(tmp_path / "same.jsonl", [DOCS[0]]), tmp_path, out=None, into=tmp_path / "kb.idx"
    )
    assert same.update["unchanged_documents"] == 1 and same.extracted == 0
    assert same.update["added_nodes"] == same.update["removed_nodes"] == 0


def test_a_run_killed_before_the_sync_resumes_to_the_same_index(tmp_path, monkeypatch):
    import ark.index as index_api

    run(write(tmp_path / "first.jsonl", DOCS[:4]), tmp_path, out=tmp_path / "kb.idx")
    before = held(tmp_path / "kb.idx")
    real = index_api.sync_index

    def killed(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(index_api, "sync_index", killed)
    last = write(tmp_path / "last.jsonl", DOCS[4:])
    with pytest.raises(KeyboardInterrupt):
        run(last, tmp_path, out=None, into=tmp_path / "kb.idx")
    assert held(tmp_path / "kb.idx") == before  # the passages file moved on; the index not
    monkeypatch.setattr(index_api, "sync_index", real)
    again = run(last, tmp_path, out=None, into=tmp_path / "kb.idx")
    assert again.extracted == 0  # cached by the killed run
    run(write(tmp_path / "all.jsonl", DOCS), tmp_path, out=tmp_path / "full.idx")
    assert held(tmp_path / "kb.idx") == held(tmp_path / "full.idx")


def test_into_an_index_no_ingest_built_is_refused_before_any_extraction(tmp_path):
    (tmp_path / "kb.txt").write_text("A|r|B\n")
    build_index(tmp_path / "kb.txt", tmp_path / "kb.idx")
    model = ScriptedChatModel(reply)
    with pytest.raises(ArkError, match=r"passages\.jsonl not found"):
        ingest(write(tmp_path / "d.jsonl", DOCS), None, llm=model, into=tmp_path / "kb.idx")
    with pytest.raises(ArkError, match="not an ARK index"):
        ingest(write(tmp_path / "d.jsonl", DOCS), None, llm=model, into=tmp_path / "none")
    assert not model.calls


def test_cli_takes_out_or_into_and_says_what_it_added(tmp_path):
    runner = CliRunner()
    docs = write(tmp_path / "d.jsonl", DOCS[:1])
    result = runner.invoke(app, ["ingest", str(docs), "--extractor", "fast"])
    assert result.exit_code == 1 and "--into INDEX" in result.output
    result = runner.invoke(
        app, ["ingest", str(docs), "-o", str(tmp_path / "a"), "--into", str(tmp_path / "b")]
    )
    assert result.exit_code == 1 and "--into INDEX" in result.output


def test_a_passage_holding_a_line_separator_is_merged_whole(tmp_path):
    """JSON keeps U+2028 raw inside a string: the merge must split records on newlines
    alone (``ark._safe.jsonl_lines``), or the record is cut in two and refused."""
    run(write(tmp_path / "first.jsonl", DOCS[:2]), tmp_path, out=tmp_path / "kb.idx")
    odd = {"id": "d9", "title": "Odd", "text": "Alan Turing wrote\u2028on two lines."}
    report = run(write(tmp_path / "odd.jsonl", [odd]), tmp_path, out=None, into=tmp_path / "kb.idx")
    assert report.update["new_documents"] == 1
    run(write(tmp_path / "all.jsonl", [*DOCS[:2], odd]), tmp_path, out=tmp_path / "full.idx")
    assert held(tmp_path / "kb.idx") == held(tmp_path / "full.idx")
