"""Reading raw documents: a JSONL file, a folder of text files, or a JSON corpus.

Three shapes cover what users and the published GraphRAG corpora ship:

- JSONL, one document per line: ``{"id"?, "title"?, "text"}``;
- a folder of text files (``.txt``, ``.md``, ``.markdown``, ``.rst``) and HTML pages
  (``.html``, ``.htm``: their text, see :mod:`ark.ingest._html`), searched
  recursively, one document each, titled by the file name without its extension (a
  page by its ``<title>``, when it has one); hidden files and folders (a name starting
  with ``.``: ``.git``, ``.venv``) are not entered, and the other files found are
  counted and named in the report, not read; one such file given alone is one
  document;
- a JSON corpus: a list ``[{"title"?, "text", "id"?}]`` (HippoRAG's corpus files), or
  of plain strings, or an object ``{title: [sentences]}`` / ``{title: text}``
  (HotpotQA's context as a corpus).

A record's text may also be under ``contents`` (Pyserini's and FlashRAG's corpora) and
its id under ``_id`` (BEIR's) or ``idx`` (HippoRAG's): the field names of the corpora
IR toolkits ship, so that one needs no conversion; ``text`` and ``id`` win where a
record has both.

Every document gets a unique ``id``: the one it carries, else one made from its
place in the input (``file:line``, ``file:item``, the folder-relative path, the
title of a HotpotQA entry), so that chunks can name their document even when titles
repeat (a corpus of paragraphs often has several under one title). Bad input raises
:class:`ark.errors.GraphFormatError` naming the file and the line (or the item of a
JSON list, which the standard JSON parser does not place on a line). A document whose
text is empty is skipped and counted, not an error: a folder may hold an empty file.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ark._safe import JSON_ERRORS, clean, clean_text, json_problem, jsonl_lines
from ark.errors import GraphFormatError
from ark.ingest._html import HTML_SUFFIXES, declared_charset, read_html

__all__ = ["Document", "DocumentSet", "read_documents"]

#: File suffixes read as text from a folder of documents.
TEXT_SUFFIXES = (".txt", ".md", ".markdown", ".rst")
#: Every suffix a folder's document may have (HTML pages are read for their text).
DOCUMENT_SUFFIXES = (*TEXT_SUFFIXES, *HTML_SUFFIXES)
#: Where a record's text may be, the first present wins (``contents``: Pyserini's
#: JsonCollection and FlashRAG's corpora).
TEXT_FIELDS = ("text", "contents")
#: Where a record's id may be, the first present wins (``_id``: BEIR's corpora;
#: ``idx``: HippoRAG's).
ID_FIELDS = ("id", "_id", "idx")


@dataclass(frozen=True, slots=True)
class Document:
    """One input document: a unique id, an optional title and its text."""

    id: str
    text: str
    title: str | None = None


@dataclass(slots=True)
class DocumentSet:
    """The documents read from one input, and how many were skipped as empty."""

    documents: list[Document]
    source_format: str  # "jsonl" | "folder" | "text-file" | "json-list" | "json-titles"
    empty: int = 0
    #: A folder's files that are not documents (another suffix), relative paths.
    other_files: list[str] = field(default_factory=list)
    #: A folder's entries not read and why: a link out of the folder, a device, a
    #: FIFO, a folder already walked (``"rel/path (why)"``).
    skipped: list[str] = field(default_factory=list)


def read_documents(path: str | Path, *, follow_links: bool = False) -> DocumentSet:
    """The documents in ``path`` (a ``.jsonl`` file, a folder, or a ``.json`` corpus).

    A ``.json`` file is read as a whole JSON value; any other file as JSONL. Raises
    :class:`GraphFormatError` on anything malformed, naming the file and the line.

    In a folder only regular files are read, each real folder walked once (a link
    loop cannot hang it), and a symbolic link only when its target lies inside the
    folder: a link to ``/proc/self/environ`` or to a user's other files would put
    them in the index, the MCP server's answers and the extraction prompt. With
    ``follow_links`` a link may lead anywhere but to a device, a FIFO or the
    kernel's ``/proc``, ``/sys`` and ``/dev``. What was left out is in
    :attr:`DocumentSet.skipped`.
    """
    path = Path(path)
    if not path.exists():
        raise GraphFormatError(path, "no such file or directory")
    if path.is_dir():
        return _read_folder(path, follow_links)
    why = _unreadable(path)
    if why:
        raise GraphFormatError(path, f"not read: {why}")
    if path.suffix.lower() == ".json":
        return _read_json(path)
    if path.suffix.lower() in DOCUMENT_SUFFIXES:
        return _read_text_file(path)
    return _read_jsonl(path)


def _add(
    docs: DocumentSet,
    seen: dict[str, str],
    doc: Document,
    path: Path,
    where: str,
    line: int | None = None,
    unit: str = "line",
) -> None:
    """Append ``doc`` unless its text is empty; a repeated id is an error naming both
    places, since chunk ids are built from it."""
    if doc.id in seen:
        raise GraphFormatError(path, f"id {doc.id!r} repeats the id of {seen[doc.id]}", line, unit)
    seen[doc.id] = where
    if doc.text.strip():
        docs.documents.append(doc)
    else:
        docs.empty += 1


class _BadRecord(ValueError):
    """A record's fault, placed on its line or item by the caller."""


