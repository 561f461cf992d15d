"""STaRK conversion on small knowledge bases written in exactly stark-qa's format."""

import json

import pytest

torch = pytest.importorskip("torch", reason="reading STaRK's .pt files needs torch ([stark] extra)")

from _stark_fixture import write_kb  # noqa: E402
from ark.datasets import convert_stark  # noqa: E402
from ark.index import build_index  # noqa: E402


def test_prime(tmp_path):
    info = {
        0: {"id": 1, "type": "drug", "name": "Aspirin", "source": "DrugBank",
            "details": {"description": "An analgesic.", "mechanism": "nan", "_hidden": "x",
                        "drug_id": "D1"}},
        1: {"id": 2, "type": "disease", "name": "headache", "source": "MONDO"},
        2: {"id": 3, "type": "gene/protein", "name": "PTGS1", "source": "NCBI",
            "details": {"summary": "Cyclooxygenase.", "generif": [{"text": "inhibited by aspirin"}],
                        "interpro": {"desc": "Peroxidase"}}},
    }  # fmt: skip
    write_kb(
        tmp_path / "prime" / "processed",
        info,
        edges=[(0, 1), (1, 0), (0, 2)],
        edge_types=[6, 6, 3],
        node_types=[3, 0, 1],
        type_dict={0: "disease", 1: "gene/protein", 3: "drug"},
        rel_dict={3: "target", 6: "indication"},
    )
    meta = convert_stark(tmp_path / "prime", tmp_path / "tables", "prime")
    assert meta["candidate_types"] is None and meta["nodes"] == 3 and meta["edges"] == 3
    index = build_index(tmp_path / "tables", tmp_path / "idx")
    g = index.graph
    assert [g.name(i) for i in range(3)] == ["Aspirin", "headache", "PTGS1"]
    assert [g.type_name(i) for i in range(3)] == ["drug", "disease", "gene/protein"]
    assert g.n_edges == 3
    assert "description: An analgesic." in g.text(0)
    assert (
        "mechanism" not in g.text(0) and "_hidden" not in g.text(0) and "drug_id" not in g.text(0)
    )
    assert "inhibited by aspirin" in g.text(2) and "Peroxidase" in g.text(2)
    docs, _ = index.bm25.top_k(index.bm25.query_terms("cyclooxygenase"), 1)
    assert int(docs[0]) == 2


def test_mag_uses_the_constant_type_dicts_and_keeps_indices(tmp_path):
    info = {
        0: {"DisplayName": "Ada Lovelace", "PaperCount": 3, "CitationCount": -1},
        1: {"DisplayName": "Analytical Engines", "PaperCount": 10},
        2: {"title": "Notes on the engine", "abstract": "We describe\r a machine.",
            "Date": "1843-01-01", "OriginalVenue": -1, "JournalDisplayName": "Scientific Memoirs"},
    }  # fmt: skip
    write_kb(
        tmp_path / "mag" / "processed",
        info,
        edges=[(0, 2), (2, 1)],
        edge_types=[3, 2],
        node_types=[0, 2, 3],
    )
    meta = convert_stark(tmp_path / "mag", tmp_path / "tables", "mag")
    assert meta["candidate_types"] == ["paper"]
    g = build_index(tmp_path / "tables", tmp_path / "idx").graph
    assert [g.type_name(i) for i in range(3)] == ["author", "field_of_study", "paper"]
    assert "journal: Scientific Memoirs" in g.text(2) and "\r" not in g.text(2)
    assert "citation count" not in g.text(0) and "paper count: 3" in g.text(0)
    rels = {r.name for r in g.schema.relations}
    assert rels == {"author___writes___paper", "paper___has_topic___field_of_study"}


def test_amazon_reads_the_meta_link_cache(tmp_path):
    reviews = [
        {"summary": "meh", "reviewText": "fine", "vote": None},
        {"summary": "great", "reviewText": "loved it", "vote": "1,204"},
    ]
    info = {
        0: {"title": "Trail Shoe", "brand": "Acme", "description": ["Light", "and fast"],
            "feature": ["Waterproof", "ASIN: B00X"], "review": reviews,
            "qa": [{"question": "Wide?", "answer": "Yes"}],
            "details": {"dictionary": {"product_dimensions": "10 x 4 in ; 9 oz"}}},
        1: {"brand_name": "Acme"},
        2: {"color_name": "red"},
    }  # fmt: skip
    cache = tmp_path / "amazon" / "processed" / "cache" / "brand-category-color"
    write_kb(
        cache,
        info,
        edges=[(0, 1), (0, 2)],
        edge_types=[2, 4],
        node_types=[0, 1, 3],
        type_dict={0: "product", 1: "brand", 2: "category", 3: "color"},
        rel_dict={0: "also_buy", 1: "also_view", 2: "has_brand", 3: "has_category", 4: "has_color"},
    )
    meta = convert_stark(tmp_path / "amazon", tmp_path / "tables", "amazon")
    assert meta["candidate_types"] == ["product"]
    g = build_index(tmp_path / "tables", tmp_path / "idx").graph
    text = g.text(0)
    assert "description: Light and fast" in text and "dimensions: 10 x 4 in" in text
    assert "ASIN" not in text and "Waterproof" in text
    assert text.index("great: loved it") < text.index("meh: fine")  # reviews by votes
    assert [g.name(i) for i in range(3)] == ["Trail Shoe", "Acme", "red"]
    stark = json.loads((tmp_path / "tables" / "stark.json").read_text())
    assert stark["graph"] == "amazon"


def test_not_a_stark_directory(tmp_path):
    from ark.errors import GraphFormatError

    with pytest.raises(GraphFormatError, match=r"node_info\.pkl"):
        convert_stark(tmp_path, tmp_path / "out", "prime")


def test_candidate_types_travel_from_conversion_into_the_index(tmp_path):
    from ark.datasets import stark_candidate_types

    test_mag_uses_the_constant_type_dicts_and_keeps_indices(tmp_path)
    index_meta = json.loads((tmp_path / "idx" / "meta.json").read_text())
    assert index_meta["stark"]["graph"] == "mag"
    assert stark_candidate_types("mag", index_meta) == ["paper"]
    # What the tables said wins over the built-in table (here: edited to authors).
    stark = json.loads((tmp_path / "tables" / "stark.json").read_text())
    stark["candidate_types"] = ["author"]
    (tmp_path / "tables" / "stark.json").write_text(json.dumps(stark))
    rebuilt = build_index(tmp_path / "tables", tmp_path / "idx")
    assert stark_candidate_types("mag", rebuilt.meta) == ["author"]
    assert stark_candidate_types("mag", {}) == ["paper"]
