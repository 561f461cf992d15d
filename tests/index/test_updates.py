"""Updates: exact BM25 when the statistics move a lot, the MetaQA graph through random
updates, what follows an update (schema, specs, checksums), and bad input."""

from __future__ import annotations

import random
import shutil

import numpy as np
import pytest

from _updates_model import Model, assert_same_answers, random_update, scratch
from ark.errors import ArkError, GraphFormatError
from ark.index import (
    BM25Params,
    Tokenizer,
    add_to_index,
    build_bm25,
    build_index,
    open_index,
    remove_from_index,
    verify_index,
)
from ark.probes import SegmentedBM25, Stats, delta_index, idf_of
from ark.tools import GraphTools, tool_specs


def _brute(texts: list[str], query: str, k: int) -> list[tuple[int, float]]:
    full = build_bm25(texts, len(texts), Tokenizer(), BM25Params())
    terms = full.query_terms(query)
    scores = full.score_docs(terms, np.arange(len(texts)))
    order = np.lexsort((np.arange(len(texts)), -scores))[:k]
    return [(int(d), float(scores[d])) for d in order if scores[d] > 0]


@pytest.mark.parametrize("seed", range(20))
def test_top_k_exact_when_the_average_length_doubles(seed):
    """Long new documents double the average length: every base weight moves, and a
    document ranked below the first candidates by the rescaled base weights can rank
    above them exactly (the near-tie step must find it)."""
    rng = np.random.default_rng(seed)
    base_texts = [
        " ".join(["alpha"] * int(rng.integers(1, 4)) + ["pad"] * int(rng.integers(0, 12)))
        for _ in range(400)
    ]
    new_texts = [" ".join(["filler"] * 60 + ["alpha"]) for _ in range(300)]
    tok, params = Tokenizer(), BM25Params()
    base = build_bm25(base_texts, len(base_texts), tok, params)
    mini = build_bm25(new_texts, len(new_texts), tok, params)
    lengths = np.concatenate([np.asarray(base.doc_len), np.asarray(mini.doc_len)])
    stats = Stats(n_docs=len(lengths), total_len=int(lengths.sum()))
    delta = delta_index(
        dict(mini.vocab), mini.indptr, mini.indices, mini.tf, mini.doc_len, base, {}, stats
    )
    seg = SegmentedBM25(base, delta, len(base_texts), np.zeros(0, np.int64), {}, stats)
    for k in (1, 5, 20):
        docs, scores = seg.top_k(seg.query_terms("alpha"), k)
        want = _brute(base_texts + new_texts, "alpha", k)
        assert [int(d) for d in docs] == [d for d, _ in want]
        np.testing.assert_allclose(scores, [s for _, s in want], rtol=1e-6)


def test_exact_weights_are_bit_identical_to_a_rebuild():
    texts = [f"w{i % 7} w{i % 3} common" + " x" * (i % 5) for i in range(50)]
    tok, params = Tokenizer(), BM25Params()
    full = build_bm25(texts, 50, tok, params)
    base = build_bm25(texts[:30], 30, tok, params)
    mini = build_bm25(texts[30:], 20, tok, params)
    stats = Stats(50, int(np.asarray(full.doc_len).sum()))
    delta = delta_index(
        dict(mini.vocab), mini.indptr, mini.indices, mini.tf, mini.doc_len, base, {}, stats
    )
    for word, t in delta.vocab.items():
        if word:
            s, e = delta.indptr[t], delta.indptr[t + 1]
            f = full.vocab[word]
            fs, fe = full.indptr[f], full.indptr[f + 1]
            assert np.array_equal(full.data[fs:fe][full.indices[fs:fe] >= 30], delta.data[s:e])


def _metaqa_model(index) -> Model:
    g = index.graph
    names = g.names.to_pylist()
    types = [g.node_type_names[t] for t in np.asarray(g.node_type).tolist()]
    m = Model(type_names=list(g.node_type_names), relation_names=list(g.relation_names))
    m.nodes = {n: (t, "") for n, t in zip(names, types, strict=True)}
    ptr = np.asarray(g.indptr)
    center = np.repeat(np.arange(g.n_nodes), np.diff(ptr))
    code = np.asarray(g.adj_code, dtype=np.int64)
    out = (code & 1) == 0
    other = np.asarray(g.adj_node)[out]
    rels = g.relation_names
    m.edges = [
        (names[s], rels[c >> 1], names[o])
        for s, c, o in zip(center[out].tolist(), code[out].tolist(), other.tolist(), strict=True)
    ]
    return m


@pytest.mark.slow
def test_the_metaqa_graph_through_random_updates(metaqa_index, tmp_path):
    path = tmp_path / "idx"
    shutil.copytree(metaqa_index.path, path)
    model = _metaqa_model(metaqa_index)
    rng = random.Random(30)
    for gen in range(1, 6):
        random_update(rng, model, path, gen)
    index = open_index(path)
    assert verify_index(path)["ok"]
    ref = scratch(model)
    touched = [n for n in model.nodes if n.startswith("a")][:50]
    sample = rng.sample(list(model.nodes), 150) + touched + ["Tom Hanks", "English", "Drama"]
    assert_same_answers(
        GraphTools(index),
        ref,
        model,
        rng,
        nodes=[n for n in dict.fromkeys(sample) if n in model.nodes],
        extra_queries=["Tom Hanks", "forrest gump", "drama war 1994", "english"],
    )


@pytest.fixture()
def small(tmp_path):
    (tmp_path / "kb.txt").write_text(
        "Forrest Gump|directed_by|Robert Zemeckis\nCast Away|directed_by|Robert Zemeckis\n"
    )
    build_index(tmp_path / "kb.txt", tmp_path / "idx")
    return tmp_path