def _first(obj: dict[str, Any], names: tuple[str, ...]) -> tuple[str, Any]:
    """``(field, value)`` of the first of ``names`` that ``obj`` has (``(names[0],
    None)`` if none)."""
    for name in names:
        if name in obj:
            return name, obj[name]
    return names[0], None


def _record(obj: Any, default_id: str) -> tuple[str, str | None, str]:
    """``(id, title, text)`` of one ``{"id"?, "title"?, "text"}`` record (the text
    may be under any of :data:`TEXT_FIELDS`, the id under any of :data:`ID_FIELDS`)."""
    if not isinstance(obj, dict):
        raise _BadRecord(f'expected an object {{"text": ...}}, got {type(obj).__name__}')
    key, text = _first(obj, TEXT_FIELDS)
    if key not in obj:
        has = ", ".join(json.dumps(k) for k in list(obj)[:8]) or "none"
        raise _BadRecord(
            f'the record has no "text" field (nor {", ".join(map(json.dumps, TEXT_FIELDS[1:]))}); '
            f"its fields: {has}"
        )
    if not isinstance(text, str):
        raise _BadRecord(f'"{key}" must be a string, got {type(text).__name__}')
    title = obj.get("title")
    if title is not None and not isinstance(title, str):
        raise _BadRecord(f'"title" must be a string, got {type(title).__name__}')
    key, ident = _first(obj, ID_FIELDS)
    if ident is None:
        ident = default_id
    elif isinstance(ident, bool) or not isinstance(ident, str | int):
        raise _BadRecord(f'"{key}" must be a string or an integer, got {type(ident).__name__}')
    return str(ident), (title.strip() or None) if title else None, text


