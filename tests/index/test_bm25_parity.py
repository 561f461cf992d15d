"""Parity with bm25s: same tokens, same weights, same top-k on the same index."""

import bm25s
import numpy as np
import pytest
import Stemmer

from ark.index import BM25Params, Tokenizer, TokenizerConfig, build_bm25

TEXTS = [
    "The Quick brown fox jumps over the lazy dog!",
    "Café déjà vu — naïve résumé, Zürich 2024 and ÉCOLE",
    "a I x 12 b2 __init__ snake_case CamelCase e-mail don't",
    "",
    "running runs ran runner; studies studying studied",
    "Tom Hanks starred in Forrest Gump (1994), directed by Robert Zemeckis.",
]


@pytest.mark.parametrize("stem", [None, "english"])
def test_tokens_match_bm25s(stem):
    ours = Tokenizer(TokenizerConfig(stemmer=stem, split_names=False))
    stemmer = Stemmer.Stemmer(stem) if stem else None
    theirs = bm25s.tokenize(
        TEXTS, stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False
    )
    assert [ours.tokens(t) for t in TEXTS] == theirs
    # Splitting names only adds terms after bm25s's own, which stay first and unchanged.
    split = Tokenizer(TokenizerConfig(stemmer=stem))
    for text, own in zip(TEXTS, theirs, strict=True):
        assert split.tokens(text)[: len(own)] == own


def zipf_corpus(n_docs: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(400)])
    p = 1 / np.arange(1, 401) ** 1.1
    p /= p.sum()
    return [" ".join(rng.choice(vocab, size=rng.integers(0, 40), p=p)) for _ in range(n_docs)]


def test_weights_match_bm25s():
    corpus = zipf_corpus(300)
    ours = build_bm25(corpus, len(corpus), Tokenizer(), BM25Params())
    ref = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    ref.index(bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False)
    for token, ref_id in ref.vocab_dict.items():
        if token == "":
            continue
        s, e = ref.scores["indptr"][ref_id], ref.scores["indptr"][ref_id + 1]
        ref_docs = ref.scores["indices"][s:e]
        ref_vals = ref.scores["data"][s:e]
        t = ours.vocab[token]
        docs, vals = ours._postings(t)
        order = np.argsort(ref_docs)
        np.testing.assert_array_equal(docs, ref_docs[order])
        np.testing.assert_allclose(vals, ref_vals[order], rtol=1e-5)


def test_top_k_matches_bm25s_retrieve_on_the_saved_index(tmp_path):
    corpus = zipf_corpus(2000, seed=1)
    ours = build_bm25(corpus, len(corpus), Tokenizer(), BM25Params())
    ours.save(tmp_path)
    ref = bm25s.BM25.load(tmp_path, mmap=True)
    rng = np.random.default_rng(2)
    checked = 0
    for _ in range(60):
        query = " ".join(f"w{i}" for i in rng.integers(0, 400, size=rng.integers(1, 12)))
        terms = ours.query_terms(query)
        docs, scores = ours.top_k(terms, 10)
        if len(docs) < 10:
            continue
        tokens = Tokenizer().tokens(query)
        ref_docs, ref_scores = ref.retrieve([tokens], k=10, show_progress=False)
        np.testing.assert_allclose(scores, ref_scores[0], rtol=1e-5)
        # Same documents, except where ties at the cut let either side pick.
        kth = scores[-1]
        assert set(docs[scores > kth + 1e-5]) == set(ref_docs[0][ref_scores[0] > kth + 1e-5])
        checked += 1
    assert checked > 40


@pytest.mark.parametrize("n_docs", [50, 3000])
def test_sparse_and_dense_accumulation_agree_with_full_scores(n_docs):
    corpus = zipf_corpus(n_docs, seed=3)
    index = build_bm25(corpus, n_docs, Tokenizer(), BM25Params())
    for query in ["w0 w1 w2", "w300", "w5 w5 w9 w120 w399", "w0"]:
        terms = index.query_terms(query)
        dense = index.score_docs(terms, np.arange(n_docs))
        docs, scores = index.top_k(terms, 7)
        expected = np.lexsort((np.arange(n_docs), -dense))[:7]
        expected = expected[dense[expected] > 0]
        assert docs.tolist() == expected.tolist()
        np.testing.assert_allclose(scores, dense[expected], rtol=1e-5)


def test_score_docs_on_subsets_both_branches():
    corpus = zipf_corpus(1000, seed=4)
    index = build_bm25(corpus, 1000, Tokenizer(), BM25Params())
    full = index.score_docs(index.query_terms("w0 w50 w399"), np.arange(1000))
    rng = np.random.default_rng(5)
    for size in (3, 40, 900):  # fewer and more docs than the terms' postings
        subset = np.sort(rng.choice(1000, size=size, replace=False))
        got = index.score_docs(index.query_terms("w0 w50 w399"), subset)
        np.testing.assert_allclose(got, full[subset], rtol=1e-6)


def test_unknown_and_stop_words_give_no_terms():
    index = build_bm25(["alpha beta"], 1, Tokenizer(), BM25Params())
    assert len(index.query_terms("the of and")) == 0
    assert len(index.query_terms("gamma")) == 0
    assert index.top_k(index.query_terms("gamma"), 5)[0].tolist() == []


