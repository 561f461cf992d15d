"""Gold passages of a question set found among an index's passage nodes.

MuSiQue and HotpotQA name a question's supporting paragraphs by title and text, not by
node index; a document-derived graph (:mod:`ark.graph._documents`) stores each passage
as a ``passage`` node whose text is ``title + "\\n" + text``. :class:`PassageMatcher`
finds a paragraph's node(s) the way a reader would recognise it, most exact first:

1. the same text once whitespace is collapsed (the usual case: the index was built
   from the corpus the questions came with);
2. the same letters and digits, case and punctuation aside (a corpus that joined a
   paragraph's sentences differently, HotpotQA's leading spaces);
3. the text alone, for an index built from the passages without their titles;
4. the passage nodes with the same title whose text is a piece of the paragraph's
   (``ark ingest`` cut a long paragraph into overlapping chunks: every chunk of it
   is the paragraph).

A paragraph matches a *group* of nodes (one, or its chunks); recall counts the
paragraph retrieved when any node of its group is. A paragraph that matches nothing
gets an empty group: the caller counts it, and recall counts it as not retrieved.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ark._safe import JSON_ERRORS, clean, json_problem, jsonl_lines
from ark.errors import ArkError
from ark.graph import passage_ids, passage_text

if TYPE_CHECKING:
    from ark.graph import Graph

_SPACE = re.compile(r"\s+")
_NOT_ALNUM = re.compile(r"[\W_]+")


def collapse_space(text: str) -> str:
    """Whitespace runs as one space, ends stripped."""
    return _SPACE.sub(" ", text).strip()


def letters_and_digits(text: str) -> str:
    """Only the letters and digits, case-folded: what survives any re-spacing or
    re-punctuation of a text (and so identifies a passage across corpus copies)."""
    return _NOT_ALNUM.sub("", text.casefold())


class PassageMatcher:
    """Finds a (title, text) paragraph among the passage nodes of ``graph``.

    Built once per question file (one pass over the passage nodes), then
    :meth:`match` per supporting paragraph.
    """

    def __init__(self, graph: Graph, source: str = "this dataset") -> None:
        ids = passage_ids(graph)
        if len(ids) == 0:
            raise ArkError(
                f"{source} needs an index built from documents (passage nodes): "
                "`ark index build DIR --format hipporag|passages` or `ark ingest`"
            )
        self._exact: dict[str, list[int]] = {}
        self._loose: dict[str, list[int]] = {}
        self._by_title: dict[str, list[tuple[int, str]]] = {}
        names = graph.names.take(ids.tolist())
        texts = graph.texts.take(ids.tolist())
        for node, name, text in zip(ids.tolist(), names, texts, strict=True):
            self._exact.setdefault(collapse_space(text), []).append(node)
            self._loose.setdefault(letters_and_digits(text), []).append(node)
            first, newline, rest = text.partition("\n")
            titles = {collapse_space(name)}
            if newline:
                titles.add(collapse_space(first))
            for title in titles:
                body = rest if newline and collapse_space(first) == title else text
                self._by_title.setdefault(title, []).append((node, letters_and_digits(body)))

    def match_title(self, title: str) -> frozenset[int]:
        """Every passage node of the document titled ``title`` (its chunks; empty when
        the index has none): a question file that names its evidence by document."""
        return frozenset(node for node, _ in self._by_title.get(collapse_space(title), []))

    def match(self, title: str | None, text: str) -> frozenset[int]:
        """The passage node(s) of one paragraph (empty when the index lacks it)."""
        full = passage_text(title, text)
        found = self._exact.get(collapse_space(full)) or self._loose.get(letters_and_digits(full))
        if found:
            return frozenset(found)
        if not title:
            return frozenset()
        untitled = self._exact.get(collapse_space(text))  # an index built without titles
        if untitled:
            return frozenset(untitled)
        whole = letters_and_digits(text)
        chunks = [
            node
            for node, body in self._by_title.get(collapse_space(title), [])
            if body and body in whole
        ]
        return frozenset(chunks)


def read_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """The question records of a JSON array or a JSONL file, each with where it starts
    (``FILE:LINE (record N)``) so that an error names the line to fix.

    MuSiQue ships JSONL and HippoRAG's copies a JSON array; HotpotQA ships an array.
    """
    if not path.is_file():
        raise ArkError(f"question file {path} not found")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ArkError(f"{path}: cannot be read as UTF-8 text ({exc})") from None
    start = len(text) - len(text.lstrip())
    if text[start : start + 1] == "[":
        yield from _array_records(path, text, start + 1)
        return
    for lineno, line in jsonl_lines(text):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            obj = clean(json.loads(line))
        except JSON_ERRORS as exc:
            raise ArkError(f"{where}: {json_problem(exc)}") from None
        yield where, _object(obj, where)


def _array_records(path: Path, text: str, pos: int) -> Iterator[tuple[str, dict[str, Any]]]:
    decoder = json.JSONDecoder()
    n = 0
    while True:
        pos = _skip_space(path, text, pos)
        if text.startswith("]", pos):
            return
        where = f"{path}:{text.count(chr(10), 0, pos) + 1} (record {n})"
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except JSON_ERRORS as exc:
            raise ArkError(f"{where}: {json_problem(exc)}") from None
        obj = clean(obj)
        yield where, _object(obj, where)
        n += 1
        pos = _skip_space(path, text, pos)
        if text.startswith(",", pos):
            pos += 1
        elif not text.startswith("]", pos):
            line = text.count("\n", 0, pos) + 1
            raise ArkError(f"{path}:{line}: expected ',' or ']' after record {n - 1}")


def _skip_space(path: Path, text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    if pos >= len(text):
        raise ArkError(f"{path}: the JSON array is not closed (the file ends inside it)")
    return pos


def _object(obj: object, where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ArkError(f"{where}: a question record must be a JSON object")
    return obj


def field_of(record: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """``record[key]``, refused with the record's place when absent or of another type."""
    if key not in record:
        raise ArkError(f"{where}: missing {key!r}")
    value = record[key]
    if not isinstance(value, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise ArkError(f"{where}: {key!r} must be a {names}, got {type(value).__name__}")
    return value
