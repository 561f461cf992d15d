"""One BM25 routine for every index: an index as built and one after updates answer
through the same compiled ``search``/``score``, and the updated one answers exactly
as a rebuild of the same documents (scores to float32 summation order, same ranking).
"""

from __future__ import annotations

import numpy as np
import pytest

from ark.index import BM25Params, Tokenizer, build_bm25
from ark.probes import SegmentedBM25, Stats, delta_index


def _texts(rng: np.random.Generator, n: int, words: int, long: bool = False) -> list[str]:
    vocab = [f"w{i}" for i in range(words)]
    p = 1 / np.arange(1, words + 1) ** 1.1
    p /= p.sum()
    size = (20, 90) if long else (0, 25)
    return [" ".join(rng.choice(vocab, size=rng.integers(*size), p=p)) for _ in range(n)]


def _updated(base_texts, new_texts, dead):
    """A base index plus the added documents, with ``dead`` base documents removed,
    as ``open_snapshot`` assembles it."""
    tok, params = Tokenizer(), BM25Params()
    base = build_bm25(base_texts, len(base_texts), tok, params)
    mini = build_bm25(new_texts, len(new_texts), tok, params)
    removed_df: dict[str, int] = {}
    for i in dead.tolist():
        for w in set(tok.tokens(base_texts[i])):
            removed_df[w] = removed_df.get(w, 0) + 1
    base_len = np.asarray(base.doc_len)
    stats = Stats(
        n_docs=len(base_texts) - len(dead) + len(new_texts),
        total_len=int(base_len.sum() - base_len[dead].sum() + np.asarray(mini.doc_len).sum()),
    )
    delta = delta_index(
        dict(mini.vocab), mini.indptr, mini.indices, mini.tf, mini.doc_len, base, removed_df, stats
    )
    return SegmentedBM25(base, delta, len(base_texts), dead, removed_df, stats)


@pytest.mark.parametrize("seed", range(12))
def test_an_updated_index_answers_as_a_rebuild(seed):
    """Random base, added documents (sometimes much longer: every base weight moves)
    and removed ones; every query's top k and the scores of every document equal those
    of an index built from scratch on the live documents."""
    rng = np.random.default_rng(seed)
    base_texts = _texts(rng, int(rng.integers(50, 400)), 120)
    new_texts = _texts(rng, int(rng.integers(1, 200)), 160, long=seed % 3 == 0)
    dead = np.unique(rng.integers(0, len(base_texts), size=int(rng.integers(0, 30))))
    seg = _updated(base_texts, new_texts, dead)
    live = [i for i in range(len(base_texts)) if i not in set(dead.tolist())]
    live += list(range(len(base_texts), len(base_texts) + len(new_texts)))
    rebuilt = build_bm25(
        [(base_texts + new_texts)[i] for i in live], len(live), Tokenizer(), BM25Params()
    )
    every = np.arange(len(live))
    for _ in range(15):
        n_words = int(rng.integers(1, 12))
        query = " ".join(f"w{int(x)}" for x in rng.integers(0, 170, size=n_words))
        want_scores = rebuilt.score_docs(rebuilt.query_terms(query), every)
        got_scores = seg.score_docs(seg.query_terms(query), np.asarray(live))
        np.testing.assert_allclose(got_scores, want_scores, rtol=1e-5, atol=1e-7)
        by_node = dict(zip(live, want_scores.tolist(), strict=True))
        for k in (1, 5, 20):
            docs, scores = seg.top_k(seg.query_terms(query), k)
            want_docs, want = rebuilt.top_k(rebuilt.query_terms(query), k + 1)
            assert len(docs) == min(k, len(want))
            np.testing.assert_allclose(scores, want[:k], rtol=1e-5)
            # each document returned has that score in the rebuild ...
            np.testing.assert_allclose([by_node[d] for d in docs.tolist()], scores, rtol=1e-5)
            # ... and where no two scores are within float32 rounding, the same order
            if not np.any(np.diff(want) > -1e-5 * float(want[0]) if len(want) else 0):
                assert docs.tolist() == [live[d] for d in want_docs[:k].tolist()]


def test_an_update_with_nothing_added_is_the_index_as_built():
    """The one routine's one-segment case: a snapshot whose delta adds nothing and whose
    statistics have not moved scores every document to the bit (rescored from term
    frequencies: a rebuild's weights), and ranks alike."""
    rng = np.random.default_rng(5)
    texts = _texts(rng, 300, 150)
    base = build_bm25(texts, len(texts), Tokenizer(), BM25Params())
    seg = _updated(texts, [], np.zeros(0, np.int64))
    every = np.arange(len(texts))
    for _ in range(30):
        query = " ".join(f"w{int(x)}" for x in rng.integers(0, 160, size=int(rng.integers(1, 9))))
        terms = base.query_terms(query)
        assert np.array_equal(seg.query_terms(query), terms)
        assert np.array_equal(seg.score_docs(terms, every), base.score_docs(terms, every))
        for k in (1, 5, 50):
            (docs, scores), (want_docs, want) = seg.top_k(terms, k), base.top_k(terms, k)
            # top-k sums a document's terms in another order than score_docs: float32
            np.testing.assert_allclose(scores, want, rtol=1e-6)
            if not np.any(np.isclose(np.diff(want), 0, atol=1e-5)):
                assert np.array_equal(docs, want_docs)


