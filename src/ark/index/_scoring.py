"""BM25's two factors — a term's idf and a posting's term-frequency part — for the
methods an index of postings can serve.

An ARK index stores ``idf * tfc`` per (term, document) and is opened by
``bm25s.BM25.load`` as well, so these are bm25s's formulas (Kamphuis et al., ECIR 2020)
evaluated with the same operations in the same order and the same dtypes: a rebuild,
an update and bm25s agree to the bit (``tests/index/test_bm25_scoring.py``). They live
here rather than being taken from bm25s because bm25s keeps them private
(``bm25s.scoring._select_*``), free to change in any release.

``bm25l`` and ``bm25+`` are not offered: they give every document a score for a query
term it does not contain, which an index that reads only the postings of the query's
terms cannot add.
"""

from __future__ import annotations

import math

import numpy as np

#: The methods whose whole score lives in the postings.
METHODS = ("lucene", "robertson", "atire")


def check_method(method: str) -> None:
    """Refuse a method this index cannot score, naming the ones it can."""
    if method not in METHODS:
        raise ValueError(
            f"BM25 method {method!r} is not supported: choose one of {', '.join(METHODS)} "
            "(bm25l and bm25+ score documents without the term, which postings do not hold)"
        )


def _idf_one(df: int, n_docs: int, method: str) -> float:
    # Python floats (IEEE doubles) and math.log, as bm25s's scalar functions compute.
    if method == "lucene":
        return math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
    if method == "robertson":  # clipped at zero: a term in most documents adds nothing
        return math.log(max((n_docs - df + 0.5) / (df + 0.5), 1))
    return math.log(n_docs / df)  # atire


def idf(df: np.ndarray | int, n_docs: int, method: str) -> np.ndarray:
    """float32 idf per document frequency in ``df`` (computed in float64, then cast);
    0 where ``df`` is 0: a term without postings has no weight to store.

    Each distinct frequency is computed once: a vocabulary of millions of terms has a
    few thousand distinct frequencies."""
    check_method(method)
    values = np.atleast_1d(np.asarray(df, dtype=np.int64))
    distinct, where = np.unique(values, return_inverse=True)
    table = np.asarray(
        [_idf_one(d, n_docs, method) if d > 0 else 0.0 for d in distinct.tolist()], np.float64
    )
    return table.astype(np.float32)[where.reshape(values.shape)]


def idf_one(df: int, n_docs: int, method: str) -> float:
    """:func:`idf` of one frequency, as the Python float of its float32 value (the same
    bits: one float64 rounded to float32 either way). An updated index resolves a
    query's terms one by one on first use; :func:`idf`'s ``np.unique`` cost tens of
    microseconds per term, more than the search itself."""
    check_method(method)
    return float(np.float32(_idf_one(df, n_docs, method))) if df > 0 else 0.0


def tfc(
    tf: np.ndarray, doc_len: np.ndarray, avg_len: float, k1: float, b: float, method: str
) -> np.ndarray:
    """float32 term-frequency part per posting: ``tf`` the term's count in the document,
    ``doc_len`` the document's token count, ``avg_len`` the collection's mean length."""
    check_method(method)
    tf_ = np.asarray(tf).astype(np.float32)
    l_d = np.asarray(doc_len).astype(np.float32)
    l_avg = np.float32(avg_len)
    if method == "atire":
        out = (tf_ * (k1 + 1)) / (tf_ + k1 * (1 - b + b * l_d / l_avg))
    else:  # lucene and robertson share the saturation
        out = tf_ / (k1 * ((1 - b) + b * l_d / l_avg) + tf_)
    return np.asarray(out).astype(np.float32)


def weights(
    idf_: np.ndarray,
    tf: np.ndarray,
    doc_len: np.ndarray,
    avg_len: float,
    k1: float,
    b: float,
    method: str,
) -> np.ndarray:
    """float32 ``idf * tfc`` per posting, the value the index stores."""
    return (np.asarray(idf_, np.float32) * tfc(tf, doc_len, avg_len, k1, b, method)).astype(
        np.float32
    )