@pytest.mark.slow
def test_pruned_top_k_is_exact_on_mixed_queries():
    corpus = zipf_corpus(20_000, seed=7)
    index = build_bm25(corpus, len(corpus), Tokenizer(), BM25Params())
    rng = np.random.default_rng(8)
    all_docs = np.arange(len(corpus))
    for _ in range(80):
        common = [f"w{i}" for i in rng.integers(0, 5, size=rng.integers(0, 4))]
        rare = [f"w{i}" for i in rng.integers(100, 400, size=rng.integers(0, 4))]
        terms = index.query_terms(" ".join(common + rare))
        if len(terms) == 0:
            continue
        dense = index.score_docs(terms, all_docs)
        k = int(rng.integers(1, 20))
        docs, scores = index.top_k(terms, k)
        expected = np.lexsort((all_docs, -dense))[:k]
        expected = expected[dense[expected] > 0]
        np.testing.assert_allclose(scores, dense[expected], rtol=1e-5)
        kth = scores[-1]
        assert set(docs[scores > kth * (1 + 1e-5)]) == set(
            expected[dense[expected] > kth * (1 + 1e-5)]
        )


def test_term_bounds_are_saved_and_bound_every_weight(tmp_path):
    from ark.index import BM25Index

    corpus = zipf_corpus(500, seed=9)
    index = build_bm25(corpus, len(corpus), Tokenizer(), BM25Params())
    index.save(tmp_path)
    loaded = BM25Index.load(tmp_path, Tokenizer(), BM25Params(), len(corpus))
    bounds = np.asarray(loaded.term_max())
    for t in range(len(loaded.vocab)):
        _, vals = loaded._postings(t)
        assert (vals <= bounds[t]).all() and (len(vals) == 0 or vals.max() == bounds[t])


def _exhaustive(index, terms, k):
    """Every document scored, ranked by score descending then index: the reference."""
    all_docs = np.arange(index.n_docs)
    dense = index.score_docs(terms, all_docs)
    order = np.lexsort((all_docs, -dense))[:k]
    return order[dense[order] > 0], dense


@pytest.mark.slow
def test_pruning_runs_and_matches_exhaustive_scoring():
    corpus = zipf_corpus(20_000, seed=11)
    index = build_bm25(corpus, len(corpus), Tokenizer(), BM25Params())
    rng = np.random.default_rng(12)
    pruned = 0
    for _ in range(60):
        # Question-like: several common words around a few rarer ones.
        words = [f"w{i}" for i in rng.integers(0, 12, size=6)]
        words += [f"w{i}" for i in rng.integers(30, 400, size=3)]
        terms = index.query_terms(" ".join(words))
        k = int(rng.integers(1, 16))
        docs, scores, stats = index.top_k_stats(terms, k)
        expected, dense = _exhaustive(index, terms, k)
        np.testing.assert_allclose(scores, dense[expected], rtol=1e-5)
        kth = scores[-1]
        assert set(docs[scores > kth * (1 + 1e-5)]) == set(
            expected[dense[expected] > kth * (1 + 1e-5)]
        )
        assert stats.postings == sum(len(index._postings(t)[0]) for t in set(terms.tolist()))
        if stats.pruned:
            pruned += 1
            assert stats.read < stats.postings
            assert stats.accumulated < stats.terms  # some lists were never read in full
    # The pruning branch is what ran for (nearly) all of these queries, and it skipped
    # most postings: common words' lists are long.
    assert pruned >= 50


def test_pruning_skips_most_postings_of_common_words():
    corpus = zipf_corpus(20_000, seed=13)
    index = build_bm25(corpus, len(corpus), Tokenizer(), BM25Params())
    terms = index.query_terms("w0 w1 w2 w3 w4 w5 w250 w333")
    docs, _, stats = index.top_k_stats(terms, 5)
    assert stats.pruned and stats.read < stats.postings / 4
    assert docs.tolist() == _exhaustive(index, terms, 5)[0].tolist()


def test_small_queries_are_scored_exhaustively():
    corpus = zipf_corpus(20_000, seed=14)
    index = build_bm25(corpus, len(corpus), Tokenizer(), BM25Params())
    _, _, stats = index.top_k_stats(index.query_terms("w300 w301"), 5)
    assert not stats.pruned and stats.read == stats.postings


@pytest.mark.slow
@pytest.mark.parametrize("common", [False, True])
def test_ties_are_broken_by_index(common):
    """Equal scores rank by ascending index, also at the cut to k, whether the query is
    scored exhaustively (rare words only) or pruned (with common words)."""
    rng = np.random.default_rng(15)
    corpus = zipf_corpus(20_000, seed=16)
    twins = sorted(rng.choice(len(corpus), size=12, replace=False).tolist())
    for i in twins:  # identical texts, so identical scores
        corpus[i] = "zebra quokka w0 w1 w2 w3"
    corpus[twins[5]] += " zebra"  # one twin scores higher
    index = build_bm25(corpus, len(corpus), Tokenizer(), BM25Params())
    query = "zebra quokka" + (" w0 w1 w2 w3 w4 w5 w6 w7" if common else "")
    terms = index.query_terms(query)
    docs, scores, stats = index.top_k_stats(terms, 4)
    assert stats.pruned == common
    assert docs.tolist() == [twins[5], *twins[:5][:3]]
    assert scores[1] == scores[2] == scores[3] < scores[0]
    assert docs.tolist() == _exhaustive(index, terms, 4)[0].tolist()


def test_concurrent_queries_each_get_their_own_accumulator():
    from concurrent.futures import ThreadPoolExecutor

    corpus = zipf_corpus(5_000, seed=17)
    index = build_bm25(corpus, len(corpus), Tokenizer(), BM25Params())
    rng = np.random.default_rng(18)
    queries = [
        index.query_terms(" ".join(f"w{i}" for i in rng.integers(0, 400, size=8)))
        for _ in range(64)
    ]
    expected = [index.top_k(q, 10)[0].tolist() for q in queries]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda q: index.top_k(q, 10)[0].tolist(), queries * 4))
    assert got == expected * 4
