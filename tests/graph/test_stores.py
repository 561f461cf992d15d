"""Document stores as graphs: HippoRAG's corpus + OpenIE and the passages JSONL, in the
layout of ``ark.graph._documents``; malformed extractions counted, bad files refused
with the file, line and field; both formats through ``ark index build``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ark.cli import app
from ark.errors import GraphFormatError
from ark.graph import (
    ENTITY_TYPE,
    MENTIONS,
    PASSAGE_TYPE,
    Graph,
    detect_format,
    load_graph,
    load_hipporag,
    load_passages,
    passage_ids,
)

# Invented passages; two share the title "Avel" (a passage is its title AND text).
CORPUS = [
    {"title": "Lena Marsh", "text": "Lena Marsh is a painter born in Port Avel."},
    {"title": "Avel", "text": "Avel is a river in Norland."},
    {"title": "Avel", "text": "Avel is a surname; Tomas Avel was mayor of Port Avel."},
    {"title": "Harbour seals", "text": "Harbour seals rest on the rocks at dawn."},
]
OPENIE_DOCS = [
    {
        "extracted_entities": ["Lena Marsh", "Port Avel"],
        "extracted_triples": [
            ["Lena Marsh", "Born In", "Port Avel"],
            ["Lena Marsh", "is a", "painter"],
            ["Lena Marsh", "painter"],  # two strings: malformed
        ],
    },
    {
        "extracted_entities": ["Avel", "Norland"],
        "extracted_triples": [["Avel", "river in", "Norland"], ["Avel", 3, "Norland"]],
    },
    {
        "extracted_entities": ["Tomas Avel", "port  avel"],  # Port Avel, spelled otherwise
        "extracted_triples": [
            ["Tomas Avel", "mayor of", "PORT AVEL"],
            ["Tomas Avel", "born   in", "Norland"],
            ["Tomas Avel", "was", "mayor", "of Port Avel"],  # four: malformed
            ["", "is", "Avel"],  # an empty end: malformed
        ],
    },
]


def write_store(folder: Path, *, corpus: list | None = None, docs: list | None = None) -> Path:
    """A HippoRAG store under names that are not MuSiQue's, with a question file that
    must be left alone. OpenIE entries for the first three passages; the last has none."""
    folder.mkdir(parents=True, exist_ok=True)
    corpus = CORPUS if corpus is None else corpus
    if docs is None:
        docs = [
            {**c, "passage": f"{c['title']}\n{c['text']}", **d}
            for c, d in zip(corpus, OPENIE_DOCS, strict=False)
        ]
    (folder / "a_passages.json").write_text(json.dumps(corpus), "utf-8")
    (folder / "extraction-output.json").write_text(
        json.dumps({"docs": docs, "avg_ent_chars": 7.0}), "utf-8"
    )
    questions = [{"id": "q1", "question": "Who?", "paragraphs": [{"title": "Avel"}]}]
    (folder / "questions.json").write_text(json.dumps(questions), "utf-8")
    return folder


def names_of(graph: Graph, type_name: str) -> list[str]:
    code = graph.type_id(type_name)
    return [graph.name(i) for i in range(graph.n_nodes) if graph.node_type[i] == code]


def edges(graph: Graph) -> set[tuple[str, str, str]]:
    """(source name, relation, target name) of every edge, from the adjacency."""
    out = set()
    for v in range(graph.n_nodes):
        for k in range(graph.indptr[v], graph.indptr[v + 1]):
            code = int(graph.adj_code[k])
            if code % 2 == 0:
                out.add(
                    (graph.name(v), graph.relation_names[code // 2], graph.name(graph.adj_node[k]))
                )
    return out


def mentions(graph: Graph, passage: int) -> set[str]:
    """The names of the entities a passage node mentions (its out-edges of ``mentions``)."""
    hood = graph.neighborhood(passage, relations=[graph.relation_id(MENTIONS)])
    return {graph.name(int(n)) for n in hood.neighbors}


# -- HippoRAG -------------------------------------------------------------------------


def test_hipporag_folder_builds_the_document_layout(tmp_path):
    graph = load_graph(write_store(tmp_path / "store"))  # auto: detected by content
    assert graph.node_type_names == [PASSAGE_TYPE, ENTITY_TYPE]
    # Passages in corpus order; the two "Avel" passages stay two nodes.
    assert names_of(graph, PASSAGE_TYPE) == ["Lena Marsh", "Avel", "Avel", "Harbour seals"]
    assert passage_ids(graph).tolist() == [0, 1, 2, 3]
    assert graph.text(1) == "Avel\nAvel is a river in Norland."
    assert graph.text(2).startswith("Avel\nAvel is a surname")
    # "Port Avel", "port  avel", "PORT AVEL" are one entity, named by its first spelling;
    # "Avel" the entity is not "Avel" the passage.
    entities = names_of(graph, ENTITY_TYPE)
    assert sorted(entities) == sorted(
        ["Lena Marsh", "Port Avel", "painter", "Avel", "Norland", "Tomas Avel"]
    )
    assert graph.n_nodes == 4 + 6
    # "Born In" and "born   in" are one relation; the malformed triples are not edges.
    assert graph.relation_names == [MENTIONS, "born in", "is a", "river in", "mayor of"]
    triples = {e for e in edges(graph) if e[1] != MENTIONS}
    assert triples == {
        ("Lena Marsh", "born in", "Port Avel"),
        ("Lena Marsh", "is a", "painter"),
        ("Avel", "river in", "Norland"),
        ("Tomas Avel", "mayor of", "Port Avel"),
        ("Tomas Avel", "born in", "Norland"),
    }
    # A passage mentions its extracted entities and every end of its triples, once each.
    assert [mentions(graph, p) for p in range(4)] == [
        {"Lena Marsh", "Port Avel", "painter"},  # "painter": a triple end only
        {"Avel", "Norland"},
        {"Tomas Avel", "Port Avel", "Norland"},  # not "Avel": its triple was malformed
        set(),
    ]
    assert graph.n_edges == len(triples) + 3 + 2 + 3
    # The schema is typed: mentions joins passage -> entity, every phrase entity -> entity.
    pairs = {(r.name, r.source_type, r.target_type) for r in graph.schema.relations}
    assert (MENTIONS, PASSAGE_TYPE, ENTITY_TYPE) in pairs
    assert all((s, t) == (ENTITY_TYPE, ENTITY_TYPE) for n, s, t in pairs if n != MENTIONS)


def test_hipporag_counts_what_it_skipped(tmp_path):
    notes = load_hipporag(write_store(tmp_path / "store")).notes["documents"]
    assert notes["format"] == "hipporag"
    assert Path(notes["files"]["corpus"]).name == "a_passages.json"
    assert Path(notes["files"]["openie"]).name == "extraction-output.json"
    assert notes["skipped_triples"] == 4
    assert notes["triples"] == 5 and notes["triple_edges"] == 5
    assert notes["passages"] == 4 and notes["entities"] == 6
    assert notes["passages_without_extraction"] == 1  # Harbour seals
    assert notes["layout"]["passage_type"] == PASSAGE_TYPE
    assert [e["kind"] for e in notes["skipped_examples"]] == ["triple"] * 4
    assert "docs[0]" in notes["skipped_examples"][0]["where"]


def test_hipporag_matches_by_passage_string_and_reads_the_openie_file_alone(tmp_path):
    # HippoRAG 2 writes only ``passage`` (title + newline + text) per entry.
    docs = [
        {"passage": f"{c['title']}\n{c['text']}", **d}
        for c, d in zip(CORPUS[:3], OPENIE_DOCS, strict=True)
    ]
    folder = write_store(tmp_path / "store", docs=docs)
    graph = load_hipporag(folder)
    assert graph.notes["documents"]["extractions_without_passage"] == 0
    assert names_of(graph, PASSAGE_TYPE) == ["Lena Marsh", "Avel", "Avel", "Harbour seals"]
    # The OpenIE file alone: its entries are the passages.
    alone = load_graph(write_store(tmp_path / "v1") / "extraction-output.json")
    assert names_of(alone, PASSAGE_TYPE) == ["Lena Marsh", "Avel", "Avel"]
    assert "corpus" not in alone.notes["documents"]["files"]


def test_hipporag_openie_file_with_its_corpus_named(tmp_path):
    folder = write_store(tmp_path / "store")
    (folder / "b_more.json").write_text(json.dumps(CORPUS[:2]), "utf-8")  # two corpora
    with pytest.raises(GraphFormatError, match=r"corpus=corpus_file"):
        load_hipporag(folder)
    graph = load_hipporag(folder / "extraction-output.json", corpus=folder / "a_passages.json")
    assert names_of(graph, PASSAGE_TYPE) == ["Lena Marsh", "Avel", "Avel", "Harbour seals"]
    with pytest.raises(GraphFormatError, match="expected a corpus"):
        load_hipporag(folder / "extraction-output.json", corpus=folder / "questions.json")


def test_hipporag_untitled_passages_are_named_by_file_and_place(tmp_path):
    corpus = [{"text": "Avel is a river in Norland."}, {"text": "Norland is a country."}]
    docs = [{"passage": "Avel is a river in Norland.", "extracted_entities": ["Avel"]},
            {"passage": "Tomas Avel was mayor.", "extracted_entities": ["Tomas Avel"]}]  # fmt: skip
    graph = load_hipporag(write_store(tmp_path / "store", corpus=corpus, docs=docs))
    assert names_of(graph, PASSAGE_TYPE) == [
        "a_passages #0", "a_passages #1", "extraction-output #1"
    ]  # fmt: skip
    assert [mentions(graph, p) for p in range(3)] == [{"Avel"}, set(), {"Tomas Avel"}]


def test_hipporag_adds_an_extraction_the_corpus_lacks(tmp_path):
    extra = {"title": "Norland", "text": "Norland is a country.", "extracted_entities": ["Norland"]}
    docs = [{**c, **d} for c, d in zip(CORPUS[:3], OPENIE_DOCS, strict=True)] + [extra]
    graph = load_hipporag(write_store(tmp_path / "store", docs=docs))
    assert names_of(graph, PASSAGE_TYPE)[-1] == "Norland"
    assert graph.notes["documents"]["extractions_without_passage"] == 1


def test_hipporag_folder_errors(tmp_path):
    only_corpus = tmp_path / "corpus_only"
    only_corpus.mkdir()
    (only_corpus / "c.json").write_text(json.dumps(CORPUS), "utf-8")
    with pytest.raises(GraphFormatError, match=r"no HippoRAG OpenIE JSON.*ark ingest"):
        load_hipporag(only_corpus)
    with pytest.raises(GraphFormatError, match=r"neither .* HippoRAG .* nor LightRAG"):
        load_graph(only_corpus)
    # The corpus file passed as SOURCE: told what it is.
    with pytest.raises(GraphFormatError, match="this is a corpus"):
        load_graph(only_corpus / "c.json", "hipporag")

    two = write_store(tmp_path / "two")
    (two / "b_more.json").write_text(json.dumps(CORPUS[:2]), "utf-8")
    with pytest.raises(GraphFormatError, match=r"several corpus JSON files.*a_passages\.json"):
        load_graph(two)

    other = [{"title": "X", "text": "Another corpus altogether."}]
    with pytest.raises(GraphFormatError, match="the OpenIE of another corpus"):
        load_graph(write_store(tmp_path / "other", corpus=other, docs=[
            {**c, **d} for c, d in zip(CORPUS[:3], OPENIE_DOCS, strict=True)
        ]))  # fmt: skip

    bad = write_store(tmp_path / "bad", docs=[{**CORPUS[0], "extracted_triples": "none"}])
    with pytest.raises(GraphFormatError, match=r"docs\[0\]\.extracted_triples: expected a list"):
        load_graph(bad)


# -- passages JSONL -------------------------------------------------------------------

PASSAGES = [
    {"id": "p1", "title": "Lena Marsh", "text": "Lena Marsh is a painter.",
     "entities": ["Lena Marsh", "lena marsh"], "triples": [["Lena Marsh", "is a", "painter"]]},
    {"doc": "notes.txt", "position": 3, "text": "Port Avel lies on the coast.",
     "entities": ["Port Avel", 7], "triples": [["Port Avel", "on the coast of", "Norland"],
                                               ["Port Avel", "coast"], ["Port Avel", "near", " "]]},
    {"doc": "notes.txt", "text": "The coast is rocky.", "entities": ["coast"]},
    {"id": "p4", "text": "Port Avel lies on the coast.", "extra": "ignored"},
    {"text": "A passage with nothing else."},
]  # fmt: skip


def write_jsonl(path: Path, rows: list) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def test_passages_jsonl(tmp_path):
    path = write_jsonl(tmp_path / "chunks.jsonl", [PASSAGES[0], "", *PASSAGES[1:]])
    graph = load_graph(path)
    # Names: title; "<doc> #<position>" (position given, else its order in the doc);
    # the id; the file and line. Same text on two lines: two passages.
    assert names_of(graph, PASSAGE_TYPE) == [
        "Lena Marsh", "notes.txt #3", "notes.txt #1", "p4", "chunks #6"
    ]  # fmt: skip
    assert graph.text(0) == "Lena Marsh\nLena Marsh is a painter."
    assert graph.text(1) == "Port Avel lies on the coast."
    assert sorted(names_of(graph, ENTITY_TYPE)) == [
        "Lena Marsh", "Norland", "Port Avel", "coast", "painter"
    ]  # fmt: skip
    assert graph.relation_names == [MENTIONS, "is a", "on the coast of"]
    assert [mentions(graph, p) for p in range(5)] == [
        {"Lena Marsh", "painter"}, {"Port Avel", "Norland"}, {"coast"}, set(), set()
    ]  # fmt: skip
    notes = graph.notes["documents"]
    assert notes["format"] == "passages"
    assert (notes["skipped_triples"], notes["skipped_entities"]) == (2, 1)
    assert notes["skipped_examples"][0]["where"] == "chunks.jsonl:3"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"text": "ok"', r"not valid JSON"),
        ('["text"]', r"expected a JSON object per line, got list"),
        ('{"title": "T"}', r"field 'text' must be a non-empty string \(missing\)"),
        ('{"text": "  "}', r"field 'text' must be a non-empty string"),
        ('{"text": "t", "title": 5}', r"field 'title' must be a string, got int"),
        ('{"text": "t", "position": "2"}', r"field 'position' must be an integer"),
        ('{"text": "t", "position": true}', r"field 'position' must be an integer"),
        ('{"text": "t", "triples": "a|b|c"}', r"field 'triples' must be a list, got str"),
        ('{"text": "t", "entities": {"a": 1}}', r"field 'entities' must be a list, got dict"),
        ('{"id": "p1", "text": "again"}', r"field 'id': 'p1' is already the id of line 1"),
    ],
)
def test_passages_bad_line_names_file_line_and_field(tmp_path, line, message):
    path = write_jsonl(tmp_path / "in.jsonl", [PASSAGES[0], PASSAGES[4], line])
    with pytest.raises(GraphFormatError, match=message) as caught:
        load_passages(path)
    assert caught.value.path == str(path) and caught.value.line == 3
    assert str(caught.value).startswith(f"{path}:3: ")


def test_passages_empty_file(tmp_path):
    with pytest.raises(GraphFormatError, match="no passages"):
        load_passages(write_jsonl(tmp_path / "e.jsonl", [""]))


def test_detect_format(tmp_path):
    store = write_store(tmp_path / "store")
    assert detect_format(store) == "hipporag"
    assert detect_format(store / "extraction-output.json") == "hipporag"
    assert detect_format(write_jsonl(tmp_path / "p.jsonl", PASSAGES)) == "passages"
    assert detect_format(write_jsonl(tmp_path / "p.txt", PASSAGES)) == "passages"
    triples = tmp_path / "kb.txt"
    triples.write_text("a|r|b\n", "utf-8")
    assert detect_format(triples) == "triples"


# -- the CLI --------------------------------------------------------------------------

runner = CliRunner()


def test_cli_builds_both_formats(tmp_path):
    store = write_store(tmp_path / "store")
    out = tmp_path / "h.idx"
    result = runner.invoke(app, ["index", "build", str(store), "-o", str(out), "--format",
                                 "hipporag"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "4 passages, 6 entities, 5 triples" in result.output
    assert "skipped 4 malformed triples" in result.output
    assert "1 passages with no extraction" in result.output
    meta = json.loads((out / "meta.json").read_text("utf-8"))
    assert meta["documents"]["skipped_triples"] == 4
    assert meta["documents"]["layout"]["mentions"] == MENTIONS
    assert meta["counts"]["nodes"] == 10

    path = write_jsonl(tmp_path / "p.jsonl", PASSAGES)
    result = runner.invoke(app, ["index", "build", str(path), "-o", str(tmp_path / "p.idx"),
                                 "--format", "passages", "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["documents"]["passages"] == 5 and data["documents"]["skipped_triples"] == 2
    hits = runner.invoke(app, ["search", str(tmp_path / "p.idx"), "rocky coast", "--json"])
    assert json.loads(hits.output)["results"][0]["name"] == "notes.txt #1"


def test_cli_bad_input_and_unknown_format(tmp_path):
    path = write_jsonl(tmp_path / "p.jsonl", [PASSAGES[0], '{"text": 3}'])
    result = runner.invoke(app, ["index", "build", str(path), "-o", str(tmp_path / "x")])
    assert result.exit_code == 1
    assert "p.jsonl:2" in result.output and "'text'" in result.output
    result = runner.invoke(app, ["index", "build", str(path), "-o", str(tmp_path / "x"),
                                 "--format", "bogus"])  # fmt: skip
    assert result.exit_code == 1
    assert "hipporag" in result.output and "passages" in result.output


def test_hipporag_store_beside_an_unreadable_json_and_with_a_textless_entry(tmp_path):
    """An unrelated JSON nested too deep is left alone like any other file; a corpus
    entry without text is an error naming it, not the whole corpus ignored (issue 67)."""
    folder = write_store(tmp_path / "store")
    (folder / "deep.json").write_text("[" * 100_000 + "]" * 100_000, "utf-8")
    assert load_hipporag(folder).n_nodes > 0
    broken = [dict(c) for c in CORPUS]
    del broken[1]["text"]
    with pytest.raises(GraphFormatError, match=r"\[1\]\.text: expected a non-empty string"):
        docs = [
            {**c, "passage": f"{c['title']}\n{c['text']}", **d}
            for c, d in zip(CORPUS, OPENIE_DOCS, strict=False)
        ]
        load_hipporag(write_store(tmp_path / "broken", corpus=broken, docs=docs))
