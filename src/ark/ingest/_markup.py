"""What the fast extractor reads of a Markdown document: its prose, not its markup.

A folder of ``.md`` files is a common corpus (a project's docs, notes, a wiki
export), and spaCy reads Markdown as if it were prose: backticks, table pipes and
link targets end up inside its noun phrases (``ark.llm` protocol``,
``| --base-url URL``, ``import-linter](https://...``; ``docs/decisions/documents.md``),
and a table row or a heading
with no full stop runs into the next sentence. So the extractor reads each Markdown
chunk as parsed by a CommonMark parser (markdown-it-py, which rich already brings):
the text of paragraphs, headings, list items and table cells, with inline code kept
as its words, a link as its text, and code blocks, HTML and images left out. Each
block ends a sentence; a table row is one sentence with its cells separated by
semicolons. The passage node keeps the chunk's own text: only what is extracted
from it changes.

A chunk is read as Markdown when its document's name ends with ``.md`` or
``.markdown`` (a folder's files are named by their path); text from JSONL or a JSON
corpus is read as it is.
"""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = ["MARKDOWN_SUFFIXES", "is_markdown", "markdown_prose"]

#: Document names read as Markdown.
MARKDOWN_SUFFIXES = (".md", ".markdown")

#: A table row (a line that starts with a pipe) and a table's delimiter row.
_ROW = re.compile(r"^\s*\|")
_DELIMITER = re.compile(r"^\s*\|?(\s*:?-+:?\s*\|)*\s*:?-+:?\s*\|?\s*$")
#: Block tokens whose content is not prose.
_SKIPPED = frozenset({"fence", "code_block", "html_block", "hr"})


def is_markdown(document: str) -> bool:
    """Whether a document of this name (a folder-relative path) is Markdown."""
    return document.lower().endswith(MARKDOWN_SUFFIXES)


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def markdown_prose(text: str) -> str:
    """The prose of Markdown ``text``: one line per block (paragraph, heading, list
    item, table row), each ending a sentence."""
    lines: list[str] = []
    row: list[str] | None = None
    for token in _parser().parse(_headed_tables(text)):
        if token.type in _SKIPPED:
            continue
        if token.type == "tr_open":
            row = []
        elif token.type == "tr_close" and row is not None:
            cells = [c for c in row if c]
            if cells:
                lines.append(_sentence("; ".join(cells)))
            row = None
        elif token.type == "inline":
            words = _inline_text(token.children or [])
            if row is not None:
                row.append(words)
            elif words:
                lines.append(_sentence(words))
    return "\n".join(lines)


def _headed_tables(text: str) -> str:
    """``text`` with a header given to each run of table rows that has none: a chunk
    cut from a long table starts among its rows, which a Markdown parser reads as a
    paragraph of pipes unless a header and a delimiter row come first. The header's
    cells are empty (and dropped)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not _ROW.match(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        j = i
        while j < len(lines) and _ROW.match(lines[j]):
            j += 1
        run = lines[i:j]
        while run and _DELIMITER.match(run[0]):  # cut just after a header
            run = run[1:]
        if run and not (len(run) > 1 and _DELIMITER.match(run[1])):
            columns = run[0].strip().strip("|").count("|") + 1
            out += ["|" + " |" * columns, "|" + "---|" * columns]
        out += run
        i = j
    return "\n".join(out)


def _inline_text(children: list[Any]) -> str:
    """An inline run's words: text and inline code as written, a link as its text,
    line breaks as spaces; images and inline HTML dropped."""
    parts: list[str] = []
    for child in children:  # an image is one token: its alt text is not read
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return " ".join("".join(parts).split())


def _sentence(words: str) -> str:
    """``words`` ending as a sentence does, so the parser does not run one block into
    the next."""
    return words if words[-1] in ".!?:;" else words + "."
