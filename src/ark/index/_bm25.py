"""BM25 over node text: a vectorised builder and a postings-only scorer.

The index *is* a bm25s index: the same scoring functions (looked up by name in
``bm25s.scoring``), the same CSC layout and the same files, so ``bm25s.BM25.load``
opens it (a parity test checks that both rank alike). What differs is speed:

* building counts term frequencies with numpy over chunks of documents instead of
  a Python loop per document;
* querying touches only the postings of the query's terms. bm25s allocates and
  scans an array of every document on each query, so its cost grows with the
  graph; here it grows with the postings (sparse merge when they are few, a dense
  accumulator when they cover a large share of the collection).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from bm25s.scoring import _select_idf_scorer, _select_tfc_scorer

from ark.index._tokenize import Tokenizer

BM25_FILES = {
    "data": "data.csc.index.npy",
    "indices": "indices.csc.index.npy",
    "indptr": "indptr.csc.index.npy",
}
VOCAB_FILE = "vocab.index.json"
TERM_MAX_FILE = "term_max.npy"  # ARK's addition: per-term upper bounds for pruning
PARAMS_FILE = "params.index.json"

ProgressFn = Callable[[str, int, int], None]


@dataclass(frozen=True)
class BM25Params:
    method: str = "lucene"
    k1: float = 1.5
    b: float = 0.75


class BM25Index:
    """Postings (term-major CSC) with precomputed BM25 weights per (term, document)."""

    def __init__(
        self,
        data: np.ndarray,
        indices: np.ndarray,
        indptr: np.ndarray,
        vocab: dict[str, int],
        n_docs: int,
        tokenizer: Tokenizer,
        params: BM25Params,
    ) -> None:
        self.data = data
        self.indices = indices
        self.indptr = indptr
        self.vocab = vocab
        self.n_docs = n_docs
        self.tokenizer = tokenizer
        self.params = params
        self._term_max: np.ndarray | None = None

    # -- queries ----------------------------------------------------------------------

    def query_terms(self, text: str) -> np.ndarray:
        """Vocabulary ids of the query's tokens (repeats kept, unknown tokens dropped),
        as ``bm25s.BM25.get_tokens_ids`` does."""
        vocab = self.vocab
        ids = [vocab[t] for t in self.tokenizer.tokens(text) if t in vocab]
        return np.asarray(ids, dtype=np.int64)

    def _postings(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        s, e = int(self.indptr[term]), int(self.indptr[term + 1])
        return self.indices[s:e], self.data[s:e]

    def term_max(self) -> np.ndarray:
        """Each term's highest weight: an upper bound of its contribution to any score."""
        if self._term_max is None:
            lengths = np.diff(np.asarray(self.indptr))
            out = np.zeros(len(lengths), dtype=np.float32)
            nonempty = np.flatnonzero(lengths)
            if len(nonempty):
                starts = np.asarray(self.indptr[:-1])[nonempty]
                out[nonempty] = np.maximum.reduceat(np.asarray(self.data), starts)
            self._term_max = out
        return self._term_max

    def top_k(self, terms: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best documents with a positive score, by score then index (exact).

        Few postings: a sparse merge of all of them. Many: MaxScore-style pruning.
        Terms are added to a dense accumulator by decreasing upper bound (rare terms
        first); as soon as the bounds of the terms not yet added sum to less than the
        k-th best partial score, no document can still overtake the top k unless it
        is already within that sum of it, so only those few are scored exactly
        (binary search in the remaining postings) and the long postings of common
        words are never scanned.
        """
        empty = np.zeros(0, np.int64), np.zeros(0, np.float32)
        if len(terms) == 0 or k <= 0:
            return empty
        uniq, counts = np.unique(np.asarray(terms, dtype=np.int64), return_counts=True)
        lengths = np.asarray(self.indptr[uniq + 1] - self.indptr[uniq])
        keep = lengths > 0
        uniq, counts, lengths = uniq[keep], counts[keep], lengths[keep]
        if len(uniq) == 0:
            return empty
        if int(lengths.sum()) * 8 <= self.n_docs:
            return _best(*self._accumulate_sparse(np.repeat(uniq, counts)), k)
        bounds = self.term_max()[uniq].astype(np.float64) * counts
        order = np.argsort(-bounds, kind="stable")
        uniq, counts, lengths, bounds = uniq[order], counts[order], lengths[order], bounds[order]
        taken = np.cumsum(bounds)
        rest = taken[-1] - taken  # bound of the terms after position i
        budget = self.n_docs // 8
        acc: np.ndarray | None = None
        for i in range(len(uniq)):
            last = i == len(uniq) - 1
            if acc is None and int(lengths[: i + 1].sum()) > budget:
                acc = np.zeros(self.n_docs, dtype=np.float32)
                for term, count in zip(uniq[:i].tolist(), counts[:i].tolist(), strict=True):
                    self._add(acc, term, count)
            if acc is not None:
                self._add(acc, int(uniq[i]), int(counts[i]))
            if not last and rest[i] >= taken[i]:
                continue  # the terms left could still outweigh everything seen so far
            if acc is None:  # few postings so far: a sparse merge
                seen, scores = self._accumulate_sparse(np.repeat(uniq[: i + 1], counts[: i + 1]))
            else:
                seen = np.flatnonzero(acc)
                scores = acc[seen]
            if last:
                return _best(seen, scores, k)
            if len(seen) < k:
                continue
            theta = float(np.partition(scores, len(scores) - k)[len(scores) - k])
            if rest[i] < theta * (1 - 1e-6):
                # Only documents within rest[i] of theta can still make the top k.
                cand = seen[scores + rest[i] * (1 + 1e-6) >= theta]
                partial = scores[scores + rest[i] * (1 + 1e-6) >= theta]
                exact = partial + self.score_docs(np.repeat(uniq[i + 1 :], counts[i + 1 :]), cand)
                return _best(cand, exact, k)
        raise AssertionError("unreachable: the last term always returns")

    def _add(self, acc: np.ndarray, term: int, count: int) -> None:
        idx, val = self._postings(term)
        acc[idx] += val * count if count > 1 else val  # a term's postings hold each doc once

    def _accumulate_sparse(self, terms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        parts = [self._postings(int(t)) for t in terms]
        if len(parts) == 1:
            return np.asarray(parts[0][0], np.int64), np.asarray(parts[0][1], np.float32)
        idx = np.concatenate([p[0] for p in parts])
        val = np.concatenate([p[1] for p in parts])
        docs, inverse = np.unique(idx, return_inverse=True)
        scores = np.bincount(inverse.ravel(), weights=val, minlength=len(docs))
        return docs.astype(np.int64), scores.astype(np.float32)

    def score_docs(self, terms: np.ndarray, docs: np.ndarray) -> np.ndarray:
        """BM25 of the query for each of ``docs`` (sorted ascending, unique).

        Per term, binary-search the shorter of (postings, docs) in the longer, so a
        hub's 100k neighbors against a rare term, or a rare neighbor set against a
        common term, both cost little.
        """
        out = np.zeros(len(docs), dtype=np.float32)
        if len(docs) == 0:
            return out
        for t in terms.tolist():
            idx, val = self._postings(t)
            if len(idx) == 0:
                continue
            if len(idx) <= len(docs):
                pos = np.searchsorted(docs, idx)
                ok = pos < len(docs)
                pos, hit_val, hit_idx = pos[ok], val[ok], idx[ok]
                hit = docs[pos] == hit_idx
                out[pos[hit]] += hit_val[hit]
            else:
                pos = np.searchsorted(idx, docs)
                ok = pos < len(idx)
                pos_ok = pos[ok]
                hit = np.zeros(len(docs), dtype=bool)
                hit[ok] = idx[pos_ok] == docs[ok]
                out[hit] += val[pos[hit]]
        return out

    # -- persistence --------------------------------------------------------------------

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        np.save(directory / BM25_FILES["data"], self.data)
        np.save(directory / BM25_FILES["indices"], self.indices)
        np.save(directory / BM25_FILES["indptr"], self.indptr)
        np.save(directory / TERM_MAX_FILE, self.term_max())
        with (directory / VOCAB_FILE).open("w", encoding="utf-8") as f:
            json.dump(self.vocab, f, ensure_ascii=False)
        # The parameters bm25s itself writes, so that bm25s.BM25.load opens this index.
        params = {
            "k1": self.params.k1,
            "b": self.params.b,
            "delta": 0.5,
            "method": self.params.method,
            "idf_method": self.params.method,
            "dtype": "float32",
            "int_dtype": "int32",
            "num_docs": self.n_docs,
            "backend": "numpy",
        }
        with (directory / PARAMS_FILE).open("w", encoding="utf-8") as f:
            json.dump(params, f, indent=2)

    @classmethod
    def load(
        cls, directory: Path, tokenizer: Tokenizer, params: BM25Params, n_docs: int
    ) -> BM25Index:
        arrays = {k: np.load(directory / v, mmap_mode="r") for k, v in BM25_FILES.items()}
        with (directory / VOCAB_FILE).open(encoding="utf-8") as f:
            vocab = json.load(f)
        index = cls(
            arrays["data"], arrays["indices"], arrays["indptr"], vocab, n_docs, tokenizer, params
        )
        if (directory / TERM_MAX_FILE).exists():  # else computed on first use
            index._term_max = np.load(directory / TERM_MAX_FILE, mmap_mode="r")
        return index


def _best(docs: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top ``k`` by score descending, ties by ascending document index."""
    if len(docs) > k:
        # Keep every document tied with the k-th score so the tie-break is exact.
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= kth
        docs, scores = docs[keep], scores[keep]
    order = np.lexsort((docs, -scores))[:k]
    return docs[order].astype(np.int64), scores[order].astype(np.float32)


def build_bm25(
    texts: Iterable[str],
    n_docs: int,
    tokenizer: Tokenizer,
    params: BM25Params | None = None,
    *,
    chunk_size: int = 20_000,
    progress: ProgressFn | None = None,
) -> BM25Index:
    """Tokenise ``texts`` (one per node, in node order) and compute BM25 weights."""
    params = params or BM25Params()
    vocab: dict[str, int] = {}
    doc_parts: list[np.ndarray] = []
    term_parts: list[np.ndarray] = []
    tf_parts: list[np.ndarray] = []
    doc_len = np.zeros(n_docs, dtype=np.int64)
    tokens = tokenizer.tokens
    setdefault = vocab.setdefault
    done = 0
    chunk_ids: list[int] = []
    chunk_lens: list[int] = []

    def flush() -> None:
        nonlocal chunk_ids, chunk_lens
        if not chunk_lens:
            return
        lens = np.asarray(chunk_lens, dtype=np.int64)
        start = done - len(chunk_lens)
        doc_len[start:done] = lens
        terms = np.asarray(chunk_ids, dtype=np.int64)
        docs = np.repeat(np.arange(start, done, dtype=np.int64), lens)
        key, tf = np.unique(docs << 32 | terms, return_counts=True)
        doc_parts.append((key >> 32).astype(np.int32))
        term_parts.append((key & 0xFFFFFFFF).astype(np.int32))
        tf_parts.append(tf.astype(np.int32))
        chunk_ids, chunk_lens = [], []
        if progress:
            progress("tokenising", done, n_docs)

    for text in texts:
        ids = [setdefault(w, len(vocab)) for w in tokens(text)]
        chunk_ids.extend(ids)
        chunk_lens.append(len(ids))
        done += 1
        if len(chunk_lens) >= chunk_size:
            flush()
    flush()
    if done != n_docs:
        raise ValueError(f"expected {n_docs} texts, got {done}")
    if "" not in vocab:  # bm25s reserves the empty token last
        vocab[""] = len(vocab)

    doc = np.concatenate(doc_parts) if doc_parts else np.zeros(0, np.int32)
    term = np.concatenate(term_parts) if term_parts else np.zeros(0, np.int32)
    tf = np.concatenate(tf_parts) if tf_parts else np.zeros(0, np.int32)
    for parts in (doc_parts, term_parts, tf_parts):
        parts.clear()  # free the chunk copies before the big allocations below
    if progress:
        progress("scoring", 0, 1)
    n_vocab = len(vocab)
    df = np.bincount(term, minlength=n_vocab)
    idf_fn = np.vectorize(_select_idf_scorer(params.method), otypes=[np.float64])
    idf = idf_fn(df, n_docs).astype(np.float32) if n_vocab else np.zeros(0, np.float32)
    avg_len = float(doc_len.mean()) if n_docs else 0.0
    tfc = _select_tfc_scorer(params.method)
    weights = idf[term] * tfc(
        tf_array=tf.astype(np.float32),
        l_d=doc_len[doc].astype(np.float32),
        l_avg=np.float32(avg_len),
        k1=params.k1,
        b=params.b,
    ).astype(np.float32)
    del tf
    # Term-major order; stable so each term's documents stay ascending.
    order = np.argsort(term, kind="stable")
    data = weights[order].astype(np.float32)
    del weights
    indices = doc[order].astype(np.int32)
    del order, doc
    indptr = np.zeros(n_vocab + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    if progress:
        progress("scoring", 1, 1)
    return BM25Index(data, indices, indptr, vocab, n_docs, tokenizer, params)
