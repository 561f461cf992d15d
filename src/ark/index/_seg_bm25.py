"""BM25 over a base index plus delta segments, scored with the whole graph's statistics.

A full rebuild on the changed graph gives every posting the weight
``idf(df, N) * tfc(tf, len, avg_len)`` with the *whole* graph's ``N``, document
frequencies and average length. The base's stored weights were computed with the
base's statistics, so after an update they are all slightly off. Recomputing them is
what a rebuild costs; instead, a query is answered exactly in two steps:

1. **Bounds.** Each query term's base weights are rescaled by ``idf'/idf`` (exact per
   term). What remains is the length part: with ``K = k1 (1 - b + b len/avg)``,
   ``tf/(tf + K')`` lies between ``tfc * min(1, avg'/avg)`` and ``tfc * max(1,
   avg'/avg)`` (proof in ``docs/updates.md``), so the rescaled score ``A`` of a base
   document bounds its true score ``S``: ``S <= hi * A``.
2. **Exact rescoring.** The base's compiled MaxScore kernel returns the top
   candidates by ``A``; their ``S`` is recomputed from the stored term frequencies and
   lengths with bm25s's own formulas (bit-identical weights). If a document left out
   could still reach the k-th best ``S`` (``hi * A_last >= S_k``), one more kernel
   call returns every document with ``A >= S_k / hi`` — those near ties — and they are
   rescored too. The answer is the top k of a rebuild, up to float32 summation order.

The delta segments are small: their weights are computed exactly once per snapshot
and they are an ordinary :class:`BM25Index` (local document ids). Removed documents
are dropped from the delta and filtered out of the base's candidates.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ark.index._bm25 import BM25Index, _kernels
from ark.index._seg_stats import Stats, idf_of
from ark.index._tokenize import Tokenizer

#: Relative slack on the bound, far above float32 rounding of a few dozen terms.
SLACK = 1e-4
#: Extra candidates asked of the base beyond k in the first step: one shows whether
#: the k-th is clear of the rest; more cost pruning (measured: 8 made long queries
#: 1.5x slower), and a near tie is settled by the second step anyway.
EXTRA = 1
#: Queries of at most FEW_TERMS words (names, mostly) ask EXTRA_FEW: their lists are
#: short, a larger k costs little, and ties at the cut (which a second step would
#: settle) are common among names.
FEW_TERMS = 4
EXTRA_FEW = 8


class SegmentedBM25:
    """The query interface of :class:`BM25Index` (``query_terms``, ``top_k``,
    ``score_docs``) over base + delta, exact under the whole graph's statistics.

    Term ids are unified: a base term keeps its base id, a term only the delta has
    gets ``len(base.vocab) + its delta id``.
    """

    def __init__(
        self,
        base: BM25Index,
        delta: BM25Index,
        n_base: int,
        dead_base: np.ndarray,
        removed_df: dict[str, int],
        stats: Stats,
    ) -> None:
        self._setup(base, delta, n_base, dead_base, removed_df, stats)

    @classmethod
    def lazy(
        cls,
        base: BM25Index,
        n_base: int,
        n_delta: int,
        build: Callable[[], tuple[BM25Index, np.ndarray, dict[str, int], Stats]],
    ) -> SegmentedBM25:
        """One whose delta is built on first use (``build`` returns the delta, the
        removed base documents, their term counts and the statistics): an update,
        which only needs the graph, does not pay for it."""
        self = cls.__new__(cls)
        self.__dict__.update(
            base=base,
            n_base=n_base,
            n_docs=n_base + n_delta,
            params=base.params,
            tokenizer=base.tokenizer,
            _build=build,
            _lock=threading.Lock(),
        )
        return self

    def __getattr__(self, name: str) -> Any:
        """Attributes of the delta side, built once on first access (see :meth:`lazy`)."""
        build = self.__dict__.get("_build")
        if build is None or name.startswith("__"):
            raise AttributeError(name)
        with self.__dict__["_lock"]:
            if "_build" in self.__dict__:
                delta, dead, removed_df, stats = build()
                self._setup(self.base, delta, self.n_base, dead, removed_df, stats)
                del self.__dict__["_build"]
        return self.__dict__[name] if name in self.__dict__ else object.__getattribute__(self, name)

    def _setup(
        self,
        base: BM25Index,
        delta: BM25Index,
        n_base: int,
        dead_base: np.ndarray,
        removed_df: dict[str, int],
        stats: Stats,
    ) -> None:
        if base.tf is None or base.doc_len is None:
            raise ValueError("the base index has no term counts")
        self.base = base
        self.delta = delta  # exact weights, documents n_base.. as 0..
        self.n_base = n_base
        self.n_docs = n_base + delta.n_docs
        self.stats = stats
        self.params = base.params
        self.tokenizer: Tokenizer = base.tokenizer
        self._dead = np.zeros(n_base, dtype=bool)
        self._dead[dead_base] = True
        self._any_dead = bool(len(dead_base))
        self._removed_df = removed_df
        self._v0 = len(base.vocab)
        self._delta_only: dict[str, int] = {
            t: i for t, i in delta.vocab.items() if t not in base.vocab
        }
        self._delta_terms = list(delta.vocab)
        self._delta_df = np.diff(delta.indptr)
        self._delta_max = delta.term_max().tolist()  # per-term bounds, as Python floats
        self._idf_cache: dict[int, tuple[float, float, int, int]] = {}
        self.vocab = _VocabView(self)
        p = base.params
        self._consts = np.array(
            [np.float32(stats.avg_len), np.float32(p.k1), np.float32(1 - p.b), np.float32(p.b)],
            np.float32,
        )
        self._avg_base = float(base.doc_len.sum(dtype=np.int64)) / n_base if n_base else 0.0
        ratio = stats.avg_len / self._avg_base if self._avg_base else 1.0
        self._hi = max(1.0, ratio) * (1 + SLACK)

    # -- terms ------------------------------------------------------------------------

    def _term(self, u: int) -> tuple[float, float, int, int]:
        """(idf', base rescale factor, base id or -1, delta id or -1) of unified id ``u``."""
        got = self._idf_cache.get(u)
        if got is not None:
            return got
        if u < self._v0:
            base_id = u
            word = self.base_word(u)
            delta_id = self.delta.vocab.get(word, -1)
            base_df = int(self.base.indptr[u + 1] - self.base.indptr[u])
        else:
            base_id, delta_id, base_df = -1, u - self._v0, 0
            word = self._delta_terms[delta_id]
        df = base_df - self._removed_df.get(word, 0)
        if delta_id >= 0:
            df += int(self._delta_df[delta_id])
        idf = float(idf_of(df, self.stats.n_docs, self.params.method)[0]) if df > 0 else 0.0
        scale = 0.0
        if base_id >= 0 and base_df:
            idf_base = float(idf_of(base_df, self.n_base, self.params.method)[0])
            scale = idf / idf_base if idf_base > 0 else 0.0
        got = (idf, scale, base_id, delta_id)
        if len(self._idf_cache) < 100_000:
            self._idf_cache[u] = got
        return got

    def base_word(self, u: int) -> str:
        words = self.__dict__.get("_base_words")
        if words is None:
            words = self.__dict__["_base_words"] = list(self.base.vocab)
        return words[u]  # type: ignore[no-any-return]

    def query_terms(self, text: str) -> np.ndarray:
        """Unified ids of the query's tokens (repeats kept); tokens no live document
        has are dropped, as a rebuild's vocabulary would not know them."""
        out = []
        base_vocab, delta_only = self.base.vocab, self._delta_only
        for token in self.tokenizer.tokens(text):
            u = base_vocab.get(token)
            if u is None:
                d = delta_only.get(token)
                if d is None:
                    continue
                u = self._v0 + d
            if self._term(u)[0] > 0:
                out.append(u)
        return np.asarray(out, dtype=np.int64)

    def _distinct(self, terms: np.ndarray) -> list[tuple[float, float, int, int, int]]:
        """(idf', base rescale, base id, delta id, count) of each distinct term, in
        ascending id order (a plain dict: queries have a handful of terms)."""
        counts: dict[int, int] = {}
        for u in sorted(np.asarray(terms).tolist()):
            counts[u] = counts.get(u, 0) + 1
        out = []
        for u, c in counts.items():
            idf, scale, b, d = self._term(u)
            if idf > 0:
                out.append((idf, scale, b, d, c))
        return out

    # -- scoring ----------------------------------------------------------------------

    def _base_exact(
        self, docs: np.ndarray, terms: list[tuple[float, float, int, int, int]]
    ) -> np.ndarray:
        """Exact scores of base documents ``docs`` (ascending, unique): one compiled
        pass over the query's postings and the stored counts."""
        ids = [b for _, _, b, _, _ in terms if b >= 0]
        if len(docs) == 0 or not ids:
            return np.zeros(len(docs), np.float32)
        weights = np.array(
            [[t[0] for t in terms if t[2] >= 0], [t[4] for t in terms if t[2] >= 0]], np.float32
        )
        return _kernels().exact_scores(  # type: ignore[no-any-return]
            self.base.indptr,
            self.base.indices,
            self.base.tf,
            self.base.doc_len,
            np.array(ids, np.int64),
            weights,
            docs,
            self._consts,
        )

    def score_docs(self, terms: np.ndarray, docs: np.ndarray) -> np.ndarray:
        """Exact BM25 of each of ``docs`` (ascending, unique node indices)."""
        docs = np.asarray(docs, dtype=np.int64)
        distinct = self._distinct(terms)
        if not distinct or len(docs) == 0:
            return np.zeros(len(docs), np.float32)
        if docs[-1] < self.n_base:  # the usual case: no added node among them
            return self._base_exact(docs, distinct)
        out = np.zeros(len(docs), np.float32)
        split = int(np.searchsorted(docs, self.n_base))
        if split:
            out[:split] = self._base_exact(docs[:split], distinct)
        if split < len(docs):
            out[split:] = self._delta_scores(distinct, docs[split:] - self.n_base)
        return out

    def _delta_scores(
        self, distinct: list[tuple[float, float, int, int, int]], local: np.ndarray
    ) -> np.ndarray:
        ids = [(d, c) for _, _, _, d, c in distinct if d >= 0]
        if not ids:
            return np.zeros(len(local), np.float32)
        raw = np.repeat(np.asarray([d for d, _ in ids], np.int64), [c for _, c in ids])
        return self.delta.score_docs(raw, local)

    def top_k(self, terms: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best live documents by exact score, ties by ascending index.

        The merging is done on Python lists: a few dozen numbers, where each numpy
        call would cost more than the work."""
        distinct = self._distinct(terms)
        if not distinct or k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        # The base first: its k-th best exact score is a lower bound of the answer's,
        # which lets the delta's kernel prune everything below it.
        docs_b, scores_b, rest = self._base_top(distinct, k)
        sb = scores_b.tolist()
        floor = sorted(sb, reverse=True)[k - 1] if len(sb) >= k else 0.0
        docs_d, scores_d = self._delta_top(distinct, k, floor)
        sd = scores_d.tolist()
        if rest is not None:
            pool = sorted(sb + sd, reverse=True)
            kth = pool[k - 1] if len(pool) >= k else 0.0
            if self._hi * rest[2] >= kth:  # near ties at the cut: the second step
                docs_b, scores_b = self._near_ties(distinct, docs_b, scores_b, rest, kth)
                sb = scores_b.tolist()
        best = sorted(
            zip(sb + sd, docs_b.tolist() + docs_d.tolist(), strict=True),
            key=lambda x: (-x[0], x[1]),
        )[:k]
        return (
            np.fromiter((d for _, d in best), np.int64, len(best)),
            np.fromiter((v for v, _ in best), np.float32, len(best)),
        )

    def _delta_top(
        self, distinct: list[tuple[float, float, int, int, int]], k: int, floor: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """The delta's best (exact weights), pruned below ``floor`` (lowered by the
        slack: it was summed in another order)."""
        ids = [(d, c) for _, _, _, d, c in distinct if d >= 0]
        if not ids or self.delta.n_docs == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        bound = self._delta_max
        if sum(float(bound[d]) * c for d, c in ids) * (1 + SLACK) < floor:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)  # cannot reach the base's
        docs, scores = self.delta.top_k_weighted(
            np.asarray([d for d, _ in ids], np.int64),
            np.asarray([c for _, c in ids], np.float32),
            k,
            floor * (1 - SLACK),
        )
        return docs + self.n_base, scores

    def _base_top(
        self, distinct: list[tuple[float, float, int, int, int]], k: int
    ) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray, float] | None]:
        """Live base candidates by the rescaled weights, exactly rescored (ascending
        documents), and what :meth:`_near_ties` needs (None: the base had no more)."""
        chosen = [(b, s * c) for _, s, b, _, c in distinct if b >= 0 and s > 0]
        if not chosen:
            return np.zeros(0, np.int64), np.zeros(0, np.float32), None
        ids = np.asarray([b for b, _ in chosen], np.int64)
        weights = np.asarray([w for _, w in chosen], np.float32)
        ask = k + (EXTRA_FEW if len(chosen) <= FEW_TERMS else EXTRA)
        while True:
            cand, approx = self.base.top_k_weighted(ids, weights, ask)
            exhausted = len(cand) < ask
            docs = self._live(cand)
            if exhausted or len(docs) >= k:
                break
            ask = 4 * ask  # removed documents took the places: ask for more
        docs = np.sort(docs).astype(np.int64, copy=False)
        exact = self._base_exact(docs, distinct)
        return docs, exact, None if exhausted else (ids, weights, float(approx[-1]))

    def _near_ties(
        self,
        distinct: list[tuple[float, float, int, int, int]],
        docs: np.ndarray,
        exact: np.ndarray,
        rest: tuple[np.ndarray, np.ndarray, float],
        kth: float,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Add every base document the first step left out whose bound (``hi`` times
        its rescaled score) still reaches ``kth``, the k-th best exact score of both
        sides so far."""
        ids, weights, _ = rest
        more, _ = self.base.top_k_weighted(ids, weights, self.n_base, kth / self._hi)
        more = np.setdiff1d(self._live(more), docs).astype(np.int64, copy=False)
        if len(more):
            docs = np.concatenate([docs, more])
            exact = np.concatenate([exact, self._base_exact(more, distinct)])
        return docs, exact

    def _live(self, docs: np.ndarray) -> np.ndarray:
        if not self._any_dead:
            return docs
        return docs[~self._dead[docs]]


class _VocabView:
    """``term in bm25.vocab`` and ``len(bm25.vocab)`` over base and delta, for code that
    only asks whether a word is searchable."""

    def __init__(self, owner: SegmentedBM25) -> None:
        self._owner = owner

    def __contains__(self, word: object) -> bool:
        o = self._owner
        return word in o.base.vocab or word in o._delta_only

    def __len__(self) -> int:
        return self._owner._v0 + len(self._owner._delta_only)

    def get(self, word: str, default: int | None = None) -> int | None:
        o = self._owner
        u = o.base.vocab.get(word)
        if u is not None:
            return u  # type: ignore[no-any-return]
        d = o._delta_only.get(word)
        return default if d is None else o._v0 + d