def test_both_answer_through_the_one_kernel(monkeypatch):
    """An index as built and an updated one call the same compiled ``search``: replacing
    it changes what both answer."""
    from ark.probes import index_bm25 as _bm25

    rng = np.random.default_rng(9)
    texts = _texts(rng, 100, 60)
    base = build_bm25(texts, len(texts), Tokenizer(), BM25Params())
    seg = _updated(texts[:80], texts[80:], np.array([3], np.int64))
    kernels = _bm25._kernels()
    calls = []
    real = kernels.search

    def spy(*args):
        calls.append(len(args[3][1]))  # the term tables: empty for an index as built
        return real(*args)

    monkeypatch.setattr(kernels, "search", spy)
    base.top_k(base.query_terms("w1 w2"), 5)
    seg.top_k(seg.query_terms("w1 w2"), 5)
    assert len(calls) == 2 and calls[0] == 0 and calls[1] > 0


def test_term_ids_from_elsewhere_are_resolved_before_the_kernel_reads_them():
    """``top_k``/``score_docs`` given ids that ``query_terms`` never resolved (a fresh
    snapshot, ids from ``vocab.get``) answer as after ``query_terms``; an id past the
    vocabulary is skipped, as the index as built skips it."""
    rng = np.random.default_rng(11)
    base_texts, new_texts = _texts(rng, 200, 80), _texts(rng, 60, 120, long=True)
    dead = np.array([2, 7], np.int64)
    live = np.array([i for i in range(260) if i not in (2, 7)])
    for query in ("w0 w3 w3", "w5 w90 w110", "w1"):
        resolved = _updated(base_texts, new_texts, dead)
        terms = resolved.query_terms(query)
        want = resolved.top_k(terms, 10)
        want_scores = resolved.score_docs(terms, live)
        fresh = _updated(base_texts, new_texts, dead)
        ids = np.array([fresh.vocab.get(w) for w in query.split()], np.int64)
        assert np.array_equal(ids, terms)
        got = fresh.top_k(ids, 10)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
        fresh = _updated(base_texts, new_texts, dead)
        assert np.array_equal(fresh.score_docs(ids, live), want_scores)
        past = np.append(ids, len(fresh.vocab) + 1_000)
        got = fresh.top_k(past, 10)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_the_added_documents_pass_answers_as_a_rebuild_with_long_lists_and_short():
    """The added documents are read whole when their lists are short and pruned
    (MaxScore) when long; both answer as a rebuild. Many added documents share the
    common words, so some queries take each way (checked)."""
    rng = np.random.default_rng(21)
    base_texts, new_texts = _texts(rng, 300, 120), _texts(rng, 1500, 160, long=True)
    seg = _updated(base_texts, new_texts, np.zeros(0, np.int64))
    rebuilt = build_bm25(base_texts + new_texts, 1800, Tokenizer(), BM25Params())
    budget = int(seg._view.budgets[1])
    ways = set()
    for i in range(40):
        words = rng.integers(0, 6 if i % 2 else 160, size=int(rng.integers(1, 5)))
        query = " ".join(f"w{int(x)}" for x in words)
        terms = seg.query_terms(query)
        delta_ids = [seg.delta.vocab[w] for w in set(query.split()) if w in seg.delta.vocab]
        ways.add(sum(int(np.diff(seg.delta.indptr)[d]) for d in delta_ids) > budget)
        for k in (1, 5, 20):
            docs, scores = seg.top_k(terms, k)
            want_docs, want = rebuilt.top_k(rebuilt.query_terms(query), k)
            np.testing.assert_allclose(scores, want, rtol=1e-5)
            if not np.any(np.isclose(np.diff(want), 0, rtol=1e-5)):
                assert np.array_equal(docs, want_docs)
    assert ways == {True, False}


@pytest.mark.parametrize("n", [0, 3, 12, 40, 90])
def test_the_top_k_of_both_sides_is_a_sort_by_score_then_document(n):
    """The merge of the base's and the added documents' candidates (a selection loop
    for few, a sort for many) equals sorting by score descending, ties by document."""
    from ark.probes import index_kernels as _kernels

    rng = np.random.default_rng(n)
    for k in (1, 5, 13):
        nb = int(rng.integers(0, n + 1))
        docs = rng.permutation(1000)[:n].astype(np.int64)
        scores = rng.integers(0, 4, size=n).astype(np.float32)  # many ties
        got_d, got_s = _kernels._merge_top(docs[:nb], scores[:nb], docs[nb:], scores[nb:], k)
        pairs = zip(docs.tolist(), scores.tolist(), strict=True)
        want = sorted(pairs, key=lambda x: (-x[1], x[0]))[:k]
        assert got_d.tolist() == [d for d, _ in want]
        assert got_s.tolist() == [s for _, s in want]
