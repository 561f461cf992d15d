"""Microsoft GraphRAG's output tables as a graph in the document layout (tables written
here with pyarrow in GraphRAG's column layout; no GraphRAG data is used)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ark.errors import GraphFormatError
from ark.graph import MENTIONS, load_graph, passage_ids
from ark.index import build_index
from ark.probes import MAX_RELATION_CHARS, relation_phrase


def write(folder: Path, name: str, rows: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / name)


def store(folder: Path, *, old: bool = False) -> Path:
    """A two-chunk story in GraphRAG's tables (``old``: the 0.x names and columns)."""
    prefix = "create_final_" if old else ""
    doc = {"document_ids": ["d1"]} if old else {"document_id": "d1"}
    write(
        folder,
        f"{prefix}text_units.parquet",
        [
            {"id": "u1", "text": "Ada Lovelace wrote notes on the Analytical Engine.", **doc},
            {"id": "u2", "text": "Charles Babbage designed the Analytical Engine.", **doc},
        ],
    )
    write(folder, f"{prefix}documents.parquet", [{"id": "d1", "title": "engines.txt"}])
    name = "name" if old else "title"
    write(
        folder,
        f"{prefix}entities.parquet",
        [
            {
                name: "ADA LOVELACE",
                "type": "PERSON",
                "description": "A mathematician who wrote the first program.",
                "text_unit_ids": ["u1"],
            },
            {
                name: "ANALYTICAL ENGINE",
                "type": "EVENT",
                "description": "A mechanical computer.",
                "text_unit_ids": ["u1", "u2"],
            },
            {name: None, "type": "PERSON", "description": "no title", "text_unit_ids": ["u2"]},
        ],
    )
    write(
        folder,
        f"{prefix}relationships.parquet",
        [
            {
                "source": "ADA LOVELACE",
                "target": "ANALYTICAL ENGINE",
                "description": "Ada Lovelace wrote notes on the Analytical Engine. She saw more.",
                "text_unit_ids": ["u1"],
            },
            {
                "source": "CHARLES BABBAGE",  # not among the entities: made from its name
                "target": "ANALYTICAL ENGINE",
                "description": "Dr. Babbage designed the Analytical Engine.",
                "text_unit_ids": ["u2", "u9"],  # u9: no such chunk, counted
            },
            {"source": "ADA LOVELACE", "target": None, "description": "x", "text_unit_ids": []},
        ],
    )
    return folder


@pytest.mark.parametrize("old", [False, True])
def test_graphrag_output_becomes_passages_entities_and_described_edges(tmp_path, old):
    graph = load_graph(store(tmp_path / "output", old=old))  # found by its tables
    names = [graph.name(i) for i in range(graph.n_nodes)]
    passages = passage_ids(graph).tolist()
    assert [names[i] for i in passages] == ["engines.txt #0", "engines.txt #1"]
    assert graph.text(passages[1]) == "Charles Babbage designed the Analytical Engine."
    ada = names.index("ADA LOVELACE")
    # the entity's text is what GraphRAG wrote of it, so that search reads it
    assert graph.text(ada) == (
        "ADA LOVELACE\nA mathematician who wrote the first program.\nType: PERSON"
    )
    babbage = names.index("CHARLES BABBAGE")
    assert graph.text(babbage) == "CHARLES BABBAGE"
    relations = set(graph.relation_names)
    # the relation is the description's first sentence ("Dr." does not end one)
    assert "ada lovelace wrote notes on the analytical engine" in relations
    assert "dr. babbage designed the analytical engine" in relations
    assert MENTIONS in relations
    notes = graph.notes["documents"]
    assert notes["format"] == "graphrag"
    assert (notes["passages"], notes["entities"], notes["triples"]) == (2, 3, 2)
    assert notes["skipped_entities"] == 1 and notes["skipped_triples"] == 1
    assert notes["unknown_text_unit_ids"] == 1 and notes["entity_descriptions"] == 2


def test_graphrag_index_is_searchable_by_what_graphrag_wrote(tmp_path):
    index = build_index(store(tmp_path / "output"), tmp_path / "idx", fmt="graphrag")
    from ark.tools import GraphTools

    hits = GraphTools(index).search_in_graph("first program mathematician", k=1).hits
    assert hits[0].name == "ADA LOVELACE"


def test_a_folder_without_the_tables_names_what_is_missing(tmp_path):
    folder = store(tmp_path / "output")
    (folder / "relationships.parquet").unlink()
    with pytest.raises(GraphFormatError, match=r"no relationships\.parquet") as info:
        load_graph(folder, "graphrag")
    assert info.value.path == str(folder)
    with pytest.raises(GraphFormatError, match="GraphRAG"):
        load_graph(folder)  # auto: nothing it knows


def test_a_text_unit_without_text_names_the_file_and_row(tmp_path):
    folder = store(tmp_path / "output")
    write(folder, "text_units.parquet", [{"id": "u1", "text": "fine"}, {"id": "u2", "text": ""}])
    with pytest.raises(GraphFormatError, match="without text") as info:
        load_graph(folder)
    assert info.value.path == str(folder / "text_units.parquet") and info.value.line == 1


def test_a_missing_column_names_the_file(tmp_path):
    folder = store(tmp_path / "output")
    write(folder, "relationships.parquet", [{"source": "A", "description": "x"}])
    with pytest.raises(GraphFormatError, match="target") as info:
        load_graph(folder)
    assert info.value.path == str(folder / "relationships.parquet")


def test_the_relation_phrase_is_a_first_sentence_cut_at_a_word():
    assert relation_phrase(None) == relation_phrase("  ") == "related to"
    long = relation_phrase("word " * 100)
    assert len(long) <= MAX_RELATION_CHARS + 2 and long.endswith(" …")
    assert relation_phrase("U.S. Army hired A. Then B.") == "u.s. army hired a"
