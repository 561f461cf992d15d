"""ARK's own BM25 factors (``ark.index._scoring``) against bm25s's: the same bits on
random inputs, the same stored weights as a bm25s index for every method offered, and a
clear refusal of the methods a postings index cannot score."""

import bm25s
import numpy as np
import pytest

# The reference these replace: bm25s's private scorers, read here only to compare.
from bm25s.scoring import _select_idf_scorer, _select_tfc_scorer  # noqa: TID251

from ark.index import BM25Params, Tokenizer, build_bm25
from ark.probes import METHODS, idf, tfc, weights


def _bm25s_idf(df: np.ndarray, n_docs: int, method: str) -> np.ndarray:
    # As the build computed it before: bm25s's scalar function over every entry.
    fn = np.vectorize(_select_idf_scorer(method), otypes=[np.float64])
    return fn(df, n_docs).astype(np.float32)


def _bm25s_tfc(tf, doc_len, avg_len, k1, b, method):
    return _select_tfc_scorer(method)(
        tf_array=tf.astype(np.float32),
        l_d=doc_len.astype(np.float32),
        l_avg=np.float32(avg_len),
        k1=k1,
        b=b,
    ).astype(np.float32)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", range(5))
def test_factors_are_bm25s_bits_on_random_inputs(method, seed):
    rng = np.random.default_rng(seed)
    n_docs = int(rng.integers(1, 200_000))
    # Every frequency kind: 1, the whole collection, half of it (robertson's clip at
    # zero), repeats (one computation per distinct value must not mix them up).
    df = np.concatenate(
        [
            rng.integers(1, n_docs + 1, size=2000),
            [1, n_docs, max(1, n_docs // 2), (n_docs + 1) // 2],
            rng.integers(1, 4, size=50),
        ]
    )
    assert np.array_equal(idf(df, n_docs, method), _bm25s_idf(df, n_docs, method))
    tf = rng.integers(1, 60, size=5000)
    doc_len = rng.integers(1, 900, size=5000)
    avg_len = float(rng.uniform(1, 300))
    k1, b = float(rng.uniform(0.1, 3)), float(rng.uniform(0, 1))
    ours = tfc(tf, doc_len, avg_len, k1, b, method)
    assert ours.dtype == np.float32
    assert np.array_equal(ours, _bm25s_tfc(tf, doc_len, avg_len, k1, b, method))
    idf_ = idf(rng.integers(1, n_docs + 1, size=5000), n_docs, method)
    assert np.array_equal(
        weights(idf_, tf, doc_len, avg_len, k1, b, method),
        idf_ * _bm25s_tfc(tf, doc_len, avg_len, k1, b, method),
    )


def test_a_term_without_postings_weighs_nothing():
    assert idf(np.array([0, 3, 0]), 10, "lucene")[[0, 2]].tolist() == [0.0, 0.0]
    assert idf(3, 10, "atire").shape == (1,)


def _corpus(n_docs: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(300)])
    p = 1 / np.arange(1, 301) ** 1.1
    p /= p.sum()
    return [" ".join(rng.choice(vocab, size=rng.integers(0, 30), p=p)) for _ in range(n_docs)]


@pytest.mark.parametrize("method", METHODS)
def test_stored_weights_are_those_of_a_bm25s_index(method):
    corpus = _corpus(400, seed=len(method))
    params = BM25Params(method=method, k1=1.2, b=0.6)
    ours = build_bm25(corpus, len(corpus), Tokenizer(), params)
    ref = bm25s.BM25(method=method, k1=params.k1, b=params.b)
    ref.index(bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False)
    checked = 0
    for token, ref_id in ref.vocab_dict.items():
        if token == "":
            continue
        s, e = ref.scores["indptr"][ref_id], ref.scores["indptr"][ref_id + 1]
        order = np.argsort(ref.scores["indices"][s:e])
        docs, vals = ours._postings(ours.vocab[token])
        np.testing.assert_array_equal(docs, ref.scores["indices"][s:e][order])
        np.testing.assert_allclose(vals, ref.scores["data"][s:e][order], rtol=1e-6)
        checked += 1
    assert checked > 100


@pytest.mark.parametrize("method", ["bm25l", "bm25+", "okapi"])
def test_a_method_postings_cannot_score_is_refused_by_name(method):
    with pytest.raises(ValueError, match=r"not supported: choose one of lucene, robertson"):
        build_bm25(["alpha beta", "beta"], 2, Tokenizer(), BM25Params(method=method))


@pytest.mark.parametrize("method", METHODS)
def test_one_frequencys_idf_is_the_arrays_bits(method):
    """An updated index resolves a query's terms one at a time (``idf_one``): the same
    float32 value as the build's array computation, or the weights would drift."""
    from ark.probes import idf_one

    rng = np.random.default_rng(3)
    for n_docs in (1, 7, 95_000, int(rng.integers(1, 10**7))):
        df = np.unique(
            np.concatenate([[0, 1, n_docs, max(1, n_docs // 2)], rng.integers(0, n_docs + 1, 300)])
        )
        want = idf(df, n_docs, method)
        got = np.array([idf_one(int(d), n_docs, method) for d in df.tolist()], np.float64)
        assert got.astype(np.float32).tobytes() == want.tobytes()
        assert np.array_equal(got, want.astype(np.float64))  # exactly a float32 value
