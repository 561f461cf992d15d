"""A LightRAG working directory as a graph in the document layout (files written here
in LightRAG's layout: its chunk store JSON and its GraphML with the keys it declares)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ark.errors import GraphFormatError
from ark.graph import load_graph, passage_ids

GRAPHML = """<?xml version='1.0' encoding='utf-8'?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="d8" for="edge" attr.name="source_id" attr.type="string" />
  <key id="d7" for="edge" attr.name="keywords" attr.type="string" />
  <key id="d6" for="edge" attr.name="description" attr.type="string" />
  <key id="d5" for="edge" attr.name="weight" attr.type="double" />
  <key id="d3" for="node" attr.name="source_id" attr.type="string" />
  <key id="d2" for="node" attr.name="description" attr.type="string" />
  <key id="d1" for="node" attr.name="entity_type" attr.type="string" />
  <key id="d0" for="node" attr.name="entity_id" attr.type="string" />
  <graph edgedefault="undirected">
    <node id="Port Avel">
      <data key="d0">Port Avel</data>
      <data key="d1">geo</data>
      <data key="d2">Port Avel is a harbour town.&lt;SEP&gt;Port Avel lies on the coast.</data>
      <data key="d3">chunk-a&lt;SEP&gt;chunk-b</data>
    </node>
    <node id="Lena Marsh">
      <data key="d0">Lena Marsh</data>
      <data key="d1">person</data>
      <data key="d2">Lena Marsh is a painter.</data>
      <data key="d3">chunk-a</data>
    </node>
    <node id=" "><data key="d0"> </data></node>
    <edge source="Lena Marsh" target="Port Avel">
      <data key="d5">8.0</data>
      <data key="d6">Lena Marsh was born in Port Avel. She left it young.</data>
      <data key="d7">birthplace, origin</data>
      <data key="d8">chunk-a&lt;SEP&gt;chunk-z</data>
    </edge>
    <edge source="Port Avel" target="Norland">
      <data key="d7">location, coast</data>
      <data key="d8">chunk-b</data>
    </edge>
  </graph>
</graphml>
"""

CHUNKS = {
    "chunk-a": {
        "tokens": 12,
        "content": "Lena Marsh, a painter, was born in Port Avel.",
        "chunk_order_index": 0,
        "full_doc_id": "doc-1",
        "file_path": "unknown_source",
    },
    "chunk-b": {
        "tokens": 10,
        "content": "Port Avel lies on the coast of Norland.",
        "chunk_order_index": 1,
        "full_doc_id": "doc-1",
        "file_path": "towns.txt",
    },
}


def store(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kv_store_text_chunks.json").write_text(json.dumps(CHUNKS), encoding="utf-8")
    (folder / "graph_chunk_entity_relation.graphml").write_text(GRAPHML, encoding="utf-8")
    (folder / "vdb_chunks.json").write_text("{}", encoding="utf-8")  # not read
    return folder


def test_lightrag_chunks_entities_and_edges(tmp_path):
    graph = load_graph(store(tmp_path / "rag"))  # found by its files
    names = [graph.name(i) for i in range(graph.n_nodes)]
    passages = passage_ids(graph).tolist()
    # named by the file when LightRAG knew it, else by the document id
    assert [names[i] for i in passages] == ["doc-1 #0", "towns.txt #1"]
    port = names.index("Port Avel")
    assert graph.text(port) == (
        "Port Avel\nPort Avel is a harbour town.\nPort Avel lies on the coast.\nType: geo"
    )
    relations = set(graph.relation_names)
    assert "lena marsh was born in port avel" in relations  # the first sentence
    assert "location, coast" in relations  # no description: the keywords
    assert "Norland" in names  # an edge's end that is no node of the GraphML
    notes = graph.notes["documents"]
    assert notes["format"] == "lightrag"
    assert (notes["passages"], notes["triples"], notes["skipped_entities"]) == (2, 2, 1)
    assert notes["unknown_chunk_ids"] == 1  # chunk-z
    # mentions: chunk-a names Lena Marsh and Port Avel
    a = passages[0]
    start, end = graph.indptr[a], graph.indptr[a + 1]
    hood = {graph.name(int(n)) for n in graph.adj_node[start:end]}
    assert {"Lena Marsh", "Port Avel"} <= hood


def test_a_lightrag_folder_missing_its_graph_or_with_a_broken_one(tmp_path):
    folder = store(tmp_path / "rag")
    (folder / "graph_chunk_entity_relation.graphml").write_text("<graphml><graph>", "utf-8")
    with pytest.raises(GraphFormatError, match="not valid GraphML") as info:
        load_graph(folder, "lightrag")
    assert info.value.path.endswith("graph_chunk_entity_relation.graphml")
    (folder / "graph_chunk_entity_relation.graphml").unlink()
    with pytest.raises(GraphFormatError, match=r"no graph_chunk_entity_relation\.graphml"):
        load_graph(folder, "lightrag")


def test_a_chunk_without_text_is_named(tmp_path):
    folder = store(tmp_path / "rag")
    bad = {**CHUNKS, "chunk-c": {"content": "", "full_doc_id": "doc-2"}}
    (folder / "kv_store_text_chunks.json").write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(GraphFormatError, match="chunk 'chunk-c' has no text"):
        load_graph(folder)
