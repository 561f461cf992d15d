"""Compiled BM25 query kernels (numba, cached on disk after the first compilation).

Two kernels over the term-major postings (``indptr``/``indices``/``data``, each
term's documents ascending):

* :func:`top_k` — the exact top ``k`` of a query: MaxScore with a first estimate of
  the k-th best score, a dense accumulator for the lists that must be read, and
  galloping probes into the others for the few documents that can still make it;
* :func:`score_docs` — the query's score of given (sorted) documents, for
  neighborhoods.

Both take the query's raw term ids (repeats kept), as ``bm25s`` does, and add each
distinct term's weight times its count.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Relative slack on every bound comparison, far above float32 rounding of sums of a
#: few dozen weights, so that pruning never drops a document that ties the k-th.
EPS = 1e-5

#: ``stats`` slots filled by :func:`top_k`.
STAT_TERMS = 0  # distinct query terms with postings
STAT_ACCUMULATED = 1  # terms whose postings were read in full
STAT_POSTINGS = 2  # postings of all terms
STAT_READ = 3  # postings read in full (dense accumulation)
STAT_CANDIDATES = 4  # documents left for probing after accumulation
STAT_PROBES = 5  # single-document look-ups in the lists not read
N_STATS = 6

#: Candidates are put in document order by sorting them when they are at most
#: SORT_MAX and fewer than the span of their document ids over SORT_OR_SCAN (numba's
#: sort costs ~8 ns a document up to a few thousand, a branch-free scan of the
#: accumulator ~0.5 ns a document), else by scanning the accumulator over that span.
SORT_OR_SCAN = 20
SORT_MAX = 4096
#: Relative cost of adding one posting to the accumulator and of looking one
#: candidate up in a list: a list is read in full when that is cheaper.
READ_COST = 1
#: Terms whose bound is below this share of the highest are not looked up when
#: scoring the seed documents.
SEED_MIN_BOUND = 0.05
#: The least candidate score: every document not touched has a score of 0.
TINY = 1e-30
PROBE_COST = 16


@njit(cache=True, nogil=True)
def _gallop(indices, lo, hi, doc):  # type: ignore[no-untyped-def]
    """First position in ``indices[lo:hi]`` (ascending) holding a value >= ``doc``."""
    if lo >= hi or indices[lo] >= doc:
        return lo
    prev = lo
    step = 1
    cur = lo + 1
    while cur < hi and indices[cur] < doc:
        prev = cur
        step *= 2
        cur = prev + step
    if cur > hi:
        cur = hi
    lo = prev + 1
    while lo < cur:
        mid = (lo + cur) >> 1
        if indices[mid] < doc:
            lo = mid + 1
        else:
            cur = mid
    return lo


@njit(cache=True, nogil=True)
def _distinct_terms(indptr, raw):  # type: ignore[no-untyped-def]
    """Distinct terms with postings, and each one's count in the query."""
    srt = np.sort(raw)
    terms = np.empty(len(srt), np.int64)
    mult = np.empty(len(srt), np.float32)
    m = 0
    i = 0
    while i < len(srt):
        t = srt[i]
        c = 1
        while i + c < len(srt) and srt[i + c] == t:
            c += 1
        i += c
        if 0 <= t < len(indptr) - 1 and indptr[t + 1] > indptr[t]:
            terms[m] = t
            mult[m] = c
            m += 1
    return terms[:m], mult[:m]


@njit(cache=True, nogil=True)
def _accumulate(indptr, indices, data, t, w, acc, touched, n_touched):  # type: ignore[no-untyped-def]
    """Add term ``t``'s weights (times ``w``) into the dense ``acc``; new documents are
    appended to ``touched``. Weights are positive, so ``acc[d] == 0`` means unseen."""
    s, e = indptr[t], indptr[t + 1]
    # Branch-free: whether a document is new is unpredictable.
    if w == 1.0:
        for j in range(s, e):
            d = indices[j]
            touched[n_touched] = d
            n_touched += acc[d] == 0.0
            acc[d] += data[j]
    else:
        for j in range(s, e):
            d = indices[j]
            touched[n_touched] = d
            n_touched += acc[d] == 0.0
            acc[d] += data[j] * w
    return n_touched


