"""The text of an HTML page, as a reader sees it: what ``ark ingest`` indexes of a saved
web page or an HTML export (a wiki, a documentation site, a mail archive).

A page's markup is not prose: kept as text, tags and scripts would become passages,
BM25 terms and, worse, "entities" (``div class``) for the extractor. So a page is read
with the standard library's HTML parser: the text of the body, each block element
(paragraph, heading, list item, table row, ``<br>``) ending a line (the source's own
line breaks are spaces, except in ``<pre>``), a table row's
cells joined by semicolons (as the fast extractor's Markdown reader joins them);
``<script>``, ``<style>``, ``<template>``, ``<noscript>`` and ``<head>`` left out,
except the ``<title>``, which becomes the document's title. Where the page marks its
content (``<main>``, or ``role="main"``), only that is read: a site's navigation,
sidebar and footer repeat on every page, and would otherwise make every page's first
passage the same menu and its words hubs of the graph. Character references are
decoded. No network, no dependency.

Code is written as Markdown writes it — a ``<pre>`` block between fences, inline
``<code>`` between backticks — so the passage keeps it (a question may name a flag
or a function) while the fast extractor, which reads HTML documents through the
Markdown reader (:mod:`._markup`), leaves code blocks out of its entities. A page
that sends its reader on at once (``<meta http-equiv="refresh" content="0;
url=...">``: a browser never shows it) is no document: :func:`read_html` says where
it redirects, and the folder reader skips it, saying so.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

__all__ = ["HTML_SUFFIXES", "declared_charset", "html_text", "is_html", "read_html"]

#: File suffixes read as HTML.
HTML_SUFFIXES = (".html", ".htm")

#: Elements whose content is not the page's text.
_SKIPPED = frozenset({"script", "style", "template", "noscript", "head", "svg", "iframe"})
#: Elements that end a line of text (a block, or a break).
_BLOCKS = frozenset(
    {
        "p", "div", "br", "hr", "li", "ul", "ol", "dl", "dt", "dd", "tr", "table",
        "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "section", "article",
        "header", "footer", "nav", "aside", "main", "figure", "figcaption", "caption",
        "address", "details", "summary", "form", "fieldset", "title", "body", "html",
    }
)  # fmt: skip
#: Elements with no end tag (void): one never opens the main content, which an end
#: tag must close.
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "wbr", "area", "base", "col"})
#: A ``refresh`` meta's content that sends the reader on at once: a zero delay, a URL.
_REFRESH = re.compile(r"""^\s*0*(?:\.0*)?\s*[;,]\s*url\s*=\s*['"]?\s*([^'"\s]+)""", re.I)
#: A Markdown code fence, around a ``<pre>`` block.
_FENCE = "\n```\n"
#: A charset a page declares in its first bytes (``<meta charset="...">`` or the
#: ``http-equiv`` form), as a browser's pre-scan finds it.
_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.I)

#: Where a table cell starts (a control character no page text holds).
_CELL = "\x1f"
_SPACES = re.compile(r"[ \t\r\f\v\xa0]+")


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        #: The same, inside the page's main content (empty when it marks none).
        self.main: list[str] = []
        self.title: list[str] = []
        self._skipping: list[str] = []  # open skipped elements, innermost last
        self._main: list[str] = []  # the open main element, and its tag nested in it
        self._in_title = False
        self._pre = 0  # open <pre> elements: their line breaks are the text's
        self._code = 0  # open inline <code> elements (outside <pre>)
        #: Where a zero-delay refresh sends the reader (None: the page is read).
        self.redirect: str | None = None

    def _meta(self, attrs: list[tuple[str, str | None]]) -> None:
        values = {k.lower(): (v or "") for k, v in attrs}
        if values.get("http-equiv", "").lower() == "refresh":
            found = _REFRESH.match(values.get("content", ""))
            if found and self.redirect is None:
                self.redirect = found.group(1)

    def _emit(self, text: str) -> None:
        self.parts.append(text)
        if self._main:
            self.main.append(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _VOID and (
            (self._main and tag == self._main[-1])  # the main element's own tag, nested in it
            or (not self._main and (tag == "main" or ("role", "main") in attrs))
        ):
            self._main.append(tag)
        if tag == "meta":
            self._meta(attrs)
        if tag == "pre":
            self._pre += 1
            if self._pre == 1 and not self._skipping:
                self._emit(_FENCE)
        elif tag == "code" and not self._pre and not self._skipping:
            self._code += 1
            self._emit("`")
        if tag == "title":
            self._in_title = True
        elif tag in _SKIPPED:
            self._skipping.append(tag)
        if tag in ("td", "th"):
            self._emit(_CELL)
        elif tag in _BLOCKS:
            self._emit("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "meta":
            self._meta(attrs)
        if tag in _BLOCKS:
            self._emit("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre" and self._pre:
            self._pre -= 1
            if not self._pre and not self._skipping:
                self._emit(_FENCE)
        elif tag == "code" and self._code and not self._pre:
            self._code -= 1
            self._emit("`")
        if tag == "title":
            self._in_title = False
        elif self._skipping and tag in _SKIPPED:
            # close the innermost open element of this name (a page may not nest well)
            for i in range(len(self._skipping) - 1, -1, -1):
                if self._skipping[i] == tag:
                    del self._skipping[i:]
                    break
        if tag in _BLOCKS:
            self._emit("\n")
        if self._main and tag == self._main[-1]:
            self._main.pop()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        elif not self._skipping:
            # a line break in the source is a space, except in preformatted text
            self._emit(data if self._pre else data.replace("\n", " "))


def declared_charset(data: bytes) -> str | None:
    """The encoding a page's bytes declare in their first 1,024 bytes (a codec Python
    knows), or None: what a page saved in another encoding than UTF-8 is read with."""
    import codecs

    found = _CHARSET.search(data[:1024])
    if not found:
        return None
    try:
        info = codecs.lookup(found.group(1).decode("ascii"))
    except LookupError:
        return None
    # Only a text encoding a page can be in: not rot13 or zlib (Python codecs that are
    # no charset), and not UTF-16/32, which a declaration readable as ASCII cannot be
    # in (browsers read such a page as UTF-8).
    if not getattr(info, "_is_text_encoding", True) or info.name.startswith(("utf-16", "utf-32")):
        return None
    return info.name


def is_html(document: str) -> bool:
    """Whether a document of this name (a folder-relative path) is an HTML page."""
    return document.lower().endswith(HTML_SUFFIXES)


def html_text(page: str) -> tuple[str | None, str]:
    """``(title, text)`` of an HTML page: its ``<title>`` (None without one) and the
    text of its main content where it marks one, else of its body; a line per block."""
    title, text, _ = read_html(page)
    return title, text


def read_html(page: str) -> tuple[str | None, str, str | None]:
    """``(title, text, redirect)``: :func:`html_text`'s two, and where the page sends
    its reader at once (a zero-delay refresh; None for a page that is read)."""
    reader = _Reader()
    reader.feed(page)
    reader.close()
    main = "".join(reader.main)
    lines = []
    for line in (main if main.strip() else "".join(reader.parts)).split("\n"):
        cells = [_SPACES.sub(" ", cell).strip() for cell in line.split(_CELL)]
        line = "; ".join(cell for cell in cells if cell)
        if line:
            lines.append(line)
    title = _SPACES.sub(" ", "".join(reader.title)).strip()
    return (title or None), "\n".join(lines), reader.redirect