def test_schema_specs_and_described_follow(small):
    (small / "add.txt").write_text("Cast Away|filmed_in|Fiji\n")
    before = open_index(small / "idx")
    add_to_index(small / "idx", small / "add.txt")
    after = open_index(small / "idx")
    assert "filmed_in" in after.schema.relation_names
    assert "filmed_in" not in before.schema.relation_names
    spec = str(tool_specs(after.schema))
    assert "filmed_in" in spec and "filmed_in" not in str(tool_specs(before.schema))
    assert after.described.relation("filmed_in") is not None
    assert after.meta["counts"]["edges"] == 3 and after.meta["counts"]["nodes"] == 4
    cast_away = after.graph.names.to_pylist().index("Cast Away")
    hood = GraphTools(after).search_in_neighborhood(cast_away, edge_type="filmed_in")
    assert [h.name for h in hood.hits] == ["Fiji"]
    assert verify_index(small / "idx")["ok"]


def test_verify_catches_a_damaged_segment(small):
    (small / "add.txt").write_text("Cast Away|filmed_in|Fiji\n")
    add_to_index(small / "idx", small / "add.txt")
    target = next((small / "idx" / "segments").rglob("edges.npy"))
    data = bytearray(target.read_bytes())
    data[-1] ^= 0xFF
    target.write_bytes(bytes(data))
    report = verify_index(small / "idx")
    assert not report["ok"]
    assert any("edges.npy" in p for p in report["problems"])


def test_removed_node_is_gone_everywhere(small):
    (small / "rm.txt").write_text("Robert Zemeckis\n")
    remove_from_index(small / "idx", nodes_file=small / "rm.txt")
    index = open_index(small / "idx")
    tools = GraphTools(index)
    gone = index.graph.names.to_pylist().index("Robert Zemeckis")
    assert tools.search_in_neighborhood(gone).code == "unknown_node"
    assert tools.search_in_graph("zemeckis").code == "no_terms"
    assert (index.meta["counts"]["nodes"], index.meta["counts"]["edges"]) == (2, 0)


def test_unknown_names_are_errors_naming_file_and_line(small):
    (small / "rm.txt").write_text("Forrest Gump\n\nNobody Here\n")
    with pytest.raises(GraphFormatError, match=r"rm.txt:3: .*no node named 'Nobody Here'"):
        remove_from_index(small / "idx", nodes_file=small / "rm.txt")
    (small / "rme.txt").write_text("Forrest Gump|directed_by|Robert Zemeckis\nCast Away|x|Y\n")
    with pytest.raises(GraphFormatError, match=r"rme.txt:2: "):
        remove_from_index(small / "idx", edges_file=small / "rme.txt")
    (small / "bad.txt").write_text("only|two\n")
    with pytest.raises(GraphFormatError, match=r"bad.txt:1: expected"):
        remove_from_index(small / "idx", edges_file=small / "bad.txt")
    assert open_index(small / "idx").meta.get("segments") is None  # nothing committed


def test_a_table_node_conflicting_with_an_existing_one_names_its_line(small):
    src = small / "tables"
    src.mkdir()
    (src / "nodes.csv").write_text(
        'id,name,type,properties\n1,New Film,movie,"{}"\n2,Cast Away,person,"{}"\n'
    )
    (src / "edges.csv").write_text("from,to,type,properties\n1,2,sequel_of,{}\n")
    with pytest.raises(GraphFormatError, match=r"nodes.csv:3: node 'Cast Away' exists"):
        add_to_index(small / "idx", src)


def test_an_index_without_term_counts_is_refused(small):
    for name in ("tf.npy", "doc_len.npy"):
        (small / "idx" / "bm25" / name).unlink()
    import json

    meta_path = small / "idx" / "meta.json"
    meta = json.loads(meta_path.read_text())
    for key in ("files", "checksums"):
        meta[key] = {k: v for k, v in meta[key].items() if not k.endswith(("tf.npy", "len.npy"))}
    meta["samples"]["digests"] = {
        k: v for k, v in meta["samples"]["digests"].items() if not k.endswith(("tf.npy", "len.npy"))
    }
    meta_path.write_text(json.dumps(meta))
    (small / "add.txt").write_text("A|b|C\n")
    with pytest.raises(ArkError, match="rebuild it once"):
        add_to_index(small / "idx", small / "add.txt")


def test_the_exact_kernel_gives_a_rebuilds_bits():
    """Scores computed from tf and lengths in the compiled kernel equal the stored
    weights of a build (same float32 steps as bm25s's numpy code)."""
    from ark.probes import index_bm25

    rng = np.random.default_rng(3)
    texts = [" ".join(f"w{x}" for x in rng.zipf(1.3, rng.integers(1, 60))) for _ in range(500)]
    full = build_bm25(texts, len(texts), Tokenizer(), BM25Params())
    lengths = np.asarray(full.doc_len)
    avg = np.float32(float(lengths.sum()) / len(lengths))
    for t in range(0, len(full.vocab) - 1, 7):
        s, e = int(full.indptr[t]), int(full.indptr[t + 1])
        docs = np.asarray(full.indices[s:e], np.int64)
        weights = full.data[s:e]
        idf = idf_of(e - s, len(texts), "lucene")
        consts = np.array([avg, 1.5, np.float32(1 - 0.75), 0.75], np.float32)
        got = index_bm25._kernels().exact_scores(
            full.indptr, full.indices, full.tf, full.doc_len, np.asarray([t], np.int64),
            np.array([[idf[0]], [1.0]], np.float32), docs, consts,
        )  # fmt: skip
        assert np.array_equal(got, weights), t