@njit(cache=True, nogil=True)
def _probe(indptr, indices, data, t, w, docs, scores, n):  # type: ignore[no-untyped-def]
    """Add term ``t``'s weight to ``scores[:n]`` of the ascending ``docs[:n]``; returns
    the number of look-ups."""
    pos, end = indptr[t], indptr[t + 1]
    for c in range(n):
        pos = _gallop(indices, pos, end, docs[c])
        if pos >= end:
            break
        if indices[pos] == docs[c]:
            scores[c] += data[pos] * w
    return n


@njit(cache=True, nogil=True)
def _kth_largest(values, n, k):  # type: ignore[no-untyped-def]
    if n < k:
        return 0.0
    return np.partition(values[:n].copy(), n - k)[n - k]


@njit(cache=True, nogil=True)
def _best(docs, scores, n, k):  # type: ignore[no-untyped-def]
    """Top ``k`` of ``docs[:n]`` (ascending) by score, ties by ascending document."""
    if n > k:
        kth = _kth_largest(scores, n, k)
        m = 0
        for i in range(n):
            if scores[i] >= kth:
                docs[m] = docs[i]
                scores[m] = scores[i]
                m += 1
        n = m
    order = np.argsort(-scores[:n], kind="mergesort")[:k]  # stable: docs stay ascending
    out_docs = np.empty(len(order), np.int64)
    out_scores = np.empty(len(order), np.float32)
    for i in range(len(order)):
        out_docs[i] = docs[order[i]]
        out_scores[i] = scores[order[i]]
    return out_docs, out_scores


@njit(cache=True, nogil=True)
def _count_above(acc, touched, n_touched, need, stride):  # type: ignore[no-untyped-def]
    """How many of the touched documents have ``acc >= need`` (every ``stride``-th
    sampled, scaled up)."""
    n = 0
    for i in range(0, n_touched, stride):
        if acc[touched[i]] >= need:
            n += 1
    return n * stride


@njit(cache=True, nogil=True)
def top_k(  # type: ignore[no-untyped-def]
    indptr, indices, data, term_max, raw, k, acc, touched, stats, budget, n_seed
):
    """The ``k`` best documents with a positive score, by score then index (exact).

    ``acc`` (float32, one per document) must be all zero and is left all zero;
    ``touched`` (int32, one per document) is scratch. ``stats`` receives the
    ``STAT_*`` counters.

    1. Terms by decreasing upper bound (highest weight times count in the query).
       The first ones — rare words, short lists — are added to ``acc`` until
       ``budget`` postings are read; if that is all of them, the scores are exact.
    2. The ``n_seed`` best documents so far are scored exactly (galloping look-ups
       in the other lists); the k-th best of those, ``theta``, is a lower bound of
       the final k-th best score.
    3. MaxScore: while the bounds of the terms not read sum to ``theta`` or more, a
       document none of the read terms contains could still make the top k, so the
       next list is read in full. After that, a list is still read in full while
       that is cheaper than looking its documents up one by one for the candidates
       (the documents whose partial score plus the bounds left reaches ``theta``).
    4. The candidates, in document order, are completed by galloping look-ups in the
       lists not read, each dropped as soon as its partial score plus the bounds
       left falls below ``theta``; ``theta`` rises with each completed score.
    """
    terms, mult = _distinct_terms(indptr, raw)
    return top_k_weighted(
        indptr, indices, data, term_max, terms, mult, k, acc, touched, stats, budget, n_seed, 0.0
    )


