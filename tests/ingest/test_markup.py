"""What the fast extractor reads of a Markdown chunk (markdown-it-py, no spaCy)."""

from __future__ import annotations

import pytest

from ark.probes import is_markdown, markdown_prose


def test_blocks_become_sentences_and_inline_markup_goes():
    text = (
        "# Getting started\n\n"
        "Install with `pip install ark` and read [the guide](https://example.org/g).\n"
        "It has *two* parts\n\n"
        "- build an index\n- ask a question!\n\n"
        "```python\nx = open_index(path)\n```\n\n"
        "<div>raw html</div>\n\n"
        "![a picture](p.png) Done"
    )
    assert markdown_prose(text).split("\n") == [
        "Getting started.",
        "Install with pip install ark and read the guide. It has two parts.",
        "build an index.",
        "ask a question!",
        "Done.",
    ]


def test_a_table_row_is_one_sentence_of_its_cells():
    text = "| name | role |\n|---|:---:|\n| `ark.graph` | typed nodes |\n| | empty first |\n"
    assert markdown_prose(text).split("\n") == [
        "name; role.",
        "ark.graph; typed nodes.",
        "empty first.",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "| `ark.graph` | typed nodes |\n| ark.index | the index |\n\nAfter.",  # no header
        "|---|---|\n| `ark.graph` | typed nodes |\n| ark.index | the index |\n\nAfter.",
    ],
)
def test_rows_cut_from_the_middle_of_a_table_are_still_a_table(text):
    # a chunk cut from a long table starts among its rows
    assert markdown_prose(text).split("\n") == [
        "ark.graph; typed nodes.",
        "ark.index; the index.",
        "After.",
    ]


def test_which_documents_are_markdown():
    assert is_markdown("docs/guide/Install.MD")
    assert is_markdown("notes.markdown")
    assert not is_markdown("notes.txt")
    assert not is_markdown("corpus.jsonl:12")
