"""The whole graph's BM25 statistics after updates, and the added nodes' postings
weighted with them: computed with the build's own formulas (``_scoring.py``), so that
the weights are the bits a rebuild would store."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ark.index import _scoring
from ark.index._bm25 import BM25Index, BM25Params

#: Methods whose length part has the form ``tf / (tf + K)`` (times a constant) and
#: whose idf is always positive: the bounds above hold. Others refuse updates.
UPDATABLE_METHODS = ("lucene",)


@dataclass(frozen=True)
class Stats:
    """The whole graph's BM25 statistics (live documents only)."""

    n_docs: int
    total_len: int

    @property
    def avg_len(self) -> float:
        # == float(doc_len.mean()) of a rebuild: an exact integer sum, one rounding.
        return self.total_len / self.n_docs if self.n_docs else 0.0


def exact_weights(
    tf: np.ndarray, lengths: np.ndarray, idf: np.ndarray, stats: Stats, params: BM25Params
) -> np.ndarray:
    """``idf * tfc`` as ``build_bm25`` computes them (same functions, same dtypes):
    bit-identical to a rebuild's stored weights."""
    return _scoring.weights(idf, tf, lengths, stats.avg_len, params.k1, params.b, params.method)


def idf_of(df: np.ndarray | int, n_docs: int, method: str) -> np.ndarray:
    """float32 idf, as ``build_bm25`` computes it (float64 then cast)."""
    return _scoring.idf(df, n_docs, method)


def delta_index(
    vocab: dict[str, int],
    indptr: np.ndarray,
    indices: np.ndarray,
    tf: np.ndarray,
    doc_len: np.ndarray,
    base: BM25Index,
    removed_df: dict[str, int],
    stats: Stats,
) -> BM25Index:
    """The live delta postings as a :class:`BM25Index` with exact weights under
    ``stats`` (computed once per snapshot: the delta is small)."""
    params = base.params
    df_delta = np.diff(indptr)
    words = list(vocab)
    df = df_delta.astype(np.int64).copy()
    get = base.vocab.get
    in_base = np.fromiter((get(w, -1) for w in words), np.int64, len(words))
    known = in_base >= 0
    ptr = np.asarray(base.indptr)
    df[known] += ptr[in_base[known] + 1] - ptr[in_base[known]]
    for w, n in removed_df.items():
        i = vocab.get(w)
        if i is not None:
            df[i] -= n
    idf = np.zeros(len(words), np.float32)
    live = df > 0
    values, where = np.unique(df[live], return_inverse=True)  # few distinct df values
    idf[live] = idf_of(values, stats.n_docs, params.method)[where]
    term = np.repeat(np.arange(len(words), dtype=np.int64), df_delta)
    data = exact_weights(tf, doc_len[indices], idf[term], stats, params)
    return BM25Index(
        data, indices, indptr, vocab, len(doc_len), base.tokenizer, params, tf, doc_len
    )


def check_updatable(params: BM25Params) -> None:
    if params.method not in UPDATABLE_METHODS:
        raise ValueError(
            f"BM25 method {params.method!r} cannot be updated in place (only "
            f"{', '.join(UPDATABLE_METHODS)}); rebuild the index instead"
        )