@njit(cache=True, nogil=True)
def top_k_weighted(  # type: ignore[no-untyped-def]
    indptr, indices, data, term_max, terms, mult, k, acc, touched, stats, budget, n_seed, theta0
):
    """:func:`top_k` over distinct ``terms`` each weighted by ``mult`` (float32,
    positive) instead of its count in a query. ``theta0 > 0`` is a known lower bound
    of the k-th best score: with a large ``k`` it returns every document scoring at
    least ``theta0`` (and perhaps a few just below), pruning the rest."""
    for i in range(len(stats)):
        stats[i] = 0
    m = len(terms)
    if m == 0 or k <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    bounds = np.empty(m, np.float64)
    for j in range(m):
        bounds[j] = term_max[terms[j]] * mult[j]
    order = np.argsort(-bounds, kind="mergesort")
    terms, mult, bounds = terms[order], mult[order], bounds[order]
    rest = np.zeros(m + 1, np.float64)  # rest[j]: bound of the terms from j on
    lengths = np.empty(m, np.int64)
    for j in range(m - 1, -1, -1):
        rest[j] = rest[j + 1] + bounds[j]
        lengths[j] = indptr[terms[j] + 1] - indptr[terms[j]]
    stats[STAT_TERMS] = m
    stats[STAT_POSTINGS] = lengths.sum()

    # 1. The rarest terms, in full.
    n_touched = 0
    read = 0
    a = 0
    while a < m and (a == 0 or read + lengths[a] <= budget):
        n_touched = _accumulate(indptr, indices, data, terms[a], mult[a], acc, touched, n_touched)
        read += lengths[a]
        a += 1

    theta = theta0
    if a < m and n_touched >= k:
        # 2. A first theta from the exact scores of the best documents so far.
        n_s = min(n_touched, max(n_seed, k))
        vals = np.empty(n_touched, np.float32)
        for i in range(n_touched):
            vals[i] = acc[touched[i]]
        cut = _kth_largest(vals, n_touched, n_s)
        seed = np.empty(n_touched, np.int64)
        n_s = 0
        for i in range(n_touched):
            if vals[i] >= cut:
                seed[n_s] = touched[i]
                n_s += 1
        seed = np.sort(seed[:n_s])
        exact = np.empty(n_s, np.float32)
        for i in range(n_s):
            exact[i] = acc[seed[i]]
        # Terms of little weight (the most common words, the longest lists) are left
        # out: scores without them are lower bounds still.
        for j in range(a, m):
            if bounds[j] >= SEED_MIN_BOUND * bounds[0]:
                stats[STAT_PROBES] += _probe(
                    indptr, indices, data, terms[j], mult[j], seed, exact, n_s
                )
        theta = max(theta0, _kth_largest(exact, n_s, k))

    # 3. Lists read in full: those MaxScore requires, then those cheaper to read.
    while a < m:
        if rest[a] * (1 + EPS) < theta:
            stride = max(1, n_touched // 1024)
            cand = _count_above(acc, touched, n_touched, theta / (1 + EPS) - rest[a], stride)
            if lengths[a] * READ_COST > cand * PROBE_COST:
                break
        n_touched = _accumulate(indptr, indices, data, terms[a], mult[a], acc, touched, n_touched)
        read += lengths[a]
        a += 1
    stats[STAT_ACCUMULATED] = a
    stats[STAT_READ] = read

    # 4. The candidates, in document order, completed by look-ups.
    need = max(theta / (1 + EPS) - rest[a], TINY)  # > 0: untouched documents are 0
    n = 0
    lo, hi = len(acc), 0
    for i in range(n_touched):
        d = touched[i]
        if acc[d] >= need:
            n += 1
            lo = min(lo, d)
            hi = max(hi, d + 1)
    docs = np.empty(n + 1, np.int64)
    if n <= SORT_MAX and n * SORT_OR_SCAN < hi - lo:  # few: gather and sort
        n = 0
        for i in range(n_touched):
            d = touched[i]
            docs[n] = d
            n += acc[d] >= need
        docs = np.sort(docs[:n])
    else:  # many: a scan of the accumulator yields them in order (branch-free)
        n = 0
        for d in range(lo, hi):
            docs[n] = d
            n += acc[d] >= need
    scores = np.empty(n, np.float32)
    for i in range(n):
        scores[i] = acc[docs[i]]
    for i in range(n_touched):
        acc[touched[i]] = 0.0
    stats[STAT_CANDIDATES] = n
    if a == m:
        return _best(docs, scores, n, k)

    # Completed scores reaching theta; all of them, so that ties at the k-th are kept
    # and broken by index at the end.
    kept_s = np.empty(n, np.float32)
    kept_d = np.empty(n, np.int64)
    size = 0
    pos = np.empty(m, np.int64)
    for j in range(a, m):
        pos[j] = indptr[terms[j]]
    probes = 0
    for c in range(n):
        doc = docs[c]
        s = scores[c]
        alive = True
        for j in range(a, m):
            if (s + rest[j]) * (1 + EPS) < theta:
                alive = False
                break
            t = terms[j]
            e = indptr[t + 1]
            p = _gallop(indices, pos[j], e, doc)
            pos[j] = p
            probes += 1
            if p < e and indices[p] == doc:
                s += data[p] * mult[j]
        if alive and s * (1 + EPS) >= theta:
            kept_s[size] = s
            kept_d[size] = doc
            size += 1
            if size >= k and s > theta:
                # theta: the k-th best completed score (a lower bound of the final one)
                theta = max(theta, _kth_largest(kept_s, size, k))
                # keep the kept list short: drop what fell below theta
                if size > 8 * k:
                    kept = 0
                    for i in range(size):
                        if kept_s[i] * (1 + EPS) >= theta:
                            kept_s[kept] = kept_s[i]
                            kept_d[kept] = kept_d[i]
                            kept += 1
                    size = kept
    stats[STAT_PROBES] += probes
    return _best(kept_d, kept_s, size, k)


@njit(cache=True, nogil=True)
def score_docs(indptr, indices, data, raw, docs):  # type: ignore[no-untyped-def]
    """The query's BM25 score of each of ``docs`` (ascending, unique)."""
    out = np.zeros(len(docs), np.float32)
    if len(docs) == 0:
        return out
    terms, mult = _distinct_terms(indptr, raw)
    nd = len(docs)
    for j in range(len(terms)):
        t, w = terms[j], mult[j]
        s, e = indptr[t], indptr[t + 1]
        if e - s <= nd:  # walk the postings, gallop in the documents
            pos = 0
            for q in range(s, e):
                pos = _gallop(docs, pos, nd, indices[q])
                if pos >= nd:
                    break
                if docs[pos] == indices[q]:
                    out[pos] += data[q] * w
        else:  # walk the documents, gallop in the postings
            pos = s
            for c in range(nd):
                pos = _gallop(indices, pos, e, docs[c])
                if pos >= e:
                    break
                if indices[pos] == docs[c]:
                    out[c] += data[pos] * w
    return out


@njit(cache=True, nogil=True)
def _tfc(t, length, avg, k1, one_b, b):  # type: ignore[no-untyped-def]
    """float32 ``t / (k1 * ((1 - b) + b * length / avg) + t)``, one rounding per step."""
    x = (b * np.float32(length)) / avg
    return t / (k1 * (one_b + x) + t)


@njit(cache=True, nogil=True)
def exact_scores(indptr, indices, tf, doc_len, terms, weights, docs, consts):  # type: ignore[no-untyped-def]
    """BM25 (Lucene/Robertson length part) of ``docs`` (ascending, unique) from raw term
    frequencies and lengths, step by step in float32 as bm25s's numpy code computes
    ``idf * tf / (k1 * ((1 - b) + b * len / avg) + tf)``: the bits of a rebuild's
    stored weights (a test checks). ``weights``: each term's idf and count (float32,
    2 x terms); ``consts``: avg, k1, 1 - b, b (float32; ``1 - b`` computed in float64
    first, as numpy does with a Python float). Few arguments: dispatch costs per one."""
    nd = len(docs)
    out = np.zeros(nd, np.float32)
    avg, k1, one_b, b = consts[0], consts[1], consts[2], consts[3]
    for j in range(len(terms)):
        t, w, m = terms[j], weights[0, j], weights[1, j]
        s, e = indptr[t], indptr[t + 1]
        if e - s <= nd:
            pos = 0
            for q in range(s, e):
                pos = _gallop(docs, pos, nd, indices[q])
                if pos >= nd:
                    break
                if docs[pos] == indices[q]:
                    c = _tfc(np.float32(tf[q]), doc_len[docs[pos]], avg, k1, one_b, b)
                    out[pos] += (w * c) * m
        else:
            pos = s
            for c in range(nd):
                pos = _gallop(indices, pos, e, docs[c])
                if pos >= e:
                    break
                if indices[pos] == docs[c]:
                    x = _tfc(np.float32(tf[pos]), doc_len[docs[c]], avg, k1, one_b, b)
                    out[c] += (w * x) * m
    return out
