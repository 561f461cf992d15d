"""The three ways documents come in, and bad input naming its file and line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ark.errors import GraphFormatError
from ark.ingest import read_documents


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_jsonl_with_and_without_ids_and_titles(tmp_path):
    path = write(
        tmp_path / "docs.jsonl",
        '{"id": "a", "title": "Ada", "text": "Ada wrote notes."}\n'
        "\n"
        '{"text": "No id, no title."}\n'
        '{"id": 7, "text": "   "}\n',
    )
    found = read_documents(path)
    assert found.source_format == "jsonl"
    assert [(d.id, d.title, d.text) for d in found.documents] == [
        ("a", "Ada", "Ada wrote notes."),
        ("docs.jsonl:3", None, "No id, no title."),  # named by its line
    ]
    assert found.empty == 1  # skipped and counted, not an error


def test_a_folder_of_text_and_markdown_files(tmp_path):
    write(tmp_path / "b.md", "# Bee\nBees make honey.")
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub" / "a.txt", "Ants dig.")
    write(tmp_path / "notes.csv", "ignored,file")
    # hidden folders (a repository's .git, a .venv's licence files) are not entered
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    write(tmp_path / ".venv" / "lib" / "LICENSE.txt", "Permission is hereby granted")
    write(tmp_path / ".hidden.md", "a hidden note")
    found = read_documents(tmp_path)
    assert found.source_format == "folder"
    assert [(d.id, d.title, d.text) for d in found.documents] == [
        ("b.md", "b", "# Bee\nBees make honey."),
        ("sub/a.txt", "a", "Ants dig."),
    ]
    assert found.other_files == ["notes.csv"]  # counted and named, not read


def test_a_hipporag_corpus_list_with_repeated_titles(tmp_path):
    corpus = [
        {"title": "Paris", "text": "Paris is the capital of France."},
        {"title": "Paris", "text": "Paris is also a town in Texas."},
    ]
    found = read_documents(write(tmp_path / "corpus.json", json.dumps(corpus)))
    assert found.source_format == "json-list"
    assert [d.id for d in found.documents] == ["corpus.json:0", "corpus.json:1"]
    assert [d.title for d in found.documents] == ["Paris", "Paris"]


def test_a_hotpotqa_corpus_of_titles_and_sentences(tmp_path):
    corpus = {
        "Ada Lovelace": ["Ada Lovelace was a mathematician.", " She wrote notes."],
        "Babbage": ["Charles Babbage designed engines.", "He was English."],
        "Plain": "A text given whole.",
    }
    found = read_documents(write(tmp_path / "hotpot.json", json.dumps(corpus)))
    assert found.source_format == "json-titles"
    texts = {d.id: d.text for d in found.documents}
    assert texts["Ada Lovelace"] == "Ada Lovelace was a mathematician. She wrote notes."
    assert texts["Babbage"] == "Charles Babbage designed engines. He was English."
    assert texts["Plain"] == "A text given whole."
    assert {d.title for d in found.documents} == set(corpus)


def test_the_field_names_ir_toolkits_ship(tmp_path):
    # BEIR's corpus.jsonl ({"_id", "title", "text"}) and Pyserini's / FlashRAG's
    # ({"id", "contents"}) need no conversion; "text" and "id" win over the others.
    path = write(
        tmp_path / "corpus.jsonl",
        '{"_id": "doc0", "title": "Ada", "text": "Ada wrote notes."}\n'
        '{"id": 5, "contents": "Babbage designed engines."}\n'
        '{"id": "x", "_id": "y", "text": "kept", "contents": "not read"}\n',
    )
    found = read_documents(path)
    assert [(d.id, d.title, d.text) for d in found.documents] == [
        ("doc0", "Ada", "Ada wrote notes."),
        ("5", None, "Babbage designed engines."),
        ("x", None, "kept"),
    ]
    bad = write(tmp_path / "bad.jsonl", '{"_id": "a", "contents": 3}\n{"_id": [1], "text": "t"}\n')
    with pytest.raises(GraphFormatError, match='"contents" must be a string'):
        read_documents(bad)
    write(bad, '{"_id": [1], "text": "t"}\n')
    with pytest.raises(GraphFormatError, match='"_id" must be a string or an integer'):
        read_documents(bad)


def test_a_record_without_text_names_the_fields_it_has(tmp_path):
    path = write(tmp_path / "docs.jsonl", '{"id": "a", "body": "x", "headline": "h"}\n')
    fields = r'no "text" field \(nor "contents"\); its fields: "id", "body", "headline"'
    with pytest.raises(GraphFormatError, match=fields):
        read_documents(path)


def test_a_single_text_or_markdown_file_is_one_document(tmp_path):
    found = read_documents(write(tmp_path / "notes.md", "# Notes\nAda wrote notes."))
    assert found.source_format == "text-file"
    assert [(d.id, d.title, d.text) for d in found.documents] == [
        ("notes.md", "notes", "# Notes\nAda wrote notes.")
    ]
    with pytest.raises(GraphFormatError, match="the file is empty"):
        read_documents(write(tmp_path / "empty.txt", "  \n"))


def test_a_json_list_of_plain_texts(tmp_path):
    path = write(tmp_path / "texts.json", json.dumps(["Ada wrote notes.", {"text": "Bees."}]))
    found = read_documents(path)
    assert [(d.id, d.title, d.text) for d in found.documents] == [
        ("texts.json:0", None, "Ada wrote notes."),
        ("texts.json:1", None, "Bees."),
    ]


@pytest.mark.parametrize(
    ("content", "line", "words"),
    [
        ('{"text": "ok"}\n{"text": "cut\n', 2, "not valid JSON"),
        ('{"text": "ok"}\n["a list"]\n', 2, "expected an object"),
        ('{"title": "t"}\n', 1, 'no "text"'),
        ('{"text": "ok"}\n\n{"text": 3}\n', 3, '"text" must be a string'),
        ('{"text": "ok", "title": ["x"]}\n', 1, '"title" must be a string'),
        ('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', 2, "repeats the id of line 1"),
    ],
)
def test_bad_jsonl_names_the_file_and_line(tmp_path, content, line, words):
    path = write(tmp_path / "docs.jsonl", content)
    with pytest.raises(GraphFormatError, match=words) as info:
        read_documents(path)
    assert info.value.path == str(path) and info.value.line == line
    assert str(info.value).startswith(f"{path}:{line}: ")


def test_bad_json_corpora_name_the_file_and_the_line_or_item(tmp_path):
    broken = write(tmp_path / "broken.json", '[\n{"title": "a", "text": "x"},\n{"title": \n')
    with pytest.raises(GraphFormatError, match="not valid JSON") as info:
        read_documents(broken)
    assert info.value.line == 4
    items = write(tmp_path / "items.json", json.dumps([{"text": "x"}, {"title": "no text"}]))
    with pytest.raises(GraphFormatError, match=r"\(item 1\): the record has no \"text\""):
        read_documents(items)
    titles = write(tmp_path / "titles.json", json.dumps({"A": ["ok"], "B": [1, 2]}))
    with pytest.raises(GraphFormatError, match="title 'B': expected a list of sentences"):
        read_documents(titles)
    scalar = write(tmp_path / "scalar.json", "42")
    with pytest.raises(GraphFormatError, match="expected a list"):
        read_documents(scalar)


def test_undecodable_text_names_its_line(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_bytes(b'{"text": "fine"}\n{"text": "caf\xe9"}\n')
    with pytest.raises(GraphFormatError, match="not UTF-8") as info:
        read_documents(path)
    assert info.value.line == 2


def test_missing_input_and_empty_folder(tmp_path):
    with pytest.raises(GraphFormatError, match="no such file"):
        read_documents(tmp_path / "nowhere.jsonl")
    (tmp_path / "empty").mkdir()
    with pytest.raises(GraphFormatError, match=r"no \.txt, \.md, .* files to ingest"):
        read_documents(tmp_path / "empty")


PAGE = """<!doctype html><html><head><title>Lake  Orvin &amp; its river</title>
<style>p { color: red }</style><script>var s = "<p>not text</p>";</script></head>
<body><h1>Lake Orvin</h1><p>Lake Orvin is a <b>glacial</b> lake&nbsp;in Tarsk County.<br>
It feeds the Orvin River.</p><table><tr><th>Name</th><th>Area</th></tr>
<tr><td>Orvin</td><td>12 km&sup2;</td></tr></table><ul><li>one</li><li>two</li></ul>
<!-- a comment --><noscript>enable scripts</noscript></body></html>"""


def test_an_html_page_is_read_for_its_text_and_title(tmp_path):
    found = read_documents(write(tmp_path / "orvin.html", PAGE))
    (doc,) = found.documents
    assert doc.id == "orvin.html" and doc.title == "Lake Orvin & its river"
    assert doc.text == (
        "Lake Orvin\n"
        "Lake Orvin is a glacial lake in Tarsk County.\n"
        "It feeds the Orvin River.\n"
        "Name; Area\n"  # a table row is one line, its cells joined
        "Orvin; 12 km²\n"
        "one\n"
        "two"
    )  # no markup, script, style, comment or noscript text


def test_a_folder_reads_every_document_suffix(tmp_path):
    write(tmp_path / "a.markdown", "# A\nAnts dig.")
    write(tmp_path / "b.rst", "Bees\n====\nBees make honey.")
    write(tmp_path / "c.htm", "<p>Cats purr.</p>")  # no <title>: the file name
    write(tmp_path / "d.pdf", "%PDF-1.4")
    found = read_documents(tmp_path)
    assert [(d.id, d.title, d.text) for d in found.documents] == [
        ("a.markdown", "a", "# A\nAnts dig."),
        ("b.rst", "b", "Bees\n====\nBees make honey."),
        ("c.htm", "c", "Cats purr."),
    ]
    assert found.other_files == ["d.pdf"]
    (tmp_path / "empty").mkdir()
    write(tmp_path / "empty" / "e.pdf", "%PDF-1.4")
    with pytest.raises(GraphFormatError, match=r"no \.txt, \.md, .*\.html, \.htm files"):
        read_documents(tmp_path / "empty")


def test_html_code_is_written_as_markdown_and_a_redirect_page_is_skipped(tmp_path):
    """A documentation site's code blocks stay in the passage, fenced, so the fast
    extractor's Markdown reader leaves them out of its entities; a page that sends its
    reader on at once is no document (issue 66's first hour: 379 code entities, and
    passages titled "Redirecting...")."""
    from ark.probes import markdown_prose

    page = (
        "<html><head><title>Tests</title></head><body><p>Mark a test <code>no_run</code> "
        "to compile it only.</p><pre><code>$ rustdoc src/lib.rs -L target</code></pre>"
        "</body></html>"
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "late").mkdir()
    write(tmp_path / "docs" / "tests.html", page)
    stub = (
        '<html><head><meta http-equiv="refresh" content="0; URL=../tests.html">'
        "<title>Redirecting...</title></head><body>Redirecting to ...</body></html>"
    )
    write(tmp_path / "docs" / "old.html", stub)
    found = read_documents(tmp_path / "docs")
    (doc,) = found.documents
    assert doc.text == (
        "Mark a test `no_run` to compile it only.\n```\n$ rustdoc src/lib.rs -L target\n```"
    )
    assert "rustdoc" not in markdown_prose(doc.text) and "no_run" in markdown_prose(doc.text)
    assert found.skipped == ["old.html (a page that redirects to ../tests.html)"]
    with pytest.raises(GraphFormatError, match="redirects to"):
        read_documents(tmp_path / "docs" / "old.html")
    late = stub.replace('content="0; URL', 'content="30; URL')  # a page one reads first
    write(tmp_path / "late" / "late.html", late)
    assert read_documents(tmp_path / "late").documents[0].text == "Redirecting to ..."


def test_an_html_page_that_marks_its_content_is_read_for_that_alone(tmp_path):
    page = (
        "<html><head><title>Bees</title></head><body><nav><ul><li>Home</li><li>Ants</li>"
        "</ul></nav><main><h1>Bees</h1><p>Bees make\nhoney in\n  hives.</p>"
        "<div><div>Nested</div></div><pre>line one\nline two</pre></main>"
        "<footer>(c) the site</footer></body></html>"
    )
    (doc,) = read_documents(write(tmp_path / "bees.html", page)).documents
    # the menu and the footer repeat on every page of a site: left out
    assert doc.text == "Bees\nBees make honey in hives.\nNested\n```\nline one\nline two\n```"
    role = '<body><div class="menu">Menu</div><div role="main"><div>A</div> B</div></body>'
    (doc,) = read_documents(write(tmp_path / "role.html", role)).documents
    assert doc.text == "A\nB"


def test_an_html_page_in_the_charset_it_declares(tmp_path):
    page = '<html><head><meta charset="iso-8859-1"><title>Café</title></head><p>Crème brûlée.</p>'
    (tmp_path / "latin.html").write_bytes(page.encode("latin-1"))
    (doc,) = read_documents(tmp_path / "latin.html").documents
    assert (doc.title, doc.text) == ("Café", "Crème brûlée.")
    # undeclared, or a text file: not guessed, an error naming the line
    (tmp_path / "bare.html").write_bytes("<p>ok</p>\n<p>Crème</p>".encode("latin-1"))
    with pytest.raises(GraphFormatError, match="not UTF-8") as info:
        read_documents(tmp_path / "bare.html")
    assert info.value.line == 2


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085"])
def test_a_line_separator_inside_a_json_string_stays_in_the_record(tmp_path, separator):
    """JSON allows these raw inside a string; only ``\\n`` ends a JSON Lines record."""
    text = f"one{separator}two"
    line = json.dumps({"id": "a", "text": text}, ensure_ascii=False)
    path = write(tmp_path / "docs.jsonl", line + "\r\n" + '{"id": "b", "text": "x"}\n')
    found = read_documents(path)
    assert [(d.id, d.text) for d in found.documents] == [("a", text), ("b", "x")]


# -- what a folder's links and special files may bring in (issue 67) --------------------


def _folder(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    write(folder / "a.txt", "Ada wrote notes.")
    write(folder / "sub" / "b.txt", "Bob read them.")
    outside = write(tmp_path / "secret.txt", "the user's other file")
    return folder, outside


def test_a_link_out_of_the_folder_is_not_read_unless_asked(tmp_path):
    folder, outside = _folder(tmp_path)
    (folder / "leak.txt").symlink_to(outside)
    (folder / "inner.txt").symlink_to(folder / "a.txt")  # inside: read
    found = read_documents(folder)
    assert sorted(d.id for d in found.documents) == ["a.txt", "inner.txt", "sub/b.txt"]
    assert found.skipped == [f"leak.txt (a link to {outside}, outside the folder)"]
    followed = read_documents(folder, follow_links=True)
    assert "leak.txt" in {d.id for d in followed.documents} and not followed.skipped


def test_the_kernel_s_files_are_never_read_even_by_a_followed_link(tmp_path):
    folder, _ = _folder(tmp_path)
    (folder / "environ.txt").symlink_to("/proc/self/environ")
    for follow in (False, True):
        found = read_documents(folder, follow_links=follow)
        assert "environ.txt" not in {d.id for d in found.documents}
        assert any(s.startswith("environ.txt (") for s in found.skipped)
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    with pytest.raises(GraphFormatError, match="system file"):
        read_documents(link)


def test_link_loops_end_and_read_every_file_once(tmp_path):
    folder, _ = _folder(tmp_path)
    (folder / "loop").symlink_to("..")  # outside: skipped
    (folder / "sub" / "back").symlink_to(folder)  # inside, a folder already walked
    for follow in (False, True):
        found = read_documents(folder, follow_links=follow)
        ids = [d.id for d in found.documents]
        assert len(ids) == len(set(ids)) and {"a.txt", "sub/b.txt"} <= set(ids)
        assert any("already read" in s for s in found.skipped)


def test_a_fifo_in_the_folder_is_skipped_not_waited_on(tmp_path):
    folder, _ = _folder(tmp_path)
    os.mkfifo(folder / "pipe.txt")
    found = read_documents(folder)
    assert sorted(d.id for d in found.documents) == ["a.txt", "sub/b.txt"]
    assert found.skipped == ["pipe.txt (not a regular file (a device, a FIFO or a socket))"]


# -- hostile JSON and charsets: errors naming the file, never a traceback (issue 67) ----


@pytest.mark.parametrize(
    ("body", "why"),
    [("[" * 100_000 + "]" * 100_000, "nested too deep"), ("1" * 5000, "not readable JSON")],
)
@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_json_too_deep_or_a_number_too_long_is_an_error_naming_the_file(
    tmp_path, body, why, suffix
):
    path = write(
        tmp_path / f"docs{suffix}",
        '{"text": "fine"}\n' + body + "\n" if suffix == ".jsonl" else body,
    )
    with pytest.raises(GraphFormatError, match=why) as info:
        read_documents(path)
    assert str(path) in str(info.value)


def test_a_lone_surrogate_escape_becomes_a_replacement_character(tmp_path):
    path = write(tmp_path / "docs.jsonl", '{"id": "a", "text": "bad \\ud800 char"}\n')
    (doc,) = read_documents(path).documents
    assert doc.text == "bad \ufffd char"
    doc.text.encode("utf-8")  # what pyarrow needs to store it


@pytest.mark.parametrize("charset", ["rot13", "zlib", "undefined", "utf-16"])
def test_a_page_declaring_a_charset_that_is_no_page_encoding_is_an_error(tmp_path, charset):
    page = f'<html><head><meta charset="{charset}"></head><body>caf\xe9</body></html>'
    path = tmp_path / "page.html"
    path.write_bytes(page.encode("latin-1"))
    with pytest.raises(GraphFormatError, match="not UTF-8 text"):
        read_documents(path)


def test_a_title_written_twice_in_a_titles_corpus_is_an_error_not_a_lost_document(tmp_path):
    path = write(tmp_path / "corpus.json", '{"Ada": "first text", "Bob": "b", "Ada": "second"}')
    with pytest.raises(GraphFormatError, match="title 'Ada' appears twice"):
        read_documents(path)
    nested = write(tmp_path / "list.json", '[{"title": "A", "text": "x", "text": "y"}]')
    assert [d.text for d in read_documents(nested).documents] == ["y"]  # JSON's own rule


def test_a_file_name_that_is_not_utf8_is_read_and_can_be_written(tmp_path):
    folder, _ = _folder(tmp_path)
    name = os.fsdecode(b"caf\xe9.txt")  # Latin-1 bytes: a surrogate escape in Python
    (folder / name).write_text("Cafe notes.", encoding="utf-8")
    found = read_documents(folder)
    ids = [d.id for d in found.documents]
    assert "caf\ufffd.txt" in ids
    for d in found.documents:
        (d.id + (d.title or "")).encode("utf-8")  # what the passages file needs


def test_an_input_over_the_size_bound_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from ark.probes import ingest_documents as _documents

    monkeypatch.setattr(_documents, "MAX_FILE_BYTES", 100)
    path = write(tmp_path / "big.jsonl", '{"text": "' + "x" * 200 + '"}\n')
    with pytest.raises(GraphFormatError, match="over the 100 one input file may hold"):
        read_documents(path)