def _read_jsonl(path: Path) -> DocumentSet:
    docs = DocumentSet([], "jsonl")
    seen: dict[str, str] = {}
    for line_no, line in _lines(path):
        if not line.strip():
            continue
        try:
            obj = clean(json.loads(line))  # a lone surrogate escape becomes U+FFFD
        except JSON_ERRORS as exc:
            raise GraphFormatError(path, json_problem(exc), line_no) from None
        try:
            ident, title, text = _record(obj, f"{path.name}:{line_no}")
        except _BadRecord as exc:
            raise GraphFormatError(path, str(exc), line_no) from None
        _add(docs, seen, Document(ident, text, title), path, f"line {line_no}", line_no)
    if not docs.documents and not docs.empty:
        raise GraphFormatError(path, "no documents: expected one JSON object per line")
    return docs


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """The lines of a UTF-8 file, numbered from 1; an undecodable byte is an error
    naming its line."""
    data = _read_bytes(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise GraphFormatError(path, "not UTF-8 text", line) from None
    yield from jsonl_lines(text)


#: The largest input file read (bytes): its text, chunks and passages are all held in
#: memory, several times its size; a larger corpus is split into files or a folder.
MAX_FILE_BYTES = 1 << 30


def _read_bytes(path: Path) -> bytes:
    try:
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            data = f.read(MAX_FILE_BYTES + 1) if size <= MAX_FILE_BYTES else b""
    except OSError as exc:
        raise GraphFormatError(path, f"cannot read: {exc.strerror or exc}") from None
    if size > MAX_FILE_BYTES or len(data) > MAX_FILE_BYTES:  # large, or grew while read
        raise GraphFormatError(
            path,
            f"{max(size, len(data)):,} bytes, over the {MAX_FILE_BYTES:,} one input file may "
            "hold; split it into several files in a folder",
        )
    return data


def _read_text(path: Path, html: bool = False) -> str:
    """A file's text: UTF-8; an HTML page that is not, in the charset it declares (as
    a browser reads it). Otherwise an error naming the first undecodable line."""
    data = _read_bytes(path)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        charset = declared_charset(data) if html else None
        said = ""
        if charset not in (None, "utf-8"):
            try:
                return data.decode(charset)
            except (UnicodeError, LookupError):  # "undefined" refuses every byte
                said = f" (nor {charset}, as it declares)"
        line = data.count(b"\n", 0, exc.start) + 1
        raise GraphFormatError(path, f"not UTF-8 text{said}", line) from None


#: Where the kernel keeps files that are not documents: never read, even by a link.
_SYSTEM_ROOTS = ("/proc", "/sys", "/dev")


def _unreadable(path: Path, real: str | None = None) -> str:
    """Why the file at ``path`` (followed if a link; ``real``: its real path, when
    known) is not read as a document, or ""."""
    real = real or os.path.realpath(path)
    if any(real == r or real.startswith(r + "/") for r in _SYSTEM_ROOTS):
        return f"{real} is a system file"
    try:
        mode = os.stat(real).st_mode
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    if not stat.S_ISREG(mode):
        return "not a regular file (a device, a FIFO or a socket)"
    return ""


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip("/") + "/")


def _visible_files(
    folder: Path, root: str, follow_links: bool, walked: set[str], skipped: list[tuple[Path, str]]
) -> Iterator[Path]:
    """The regular files under ``folder``, not entering hidden folders (``.git``,
    ``.venv``: a project folder would otherwise bring thousands of vendored files)
    nor taking hidden files; every real folder once; links only into ``root`` (the
    real path of the folder given) unless ``follow_links``. What is left out goes to
    ``skipped`` with why."""
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        real = os.path.realpath(entry)
        if entry.is_symlink() and not follow_links and not _inside(real, root):
            skipped.append((entry, f"a link to {real}, outside the folder"))
            continue
        if entry.is_dir():
            if real in walked:
                skipped.append((entry, "a folder already read (a link loop or a second link)"))
                continue
            walked.add(real)
            yield from _visible_files(entry, root, follow_links, walked, skipped)
            continue
        why = _unreadable(entry, real)
        if why:
            skipped.append((entry, why))
        else:
            yield entry


def _read_folder(folder: Path, follow_links: bool = False) -> DocumentSet:
    files, others = [], []
    root = os.path.realpath(folder)
    skipped: list[tuple[Path, str]] = []
    for p in _visible_files(folder, root, follow_links, {root}, skipped):
        (files if p.suffix.lower() in DOCUMENT_SUFFIXES else others).append(p)
    if not files:
        raise GraphFormatError(
            folder, f"the folder has no {', '.join(DOCUMENT_SUFFIXES)} files to ingest"
        )
    other = [clean_text(p.relative_to(folder).as_posix()) for p in others]
    docs = DocumentSet([], "folder", other_files=other)
    docs.skipped = [clean_text(f"{p.relative_to(folder).as_posix()} ({why})") for p, why in skipped]
    seen: dict[str, str] = {}
    for file in files:
        # A name that is not UTF-8 (held with surrogate escapes) would fail every
        # write of the passages after the model was paid for: U+FFFD where it breaks.
        rel = clean_text(file.relative_to(folder).as_posix())
        doc = _file_document(file, rel)
        if isinstance(doc, str):
            docs.skipped.append(f"{rel} ({doc})")
            continue
        _add(docs, seen, doc, file, rel)
    return docs


