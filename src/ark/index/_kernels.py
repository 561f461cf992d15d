"""Compiled BM25 query kernels (numba, cached on disk after the first compilation).

One top-k routine and one scoring routine serve every index, as built or updated:

* :func:`search` — the exact top ``k`` of a query. Over an index as built it is one
  MaxScore pass (:func:`top_k_weighted`: a first estimate of the k-th best score, a
  dense accumulator for the lists that must be read, galloping probes into the others
  for the few documents that can still make it); after updates the same pass runs on
  the base with rescaled weights, its candidates are rescored exactly
  (:func:`exact_scores`), the added documents get their own pass, and both are merged
  — all in one call, so that an updated index pays no Python per step;
* :func:`score` — the query's score of given (sorted) documents, for neighborhoods.

Both take the query's raw term ids (repeats kept), as ``bm25s`` does, and add each
distinct term's weight times its count.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Relative slack on every bound comparison, far above float32 rounding of sums of a
#: few dozen weights, so that pruning never drops a document that ties the k-th.
EPS = 1e-5

#: ``stats`` slots filled by :func:`top_k_weighted`.
STAT_TERMS = 0  # distinct query terms with postings
STAT_ACCUMULATED = 1  # terms whose postings were read in full
STAT_POSTINGS = 2  # postings of all terms
STAT_READ = 3  # postings read in full (dense accumulation)
STAT_CANDIDATES = 4  # documents left for probing after accumulation
STAT_PROBES = 5  # single-document look-ups in the lists not read
N_STATS = 6

#: Candidates are put in document order by sorting them when they are at most
#: SORT_MAX and fewer than the span of their document ids over SORT_OR_SCAN, else by
#: scanning the accumulator over that span. Why 20 and 4096: docs/decisions/index-kernels.md.
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
def _within(docs, scores, n, k, widen):  # type: ignore[no-untyped-def]
    """Every one of ``docs[:n]`` (ascending) scoring at least ``widen`` times the
    ``k``-th best score (all of them when fewer than ``k``), by score then document."""
    cut = _kth_largest(scores, n, k) * widen
    m = 0
    for i in range(n):
        if scores[i] >= cut:
            docs[m] = docs[i]
            scores[m] = scores[i]
            m += 1
    order = np.argsort(-scores[:m], kind="mergesort")  # stable: docs stay ascending
    out_docs = np.empty(m, np.int64)
    out_scores = np.empty(m, np.float32)
    for i in range(m):
        out_docs[i] = docs[order[i]]
        out_scores[i] = scores[order[i]]
    return out_docs, out_scores


@njit(cache=True, nogil=True)
def _best(docs, scores, n, k, widen=1.0):  # type: ignore[no-untyped-def]
    """Top ``k`` of ``docs[:n]`` (ascending) by score, ties by ascending document; with
    ``widen < 1``, :func:`_within`'s window instead (every one within ``widen`` of the
    ``k``-th)."""
    out_docs, out_scores = _within(docs, scores, n, k, widen)
    if widen < 1.0:
        return out_docs, out_scores
    return out_docs[:k], out_scores[:k]


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
def _by_bound(term_max, terms, mult):  # type: ignore[no-untyped-def]
    """Each term's upper bound (its highest weight times its count) and the terms'
    order by decreasing bound (stable): the order every pass adds lists in, so that
    two passes over the same lists sum every score to the same bits."""
    bounds = np.empty(len(terms), np.float64)
    for j in range(len(terms)):
        bounds[j] = term_max[terms[j]] * mult[j]
    return bounds, np.argsort(-bounds, kind="mergesort")


@njit(cache=True, nogil=True)
def top_k_weighted(  # type: ignore[no-untyped-def]
    indptr, indices, data, term_max, terms, mult, k, acc, touched, stats, budget, n_seed, theta0,
    widen=1.0,
):  # fmt: skip
    """The ``k`` best documents with a positive score of ``sum(mult[i] *
    weight(terms[i], doc))`` over distinct ``terms`` (each ``mult`` positive float32:
    a term's count in the query, times a rescale after updates), by score then index
    (exact). ``theta0 > 0`` is a known lower bound of the k-th best score: with a large
    ``k`` it returns every document scoring at least ``theta0`` (and perhaps a few just
    below), pruning the rest. ``widen < 1`` returns instead every document scoring at
    least ``widen`` times the k-th best (ties at the cut and near ties included), by
    score then index: the candidates of a base whose scores are known to ``widen``'s
    precision (``search``), in the one pass.

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
    for i in range(len(stats)):
        stats[i] = 0
    m = len(terms)
    if m == 0 or k <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    bounds, order = _by_bound(term_max, terms, mult)
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
    cut = theta * widen  # what a document must reach to be returned

    # 3. Lists read in full: those MaxScore requires, then those cheaper to read.
    while a < m:
        if rest[a] * (1 + EPS) < cut:
            stride = max(1, n_touched // 1024)
            cand = _count_above(acc, touched, n_touched, cut / (1 + EPS) - rest[a], stride)
            if lengths[a] * READ_COST > cand * PROBE_COST:
                break
        n_touched = _accumulate(indptr, indices, data, terms[a], mult[a], acc, touched, n_touched)
        read += lengths[a]
        a += 1
    stats[STAT_ACCUMULATED] = a
    stats[STAT_READ] = read

    # 4. The candidates, in document order, completed by look-ups.
    need = max(cut / (1 + EPS) - rest[a], TINY)  # > 0: untouched documents are 0
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
        return _best(docs, scores, n, k, widen)

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
            if (s + rest[j]) * (1 + EPS) < cut:
                alive = False
                break
            t = terms[j]
            e = indptr[t + 1]
            p = _gallop(indices, pos[j], e, doc)
            pos[j] = p
            probes += 1
            if p < e and indices[p] == doc:
                s += data[p] * mult[j]
        if alive and s * (1 + EPS) >= cut:
            kept_s[size] = s
            kept_d[size] = doc
            size += 1
            if size >= k and s > theta:
                # theta: the k-th best completed score (a lower bound of the final one)
                theta = max(theta, _kth_largest(kept_s, size, k))
                cut = theta * widen
                # keep the kept list short: drop what fell below the cut
                if size > 8 * k:
                    kept = 0
                    for i in range(size):
                        if kept_s[i] * (1 + EPS) >= cut:
                            kept_s[kept] = kept_s[i]
                            kept_d[kept] = kept_d[i]
                            kept += 1
                    size = kept
    stats[STAT_PROBES] += probes
    return _best(kept_d, kept_s, size, k, widen)


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


# -- the one query routine: a base (one segment) and, after updates, a delta ------------

#: Relative slack on the bounds of a base with moved statistics (``_seg_bm25.py``), far
#: above float32 rounding of a few dozen terms.
SLACK = 1e-4
#: The top k of both sides is chosen by a selection loop up to this many candidates
#: (no concatenation or sort); beyond, by sorting.
MERGE_MAX = 64


@njit(cache=True, nogil=True)
def _split_terms(b_indptr, raw, v0, term_idf, term_scale, delta_of):  # type: ignore[no-untyped-def]
    """The query's distinct unified terms (ascending) with a live document, split into
    what each side needs: the base's terms with their rescale times count (the bound
    search), their idf and count (exact rescoring), and the delta's terms and counts.
    A unified id below ``v0`` is a base term (``delta_of``: its delta id or -1); from
    ``v0`` on, a term only the delta has."""
    srt = np.sort(raw)
    n = len(srt)
    ids = np.empty((3, n), np.int64)  # two buffers, sliced: an allocation costs more
    ws = np.empty((4, n), np.float32)  # than the few terms of a query
    ch_ids, ex_ids, d_ids = ids[0], ids[1], ids[2]
    ch_w, ex_w, d_w = ws[0], ws[1:3], ws[3]
    n_ch = n_ex = n_d = 0
    i = 0
    while i < n:
        u = srt[i]
        c = 1
        while i + c < n and srt[i + c] == u:
            c += 1
        i += c
        if u < 0 or u >= len(term_idf) or term_idf[u] <= 0:
            continue  # no live document has it
        d = -1
        if u < v0:
            d = delta_of[u]
            if b_indptr[u + 1] > b_indptr[u]:
                ex_ids[n_ex] = u
                ex_w[0, n_ex] = term_idf[u]
                ex_w[1, n_ex] = c
                n_ex += 1
                if term_scale[u] > 0:
                    ch_ids[n_ch] = u
                    ch_w[n_ch] = term_scale[u] * c  # float64 product, then float32
                    n_ch += 1
        else:
            d = u - v0
        if d >= 0:
            d_ids[n_d] = d
            d_w[n_d] = c
            n_d += 1
    return ch_ids[:n_ch], ch_w[:n_ch], ex_ids[:n_ex], ex_w[:, :n_ex], d_ids[:n_d], d_w[:n_d]


@njit(cache=True, nogil=True)
def _unresolved(raw, term_idf):  # type: ignore[no-untyped-def]
    """Whether a query term's tables are not yet filled (idf -1: the caller resolves it
    and asks again, so the common case pays no check in Python)."""
    for i in range(len(raw)):
        u = raw[i]
        if 0 <= u < len(term_idf) and term_idf[u] < 0:
            return True
    return False


@njit(cache=True, nogil=True)
def _above(indptr, indices, data, term_max, terms, mult, acc, touched, theta0):  # type: ignore[no-untyped-def]
    """Every document scoring at least ``theta0`` (in no order), all of ``terms``'
    lists read: the added documents' pass when their lists are short. Lists are added
    in :func:`top_k_weighted`'s order (:func:`_by_bound`), so every sum has the same
    bits as that routine's."""
    _, order = _by_bound(term_max, terms, mult)
    n_touched = 0
    for j in order:
        n_touched = _accumulate(indptr, indices, data, terms[j], mult[j], acc, touched, n_touched)
    need = max(theta0, TINY)
    n = 0
    for i in range(n_touched):
        n += acc[touched[i]] >= need
    docs = np.empty(n, np.int64)
    scores = np.empty(n, np.float32)
    n = 0
    for i in range(n_touched):
        d = touched[i]
        if acc[d] >= need:
            docs[n] = d
            scores[n] = acc[d]
            n += 1
        acc[d] = 0.0
    return docs, scores


@njit(cache=True, nogil=True)
def _merge_top(docs_b, scores_b, docs_d, scores_d, k):  # type: ignore[no-untyped-def]
    """The top ``k`` of both sides by score descending, equal scores by ascending
    document (either side in any order)."""
    nb, n = len(docs_b), len(docs_b) + len(docs_d)
    if n > MERGE_MAX:
        docs = np.concatenate((docs_b, docs_d))
        scores = np.concatenate((scores_b, scores_d))
        by_doc = np.argsort(docs)
        return _best(docs[by_doc], scores[by_doc], n, k)
    m = min(k, n)
    out_d = np.empty(m, np.int64)
    out_s = np.empty(m, np.float32)
    used = np.zeros(n, np.bool_)
    for r in range(m):
        at, bd, bs = -1, 0, np.float32(0.0)
        for i in range(n):
            if used[i]:
                continue
            if i < nb:
                s, d = scores_b[i], docs_b[i]
            else:
                s, d = scores_d[i - nb], docs_d[i - nb]
            if at < 0 or s > bs or (s == bs and d < bd):
                at, bd, bs = i, d, s
        used[at] = True
        out_d[r] = bd
        out_s[r] = bs
    return out_d, out_s


@njit(cache=True, nogil=True)
def _live(docs, dead):  # type: ignore[no-untyped-def]
    if len(dead) == 0:
        return docs
    out = np.empty(len(docs), np.int64)
    m = 0
    for i in range(len(docs)):
        out[m] = docs[i]
        m += not dead[docs[i]]
    return out[:m]


@njit(cache=True, nogil=True)
def search(  # type: ignore[no-untyped-def]
    base,
    delta,
    raw,
    tables,
    dead,
    consts,
    widen,
    k,
    budgets,
    n_seed,
    scratch,
    stats,
):
    """The ``k`` best live documents of a query, by score descending, equal scores by
    ascending document (exact): the one top-k routine of every index.

    ``base``: (indptr, indices, data, term_max, tf, doc_len) of the base's postings;
    ``raw``: the query's term ids, repeats kept. An index as built (``tables`` empty)
    is one MaxScore pass over the stored weights (:func:`top_k_weighted`). After
    updates (``_seg_bm25.py``), ``tables`` = (v0, idf, rescale, delta_of) per unified
    term, ``delta`` = (indptr, indices, data, term_max) of the added documents with
    exact weights (numbered from ``n_base``), ``dead`` the removed base documents,
    ``consts`` (avg, k1, 1 - b, b) the whole graph's length statistics and ``widen``
    the ratio ``lo / hi`` of the bounds on a rescaled weight's error (1 as built);
    then, in this one call:

    1. the base's best ``k`` by rescaled weights (MaxScore) with every document within
       ``lo / hi`` of the k-th (ties and near ties at the cut: one of them may still
       pass it once scored exactly; no document further down can), live ones only,
       exactly rescored from the stored term frequencies and lengths;
    2. the delta's best, pruned below the base's k-th exact score;
    3. the top ``k`` of both.

    A query term whose tables are not filled yet (idf -1) returns one document and no
    score: the caller fills them and asks again.
    """
    b_indptr, b_indices, b_data, b_max, b_tf, b_len = base
    acc_b, touched_b, acc_d, touched_d = scratch
    if k <= 0 or len(raw) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    v0, term_idf, term_scale, delta_of = tables
    if len(term_idf) == 0:  # an index as built: its stored weights are exact
        terms, mult = _distinct_terms(b_indptr, raw)
        return top_k_weighted(
            b_indptr, b_indices, b_data, b_max, terms, mult, k,
            acc_b, touched_b, stats, budgets[0], n_seed, 0.0,
        )  # fmt: skip
    if _unresolved(raw, term_idf):
        return np.full(1, -1, np.int64), np.zeros(0, np.float32)
    d_indptr, d_indices, d_data, d_max = delta
    n_base = len(acc_b)
    ch_ids, ch_w, ex_ids, ex_w, d_ids, d_w = _split_terms(
        b_indptr, raw, v0, term_idf, term_scale, delta_of
    )
    # 1. The base: candidates by the rescaled weights, rescored exactly. A base
    # document's exact score lies within [lo, hi] times its rescaled one (``widen`` =
    # lo / hi): one that scores less than ``widen`` times the ask-th best
    # cannot pass the ask-th, so the pass returns all the others, ties at the cut
    # included, and no document left out needs a look. Removed documents taking places
    # among the best: ask for more.
    docs_b = np.zeros(0, np.int64)
    exact_b = np.zeros(0, np.float32)
    if len(ch_ids):
        ask = k
        while True:
            cand, approx = top_k_weighted(
                b_indptr, b_indices, b_data, b_max, ch_ids, ch_w, ask,
                acc_b, touched_b, stats, budgets[0], n_seed, 0.0, widen,
            )  # fmt: skip
            docs_b = _live(cand, dead)
            if len(cand) < ask or len(docs_b) == len(cand):
                break  # every document with a score is here, or none was removed
            sure = 0  # live documents at or above the ask-th rescaled score
            for i in range(len(cand)):
                sure += approx[i] >= approx[ask - 1] and not dead[cand[i]]
            if sure >= k:
                break
            ask = 4 * ask
        docs_b = np.sort(docs_b)
        exact_b = exact_scores(b_indptr, b_indices, b_tf, b_len, ex_ids, ex_w, docs_b, consts)
    floor = float(_kth_largest(exact_b, len(exact_b), k))
    # 2. The delta, pruned below the base's k-th exact score (lowered by the slack: it
    # was summed in another order).
    docs_d = np.zeros(0, np.int64)
    scores_d = np.zeros(0, np.float32)
    if len(d_ids) and len(acc_d):
        bound = 0.0
        for j in range(len(d_ids)):
            bound += float(d_max[d_ids[j]]) * float(d_w[j])
        if bound * (1 + SLACK) >= floor:
            postings = 0
            for j in range(len(d_ids)):
                postings += d_indptr[d_ids[j] + 1] - d_indptr[d_ids[j]]
            if postings <= budgets[1]:  # short lists: read them all, no pruning to plan
                docs_d, scores_d = _above(
                    d_indptr, d_indices, d_data, d_max, d_ids, d_w,
                    acc_d, touched_d, floor * (1 - SLACK),
                )  # fmt: skip
            else:
                docs_d, scores_d = top_k_weighted(
                    d_indptr, d_indices, d_data, d_max, d_ids, d_w, k,
                    acc_d, touched_d, stats, budgets[1], n_seed, floor * (1 - SLACK),
                )  # fmt: skip
            docs_d = docs_d + n_base
    # 3. The top k of both sides, equal scores by ascending document.
    return _merge_top(docs_b, exact_b, docs_d, scores_d, k)


@njit(cache=True, nogil=True)
def score(base, delta, raw, tables, consts, docs):  # type: ignore[no-untyped-def]
    """The query's score of each of ``docs`` (ascending, unique): the one scoring
    routine of every index. As built (``tables`` empty): the stored weights; after
    updates: base documents rescored exactly from their term frequencies and lengths,
    added ones from the delta's exact weights (see :func:`search`)."""
    b_indptr, b_indices, b_data, _, b_tf, b_len = base
    v0, term_idf, term_scale, delta_of = tables
    if len(term_idf) == 0:
        return score_docs(b_indptr, b_indices, b_data, raw, docs)
    out = np.zeros(len(docs), np.float32)
    if len(docs) == 0:
        return out
    _, _, ex_ids, ex_w, d_ids, d_w = _split_terms(b_indptr, raw, v0, term_idf, term_scale, delta_of)
    n_base = len(b_len)
    split = np.searchsorted(docs, n_base)
    if split and len(ex_ids):
        out[:split] = exact_scores(
            b_indptr, b_indices, b_tf, b_len, ex_ids, ex_w, docs[:split], consts
        )
    if split < len(docs) and len(d_ids):
        d_indptr, d_indices, d_data, _ = delta
        n = 0
        for j in range(len(d_w)):
            n += int(d_w[j])
        d_raw = np.empty(n, np.int64)
        n = 0
        for j in range(len(d_ids)):
            for _ in range(int(d_w[j])):
                d_raw[n] = d_ids[j]
                n += 1
        out[split:] = score_docs(d_indptr, d_indices, d_data, d_raw, docs[split:] - n_base)
    return out
