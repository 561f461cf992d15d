"""Read the stores that extraction tools leave behind as graphs in the document layout.

Two input formats of ``ark index build`` (and :func:`ark.graph.load_graph`):

- ``hipporag``: a folder holding a HippoRAG corpus JSON (``[{"title", "text"}]``) and
  the OpenIE JSON HippoRAG wrote over it (``{"docs": [{"title", "text", "passage",
  "extracted_entities", "extracted_triples"}]}``), told apart by their shape, not
  their names; or the OpenIE JSON alone (it carries each passage's text);
- ``passages``: a JSONL file, one passage per line, ``{"id"?, "title"?, "text",
  "doc"?, "position"?, "entities"?, "triples"?}``: the exchange format any extractor
  can write (``ark ingest`` writes it).

Both build the layout of :mod:`ark.graph._documents` (passage and entity nodes,
``mentions``, one relation per free-text phrase). What a model extracted is model
output: a triple that is not three non-empty strings, or an entity that is not a
non-empty string, is skipped and counted (``Graph.notes``, then the index's
``meta.json``), never fatal. The structure around it (a passage without text, a field
of the wrong kind, a line that is not JSON) is the file's author's mistake, and is a
:class:`~ark.errors.GraphFormatError` naming the file, the line or entry, and the field.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ark._safe import JSON_ERRORS, json_problem
from ark.errors import GraphFormatError
from ark.graph._documents import (
    ENTITY_TYPE,
    MENTIONS,
    PASSAGE_TYPE,
    entity_key,
    layout_meta,
    passage_name,
    passage_text,
    relation_key,
)
from ark.graph._graph import Graph
from ark.graph._tables import text_lines

#: Keys of an OpenIE document that say "this is an extraction", for telling files apart.
_EXTRACTION_KEYS = ("extracted_triples", "extracted_entities")
#: Bytes read to tell a file's format without parsing it whole.
_SNIFF_BYTES = 1 << 16
#: Skipped items quoted in the notes, so that a user sees what was wrong.
_EXAMPLES = 5


class _Builder:
    """Passages, entities and triples gathered into the document layout.

    Entities are numbered among themselves and placed after every passage when the
    graph is made, so that passages can still be added after entities were seen (an
    OpenIE entry missing from its corpus).
    """

    def __init__(self) -> None:
        self.passage_names: list[str] = []
        self.passage_texts: list[str] = []
        self.entity_names: list[str] = []
        self.entity_ids: dict[str, int] = {}
        self.relation_ids: dict[str, int] = {MENTIONS: 0}
        self.mentions: list[tuple[int, int]] = []
        self.triples: list[tuple[int, int, int]] = []
        self.skipped: Counter[str] = Counter()
        self.examples: list[dict[str, str]] = []
        self.n_triples = 0
        self.entity_texts: dict[int, str] = {}  # an entity's text when not its name
        self.unknown_chunks = 0  # chunk ids a store referred to that it did not hold

    def passage(self, name: str, text: str) -> int:
        self.passage_names.append(name)
        self.passage_texts.append(text)
        return len(self.passage_names) - 1

    def _entity(self, name: str, key: str) -> int:
        found = self.entity_ids.get(key)
        if found is None:
            found = self.entity_ids[key] = len(self.entity_names)
            self.entity_names.append(" ".join(name.split()))  # the first spelling
        return found

    def skip(self, kind: str, where: str, value: Any) -> None:
        """Count a malformed item (model output gone wrong), quoting the first few."""
        self.skipped[kind] += 1
        if len(self.examples) < _EXAMPLES:
            self.examples.append({"kind": kind, "where": where, "value": repr(value)[:200]})

    def entity(self, name: str) -> int:
        """The entity node of ``name`` (one per :func:`entity_key`), made if new."""
        return self._entity(name, entity_key(name))

    def set_entity_text(self, entity: int, name: str, said: Iterable[str], kind: Any) -> bool:
        """An entity node's text when the store wrote about it (GraphRAG, LightRAG):
        the name, then each description (``said``, repeats dropped) and ``Type:
        kind``. Returns whether it had a description."""
        said = list(dict.fromkeys(d.strip() for d in said if d and d.strip()))
        lines = [" ".join(name.split()), *said]
        if isinstance(kind, str) and kind.strip():
            lines.append(f"Type: {kind.strip()}")
        self.entity_texts[entity] = "\n".join(lines)
        return bool(said)

    def passages_of(self, ids: Iterable[str], node_of: dict[str, int]) -> list[int]:
        """The passage nodes of a store's chunk ids; an id of no chunk is counted in
        :attr:`unknown_chunks`, not fatal."""
        found = []
        for chunk in ids:
            node = node_of.get(chunk)
            if node is None:
                self.unknown_chunks += 1
            else:
                found.append(node)
        return found

    def mention(self, passage: int, entity: int) -> None:
        self.mentions.append((passage, entity))

    def triple(self, head: str, phrase: str, tail: str, passages: Iterable[int]) -> None:
        """One edge ``head -[phrase]-> tail``, mentioned by each of ``passages``."""
        h, t = self.entity(head), self.entity(tail)
        rel = self.relation_ids.setdefault(relation_key(phrase), len(self.relation_ids))
        self.mentions += [(p, e) for p in passages for e in (h, t)]
        self.triples.append((h, t, rel))
        self.n_triples += 1

    def add_entities(self, passage: int, items: Iterable[Any], where: str) -> None:
        for item in items:
            key = entity_key(item) if isinstance(item, str) else ""
            if key:
                self.mention(passage, self._entity(item, key))
            else:
                self.skip("entity", where, item)

    def add_triples(self, passage: int, items: Iterable[Any], where: str) -> None:
        for item in items:
            keys = (
                [entity_key(item[0]), relation_key(item[1]), entity_key(item[2])]
                if isinstance(item, list | tuple)
                and len(item) == 3
                and all(isinstance(part, str) for part in item)
                else ()
            )
            if not keys or not all(keys):
                self.skip("triple", where, item)
                continue
            self.triple(item[0], item[1], item[2], (passage,))

    def graph(self, fmt: str, files: dict[str, str], extra: dict[str, int]) -> Graph:
        n_pass = len(self.passage_names)
        n_ent = len(self.entity_names)
        # One mentions edge per (passage, entity), one edge per distinct triple: a fact
        # extracted from two passages is one fact (each passage still mentions its ends).
        mentions = _distinct(np.array(self.mentions, dtype=np.int64).reshape(-1, 2))
        triples = _distinct(np.array(self.triples, dtype=np.int64).reshape(-1, 3))
        src = np.concatenate([mentions[:, 0], triples[:, 0] + n_pass])
        dst = np.concatenate([mentions[:, 1] + n_pass, triples[:, 1] + n_pass])
        rel = np.concatenate([np.zeros(len(mentions), dtype=np.int64), triples[:, 2]])
        graph = Graph.from_edges(
            names=self.passage_names + self.entity_names,
            node_type=np.repeat(np.array([0, 1], dtype=np.int64), [n_pass, n_ent]),
            node_type_names=[PASSAGE_TYPE, ENTITY_TYPE],
            texts=self.passage_texts
            + [self.entity_texts.get(i, name) for i, name in enumerate(self.entity_names)],
            src=src,
            dst=dst,
            rel=rel,
            relation_names=list(self.relation_ids),
        )
        graph.notes = {
            "documents": {
                "format": fmt,
                "files": files,
                "layout": layout_meta(),
                "passages": n_pass,
                "entities": n_ent,
                "triples": self.n_triples,
                "triple_edges": len(triples),
                "mention_edges": len(mentions),
                "relation_phrases": len(np.unique(triples[:, 2])),  # "mentions" may be one
                "skipped_triples": self.skipped["triple"],
                "skipped_entities": self.skipped["entity"],
                "skipped_examples": self.examples,
                **extra,
            }
        }
        return graph


def _distinct(rows: np.ndarray) -> np.ndarray:
    """The distinct rows of an integer matrix (sorted)."""
    if not len(rows):
        return rows
    return np.unique(rows, axis=0)


# -- the generic JSONL ----------------------------------------------------------------

_OPTIONAL_TEXT = ("id", "title", "doc")


def load_passages(path: str | Path) -> Graph:
    """A passages JSONL (``.jsonl`` or ``.jsonl.gz``) as a graph in the document layout.

    One JSON object per line: ``text`` (required), ``id``, ``title``, ``doc`` (strings),
    ``position`` (an integer: the chunk's place in its document), ``entities`` (strings)
    and ``triples`` (``[subject, relation phrase, object]``); other keys are ignored,
    blank lines too. A passage is named by its title, else ``"<doc> #<position>"``,
    else its id, else ``"<file stem> #<line>"``. Each line is one passage node, even
    when two lines hold the same text (two chunks of one document may). A malformed
    entity or triple is skipped and counted; a line that is not a JSON object, a
    missing ``text`` or a field of the wrong kind is a :class:`GraphFormatError`
    naming the file, the line and the field; so is an ``id`` seen on an earlier line.
    """
    path = Path(path)
    builder = _Builder()
    seen_ids: dict[str, int] = {}
    per_doc: Counter[str] = Counter()
    stem = path.name.split(".")[0] or "passage"
    for lineno, raw in text_lines(path):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise GraphFormatError(
                path, f"not valid JSON ({exc.msg} at column {exc.colno})", lineno
            ) from None
        if not isinstance(record, dict):
            raise GraphFormatError(
                path, f"expected a JSON object per line, got {type(record).__name__}", lineno
            )
        text = record.get("text")
        if not isinstance(text, str) or not text.strip():
            got = "missing" if text is None else f"{type(text).__name__} {text!r:.40}"
            raise GraphFormatError(path, f"field 'text' must be a non-empty string ({got})", lineno)
        fields = {}
        for key in _OPTIONAL_TEXT:
            value = record.get(key)
            if value is not None and not isinstance(value, str):
                raise GraphFormatError(
                    path, f"field {key!r} must be a string, got {type(value).__name__}", lineno
                )
            fields[key] = value.strip() if value else None
        position = record.get("position")
        if position is not None and (isinstance(position, bool) or not isinstance(position, int)):
            raise GraphFormatError(
                path, f"field 'position' must be an integer, got {position!r:.40}", lineno
            )
        for key in ("entities", "triples"):
            if record.get(key) is not None and not isinstance(record[key], list):
                raise GraphFormatError(
                    path, f"field {key!r} must be a list, got {type(record[key]).__name__}", lineno
                )
        pid = fields["id"]
        if pid is not None:
            if pid in seen_ids:
                raise GraphFormatError(
                    path, f"field 'id': {pid!r} is already the id of line {seen_ids[pid]}", lineno
                )
            seen_ids[pid] = lineno
        title, doc = fields["title"], fields["doc"]
        if doc is not None and position is None:
            position = per_doc[doc]  # its order among the document's chunks
        if doc is not None:
            per_doc[doc] += 1
        fallback = pid or f"{stem} #{lineno}"
        name = passage_name(title, doc, position) if title or doc else fallback
        node = builder.passage(name, passage_text(title, text))
        where = f"{path.name}:{lineno}"
        builder.add_entities(node, record.get("entities") or (), where)
        builder.add_triples(node, record.get("triples") or (), where)
    if not builder.passage_names:
        raise GraphFormatError(path, "no passages (the file has no JSON lines)")
    return builder.graph("passages", {"passages": str(path)}, {})


# -- HippoRAG's corpus + OpenIE -------------------------------------------------------


def load_hipporag(source: str | Path, corpus: str | Path | None = None) -> Graph:
    """A HippoRAG store as a graph in the document layout.

    ``source`` is a folder holding the corpus JSON and the OpenIE JSON (found by their
    shape: a list of ``{"title", "text"}`` objects; an object whose ``docs`` carry
    ``extracted_entities``/``extracted_triples``), or the OpenIE JSON itself, with its
    ``corpus`` file named or not (the OpenIE entries carry their text). Passages
    follow the corpus's order and are one per distinct title *and* text (many
    passages share a title); an OpenIE entry is matched to its passage by title and
    text, or by its ``passage`` string (``title + "\\n" + text``) when it has only
    that. Corpus passages with no extraction are kept, without entities; extractions
    of a passage the corpus lacks are added as passages; both are counted. An OpenIE
    file that matches none of the corpus's passages is refused (another corpus's).
    """
    path = Path(source)
    records: list[Any] | None = None
    corpus_path = Path(corpus) if corpus is not None else None
    if path.is_dir():
        if corpus_path is not None:
            raise GraphFormatError(path, "name the OpenIE JSON file beside a corpus file")
        openie_path, openie, corpus_path, records = find_hipporag_files(path)
    else:
        openie_path, openie = path, _read_json(path)
    if corpus_path is not None and records is None:
        records = _read_json(corpus_path)
        if not _is_corpus(records):
            raise GraphFormatError(
                corpus_path, 'expected a corpus: a list of {"title", "text"} objects'
            )
    docs = _openie_docs(openie, openie_path)
    builder = _Builder()
    by_key: dict[tuple[str, str], int] = {}
    by_passage: dict[str, int] = {}
    duplicates = 0

    def add(title: str | None, text: str, file: Path, position: int) -> int:
        # An untitled passage is named by its file and place: "<file stem> #<i>".
        name = passage_name(title, file.name.split(".")[0], position)
        node = builder.passage(name, passage_text(title, text))
        by_key[(title or "", text)] = node
        by_passage.setdefault(passage_text(title, text), node)
        return node

    files = {"openie": str(openie_path)}
    if records is not None and corpus_path is not None:
        files["corpus"] = str(corpus_path)
        for i, item in enumerate(records):
            title, text = _title_text(item, corpus_path, f"[{i}]")
            if (title or "", text) in by_key:
                duplicates += 1
                continue
            add(title, text, corpus_path, i)
    n_corpus = len(builder.passage_names)
    extracted: set[int] = set()
    unmatched = 0
    for j, doc in enumerate(docs):
        where = f"docs[{j}]"
        if not isinstance(doc, dict):
            raise GraphFormatError(openie_path, f"{where}: expected an object")
        if "text" in doc:
            title, text = _title_text(doc, openie_path, where)
            node = by_key.get((title or "", text))
        else:
            passage = doc.get("passage")
            if not isinstance(passage, str) or not passage.strip():
                raise GraphFormatError(
                    openie_path, f"{where}: needs 'text' (and 'title') or a 'passage' string"
                )
            title, text = None, passage
            node = by_passage.get(passage)
        if node is None:
            unmatched += 1
            node = add(title, text, openie_path, j)
        extracted.add(node)
        for key in _EXTRACTION_KEYS:
            if doc.get(key) is not None and not isinstance(doc[key], list):
                raise GraphFormatError(
                    openie_path, f"{where}.{key}: expected a list, got {type(doc[key]).__name__}"
                )
        label = f"{openie_path.name} {where}"
        builder.add_entities(node, doc.get("extracted_entities") or (), label)
        builder.add_triples(node, doc.get("extracted_triples") or (), label)
    if corpus_path is not None and n_corpus and docs and unmatched == len(docs):
        raise GraphFormatError(
            openie_path,
            f"none of its {len(docs):,} entries matches a passage of {corpus_path} by title "
            "and text: the OpenIE of another corpus?",
        )
    if not builder.passage_names:
        raise GraphFormatError(openie_path, "no passages: 'docs' is empty")
    return builder.graph(
        "hipporag",
        files,
        {
            "passages_without_extraction": sum(1 for p in range(n_corpus) if p not in extracted),
            "extractions_without_passage": unmatched if corpus_path is not None else 0,
            "duplicate_passages": duplicates,
        },
    )


def find_hipporag_files(folder: Path) -> tuple[Path, Any, Path | None, list[Any] | None]:
    """The OpenIE JSON and the corpus JSON of a folder, each parsed, told apart by
    shape (other JSON files, such as question files, are left alone). No OpenIE, two
    OpenIE files or two corpora are errors that list what was found."""
    openies: list[tuple[Path, Any]] = []
    corpora: list[tuple[Path, list[Any]]] = []
    for file in sorted(folder.glob("*.json")):
        if not file.is_file() or not _looks_like_json(file):
            continue
        try:
            data = _read_json(file)
        except GraphFormatError:
            continue  # not this store's file; an OpenIE file that fails parsing is named below
        if _is_openie(data):
            openies.append((file, data))
        elif _is_corpus(data):
            corpora.append((file, data))
    if not openies:
        named = [f.name for f in folder.glob("*.json") if _sniff_openie(f)]
        hint = f" ({', '.join(named)} look like one but are not valid JSON)" if named else ""
        raise GraphFormatError(
            folder,
            'no HippoRAG OpenIE JSON ({"docs": [{..., "extracted_triples": [...]}]}) '
            f"in this folder{hint}; for documents with no extraction, use `ark ingest`",
        )
    if len(openies) > 1:
        raise GraphFormatError(
            folder,
            f"several OpenIE JSON files ({', '.join(f.name for f, _ in openies)}); "
            "pass the one to use as SOURCE",
        )
    if len(corpora) > 1:
        raise GraphFormatError(
            folder,
            f"several corpus JSON files ({', '.join(f.name for f, _ in corpora)}); "
            "keep one beside the OpenIE file, or pass the OpenIE file alone as SOURCE "
            "(in Python: load_hipporag(openie_file, corpus=corpus_file))",
        )
    corpus_path, corpus = corpora[0] if corpora else (None, None)
    return openies[0][0], openies[0][1], corpus_path, corpus


def _is_openie(data: Any) -> bool:
    docs = data.get("docs") if isinstance(data, dict) else None
    return (
        isinstance(docs, list)
        and bool(docs)
        and all(isinstance(d, dict) for d in docs[:100])
        and any(any(k in d for k in _EXTRACTION_KEYS) for d in docs[:100])
    )


def _is_corpus(data: Any) -> bool:
    """A list of passage objects, most with a ``text``: a corpus, whose items are then
    each checked (one without text is an error naming it, not the whole file ignored)."""
    if not isinstance(data, list) or not data or not all(isinstance(d, dict) for d in data):
        return False
    with_text = sum(isinstance(d.get("text"), str) for d in data)
    return with_text * 2 > len(data)


def _openie_docs(data: Any, path: Path) -> list[Any]:
    if isinstance(data, dict) and isinstance(data.get("docs"), list):
        return data["docs"]
    if _is_corpus(data):
        raise GraphFormatError(
            path,
            "this is a corpus (passages with no extraction), not HippoRAG's OpenIE JSON; "
            "pass the folder holding both, or build a graph from it with `ark ingest`",
        )
    raise GraphFormatError(path, "expected HippoRAG's OpenIE JSON: an object with a 'docs' list")


def _title_text(item: Any, path: Path, where: str) -> tuple[str | None, str]:
    if not isinstance(item, dict):
        raise GraphFormatError(path, f"{where}: expected an object with 'title' and 'text'")
    title, text = item.get("title"), item.get("text")
    if not isinstance(text, str) or not text.strip():
        raise GraphFormatError(path, f"{where}.text: expected a non-empty string")
    if title is not None and not isinstance(title, str):
        raise GraphFormatError(path, f"{where}.title: expected a string")
    return (title or None), text


def _read_json(path: Path) -> Any:
    try:
        with gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb") as f:
            raw = f.read()
    except (gzip.BadGzipFile, zlib.error, EOFError) as exc:
        raise GraphFormatError(path, f"not a valid gzip file ({exc})") from None
    except OSError as exc:
        raise GraphFormatError(path, exc.strerror or str(exc)) from None
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise GraphFormatError(path, f"not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise GraphFormatError(
            path, f"not valid JSON ({exc.msg} at column {exc.colno})", exc.lineno
        ) from None
    except JSON_ERRORS as exc:  # nested too deep, a number too long
        raise GraphFormatError(path, json_problem(exc)) from None


# -- telling formats apart ------------------------------------------------------------


def _head(path: Path) -> bytes:
    try:
        with gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb") as f:
            return f.read(_SNIFF_BYTES)
    except (OSError, EOFError, zlib.error):
        return b""


def _looks_like_json(path: Path) -> bool:
    return _head(path).lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"[")


def _sniff_openie(path: Path) -> bool:
    head = _head(path)
    return _looks_like_json(path) and any(f'"{k}"'.encode() in head for k in _EXTRACTION_KEYS)


def is_hipporag_dir(path: Path) -> bool:
    """Whether a folder holds a file that reads like HippoRAG's OpenIE JSON (the first
    64 KiB name an extraction key): cheap, for :func:`detect_format`."""
    return any(f.is_file() and _sniff_openie(f) for f in path.glob("*.json"))


def sniff_file_format(path: Path) -> str:
    """``hipporag`` (an OpenIE JSON), ``passages`` (a JSONL whose first line is an
    object with ``text``) or ``triples``, from the file's first bytes."""
    if _sniff_openie(path):
        return "hipporag"
    name = path.name.lower()
    if name.endswith((".jsonl", ".jsonl.gz", ".ndjson")):
        return "passages"
    head = _head(path).lstrip(b"\xef\xbb\xbf \t\r\n")
    if head[:1] == b"{":
        line = head.split(b"\n", 1)[0]
        try:
            first = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return "triples"
        if isinstance(first, dict) and "text" in first:
            return "passages"
    return "triples"