def _read_text_file(path: Path) -> DocumentSet:
    """One text file or HTML page given alone: one document, as in a folder."""
    docs = DocumentSet([], "text-file")
    doc = _file_document(path, path.name)
    if isinstance(doc, str):
        raise GraphFormatError(path, f"no text to ingest: {doc}")
    _add(docs, {}, doc, path, path.name)
    if not docs.documents:
        raise GraphFormatError(path, "the file is empty: no text to ingest")
    return docs


def _file_document(path: Path, ident: str) -> Document | str:
    """A file as a document: a text file as it is, titled by its name without the
    extension; an HTML page as its text, titled by its ``<title>`` if it has one. A
    page that only redirects is no document: why, in words."""
    html = path.suffix.lower() in HTML_SUFFIXES
    text = _read_text(path, html=html)
    if html:
        title, text, redirect = read_html(text)
        if redirect is not None:
            return clean_text(f"a page that redirects to {redirect}")
        return Document(ident, text, title or clean_text(path.stem))
    return Document(ident, text, clean_text(path.stem))


def _read_json(path: Path) -> DocumentSet:
    text = _read_text(path)
    repeated: dict[int, list[str]] = {}  # id of an object -> its keys written twice

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(items)
        if len(obj) < len(items):
            keys = [k for k, _ in items]
            repeated[id(obj)] = sorted({k for k in keys if keys.count(k) > 1})
        return obj

    try:
        loaded = json.loads(text, object_pairs_hook=pairs)
        twice = repeated.get(id(loaded), [])
        data = clean(loaded)  # a lone surrogate escape becomes U+FFFD
    except JSON_ERRORS as exc:
        line = getattr(exc, "lineno", None)
        raise GraphFormatError(path, json_problem(exc), line) from None
    if isinstance(data, dict) and twice:  # json.loads would keep the last one only
        raise GraphFormatError(
            path, f"title {twice[0]!r} appears twice in the corpus object: give each its own"
        )
    seen: dict[str, str] = {}
    if isinstance(data, list):
        docs = DocumentSet([], "json-list")
        for i, obj in enumerate(data):
            if isinstance(obj, str):  # a list of texts: LightRAG's insert([...]) habit
                obj = {"text": obj}
            try:
                ident, title, body = _record(obj, f"{path.name}:{i}")
            except _BadRecord as exc:
                raise GraphFormatError(path, str(exc), i, "item") from None
            _add(docs, seen, Document(ident, body, title), path, f"item {i}", i, "item")
    elif isinstance(data, dict):
        docs = DocumentSet([], "json-titles")
        for title, value in data.items():
            body = _join_sentences(value, path, title)
            _add(docs, seen, Document(title, body, title.strip() or None), path, repr(title))
    else:
        raise GraphFormatError(
            path,
            'expected a list [{"title", "text"}] (or of texts) or an object {title: [sentences]}, '
            f"got {type(data).__name__}",
            1,
        )
    if not docs.documents and not docs.empty:
        raise GraphFormatError(path, "no documents in the corpus")
    return docs


def _join_sentences(value: Any, path: Path, title: str) -> str:
    """A HotpotQA entry's sentences as one text. They are joined as written (HotpotQA's
    carry their leading space), with a space added only where neither side has one."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise GraphFormatError(
            path, f"title {title!r}: expected a list of sentences (strings) or a text"
        )
    out = ""
    for sentence in value:
        if out and sentence and not out[-1].isspace() and not sentence[0].isspace():
            out += " "
        out += sentence
    return out
