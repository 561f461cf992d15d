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
   document bounds its true score ``S``: ``lo * A <= S <= hi * A``.
2. **Exact rescoring.** The base's MaxScore pass returns the top k candidates by
   ``A`` and every document with ``A >= (lo / hi) * A_k`` (the k-th's ties and near
   ties): a document below that has ``S < lo * A_k``, less than each of the k best
   candidates' ``S``, so none left out can enter the top k. Their ``S`` is recomputed
   from the stored term frequencies and lengths with bm25s's own formulas
   (bit-identical weights). The answer is the top k of a rebuild, up to float32
   summation order.

Both steps, the delta's own pass and the merge run in one compiled call, the same
routine that answers an index as built (``_kernels.search``; an index as built is
its one-segment case: no delta, rescale 1, stored weights exact). This class only
resolves the query's words to per-term tables the routine reads: the whole graph's
idf, the rescale of the base's weights, the delta's term id.

The delta segments are small: their weights are computed exactly once per snapshot
and they are an ordinary :class:`BM25Index` (local document ids). Removed documents
are dropped from the delta and filtered out of the base's candidates.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ark.index._bm25 import BM25Index
from ark.index._scoring import idf_one
from ark.index._seg_stats import Stats
from ark.index._tokenize import Tokenizer

#: Relative slack on the bound, far above float32 rounding of a few dozen terms (the
#: kernels' ``SLACK``, which prunes with it).
SLACK = 1e-4


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
        self._removed_df = removed_df
        self._v0 = len(base.vocab)
        self._delta_only: dict[str, int] = {
            t: i for t, i in delta.vocab.items() if t not in base.vocab
        }
        self._delta_terms = list(delta.vocab)
        self._delta_df = np.diff(delta.indptr)
        self.vocab = _VocabView(self)
        p = base.params
        self._avg_base = float(base.doc_len.sum(dtype=np.int64)) / n_base if n_base else 0.0
        ratio = stats.avg_len / self._avg_base if self._avg_base else 1.0
        hi = max(1.0, ratio) * (1 + SLACK)
        lo = min(1.0, ratio) / (1 + SLACK)
        # The base's candidates: every document within lo / hi of the k-th rescaled
        # score (a float32 just below it, so that rounding never narrows the window).
        widen = float(np.nextafter(np.float32(lo / hi), np.float32(0)))
        consts = np.array(
            [np.float32(stats.avg_len), np.float32(p.k1), np.float32(1 - p.b), np.float32(p.b)],
            np.float32,
        )
        self._consts = consts
        # Per unified term, filled on first use (-1: not yet): the whole graph's idf,
        # the base weights' rescale, and (base terms) the delta's id of the same word.
        n_terms = self._v0 + len(delta.vocab)  # a delta-only word: v0 + its delta id
        self._idf = np.full(n_terms, -1.0, np.float32)
        self._scale = np.zeros(n_terms, np.float64)
        #: The same, as Python reads it per query without a numpy call: 0 not yet
        #: resolved, 1 no live document has the term, 2 searchable.
        self._state = bytearray(n_terms)
        delta_of = np.full(self._v0, -1, np.int64)
        base_vocab = base.vocab
        for word, d in delta.vocab.items():
            b = base_vocab.get(word)
            if b is not None:
                delta_of[b] = d
        dead = np.zeros(n_base, dtype=bool)
        dead[dead_base] = True
        self._view = base.view(
            (delta.indptr, delta.indices, delta.data, delta.term_max()),
            (self._v0, self._idf, self._scale, delta_of),
            dead if len(dead_base) else np.zeros(0, np.bool_),
            consts,
            widen,
            delta.n_docs,
        )

    # -- terms ------------------------------------------------------------------------

    def _term(self, u: int) -> float:
        """The whole graph's idf of unified id ``u`` (0: no live document has it),
        computed once with the build's formulas; its rescale is stored beside it."""
        got = float(self._idf[u])
        if got >= 0:
            return got
        if u < self._v0:
            word = self.base_word(u)
            delta_id = self.delta.vocab.get(word, -1)
            base_df = int(self.base.indptr[u + 1] - self.base.indptr[u])
        else:
            delta_id, base_df = u - self._v0, 0
            word = self._delta_terms[delta_id]
        df = base_df - self._removed_df.get(word, 0)
        if delta_id >= 0:
            df += int(self._delta_df[delta_id])
        idf = idf_one(df, self.stats.n_docs, self.params.method)
        scale = 0.0
        if base_df:
            idf_base = idf_one(base_df, self.n_base, self.params.method)
            scale = idf / idf_base if idf_base > 0 else 0.0
        self._scale[u] = scale
        self._idf[u] = idf  # then: a concurrent reader sees the rescale set
        self._state[u] = 2 if idf > 0 else 1  # last: both tables are set
        return idf

    def base_word(self, u: int) -> str:
        words = self.__dict__.get("_base_words")
        if words is None:
            words = self.__dict__["_base_words"] = list(self.base.vocab)
        return words[u]  # type: ignore[no-any-return]

    def query_terms(self, text: str) -> np.ndarray:
        """Unified ids of the query's tokens (repeats kept); tokens no live document
        has are dropped, as a rebuild's vocabulary would not know them."""
        out = []
        base_vocab, delta_only, state = self.base.vocab, self._delta_only, self._state
        for token in self.tokenizer.tokens(text):
            u = base_vocab.get(token)
            if u is None:
                d = delta_only.get(token)
                if d is None:
                    continue
                u = self._v0 + d
            s = state[u]
            if s == 2 or (s == 0 and self._term(u) > 0):
                out.append(u)
        return np.asarray(out, dtype=np.int64)

    def _known(self, terms: np.ndarray) -> np.ndarray:
        """``terms`` as int64, each one's tables filled (:meth:`query_terms` fills
        them; ids from elsewhere are resolved here)."""
        terms = np.asarray(terms, dtype=np.int64)
        ids = terms.tolist()
        state = self._state
        # Per query, a few Python reads, cheaper than a numpy gather and test
        # (docs/decisions/index-kernels.md).
        # A negative id reads from the end: harmless, the kernels skip negative ids.
        try:
            if all(map(state.__getitem__, ids)):
                return terms
        except IndexError:
            pass  # an id past the vocabulary, skipped by the kernels too
        n = len(state)
        for u in sorted(set(ids)):
            if 0 <= u < n and not state[u]:
                self._term(u)
        return terms

    # -- scoring: the one routine of every index --------------------------------------

    def score_docs(self, terms: np.ndarray, docs: np.ndarray) -> np.ndarray:
        """Exact BM25 of each of ``docs`` (ascending, unique node indices)."""
        return self.base.score(self._view, self._known(terms), docs)

    def top_k(self, terms: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best live documents by exact score, ties by ascending index."""
        docs, scores = self.base.search(self._view, terms, k)
        if len(docs) != len(scores):  # a term not resolved yet (the kernel checks)
            docs, scores = self.base.search(self._view, self._known(terms), k)
        return docs, scores


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
