"""Read a LightRAG working directory as a graph in the document layout.

``ark index build WORKING_DIR --format lightrag`` takes the folder LightRAG's default
(file) storage writes:

- ``kv_store_text_chunks.json`` (``{chunk_id: {"content", "full_doc_id",
  "chunk_order_index", "file_path"?}}``): the chunks, which become ``passage`` nodes,
  named by their file (or document id) and their place in it;
- ``graph_chunk_entity_relation.graphml``: its nodes are the entities (the node id is
  the name; ``entity_type``, ``description``, ``source_id``), which become ``entity``
  nodes whose text is the name, then LightRAG's descriptions (merged descriptions,
  joined by LightRAG's ``<SEP>``, one per line) and the type, each ``mentions``-linked
  from the chunks its ``source_id`` lists; its edges (``description``, ``keywords``,
  ``source_id``) become edges whose relation is the description's first sentence
  (:func:`ark.graph._graphrag.relation_phrase`), else the keywords. LightRAG's graph
  is undirected: an edge is stored from the ``source`` it wrote to the ``target``.

Vector stores and caches are not read. An entity or edge without a name or an end is
skipped and counted; a missing file, a file that is not JSON or GraphML, or a chunk
without text is a :class:`~ark.errors.GraphFormatError` naming the file.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

from ark.errors import GraphFormatError
from ark.graph._documents import entity_key
from ark.graph._graph import Graph
from ark.graph._graphrag import relation_phrase
from ark.graph._stores import _Builder as Builder

CHUNKS = "kv_store_text_chunks.json"
GRAPH = "graph_chunk_entity_relation.graphml"
#: What LightRAG puts between merged descriptions and between source chunk ids.
SEP = "<SEP>"
#: A ``file_path`` LightRAG writes when it was given none.
UNKNOWN_SOURCE = "unknown_source"

_NS = "{http://graphml.graphdrawing.org/xmlns}"


def is_lightrag_dir(path: Path) -> bool:
    """Whether a folder holds LightRAG's chunk store and its entity graph."""
    return path.is_dir() and (path / CHUNKS).is_file() and (path / GRAPH).is_file()


def _split(value: Any) -> list[str]:
    if not isinstance(value, str):
        return []
    return [part.strip() for part in value.split(SEP) if part.strip()]


def _chunks(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise GraphFormatError(path, f"not valid JSON ({exc.msg})", exc.lineno) from None
    except UnicodeDecodeError as exc:
        raise GraphFormatError(path, f"not UTF-8 text (byte {exc.start})") from None
    if not isinstance(data, dict):
        raise GraphFormatError(path, "expected an object of chunks keyed by chunk id")
    return data


def _graphml(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(nodes, edges) of a GraphML file, each a dict of its data by attribute name
    (``id``; ``source`` and ``target`` for an edge)."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        line = exc.position[0] if exc.position else None
        raise GraphFormatError(path, f"not valid GraphML ({exc})", line) from None
    names = {k.get("id"): k.get("attr.name") for k in root.iter(f"{_NS}key")}

    def record(element: ET.Element, ends: tuple[str, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {e: element.get(e) for e in ends}
        for data in element.iter(f"{_NS}data"):
            out[names.get(data.get("key"), data.get("key"))] = data.text
        return out

    graph = root.find(f"{_NS}graph")
    if graph is None:
        raise GraphFormatError(path, "a GraphML file without a <graph>")
    nodes = [record(n, ("id",)) for n in graph.iter(f"{_NS}node")]
    edges = [record(e, ("source", "target")) for e in graph.iter(f"{_NS}edge")]
    return nodes, edges


def load_lightrag(folder: str | Path) -> Graph:
    """A LightRAG working directory as a graph in the document layout (see the module)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise GraphFormatError(folder, "expected LightRAG's working directory, not a file")
    missing = [name for name in (CHUNKS, GRAPH) if not (folder / name).is_file()]
    if missing:
        raise GraphFormatError(folder, f"not a LightRAG working directory: no {', '.join(missing)}")
    builder = Builder()
    chunks_path = folder / CHUNKS
    chunk_node: dict[str, int] = {}
    per_doc: Counter[str] = Counter()
    for chunk_id, chunk in _chunks(chunks_path).items():
        text = chunk.get("content") if isinstance(chunk, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise GraphFormatError(chunks_path, f"chunk {chunk_id!r} has no text ('content')")
        source = chunk.get("file_path")
        doc = source if isinstance(source, str) and source != UNKNOWN_SOURCE else None
        doc = doc or chunk.get("full_doc_id") or None
        position = chunk.get("chunk_order_index")
        if not isinstance(position, int) or isinstance(position, bool):
            position = per_doc[str(doc)]
        per_doc[str(doc)] += 1
        name = f"{doc} #{position}" if doc else f"{chunk_id}"
        chunk_node[chunk_id] = builder.passage(name, text.strip())

    graph_path = folder / GRAPH
    nodes, edges = _graphml(graph_path)
    descriptions = 0

    def passages(source_id: Any) -> list[int]:
        return builder.passages_of(_split(source_id), chunk_node)

    for i, item in enumerate(nodes):
        name = item.get("entity_id") or item.get("id")
        if not isinstance(name, str) or not entity_key(name):
            builder.skip("entity", f"{GRAPH} node {i}", name)
            continue
        node = builder.entity(name)
        said = _split(item.get("description"))
        descriptions += builder.set_entity_text(node, name, said, item.get("entity_type"))
        for passage in passages(item.get("source_id")):
            builder.mention(passage, node)

    for i, item in enumerate(edges):
        ends = (item.get("source"), item.get("target"))
        if not all(isinstance(e, str) and entity_key(e) for e in ends):
            builder.skip("triple", f"{GRAPH} edge {i}", ends)
            continue
        said = _split(item.get("description"))
        phrase = relation_phrase(said[0]) if said else relation_phrase(item.get("keywords"))
        builder.triple(ends[0], phrase, ends[1], passages(item.get("source_id")))

    return builder.graph(
        "lightrag",
        {"chunks": str(chunks_path), "graph": str(graph_path)},
        {"entity_descriptions": descriptions, "unknown_chunk_ids": builder.unknown_chunks},
    )


__all__ = ["is_lightrag_dir", "load_lightrag"]
