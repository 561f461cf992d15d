"""BM25 over node text: a vectorised builder and a compiled, pruning scorer.

The index *is* a bm25s index: the same scoring formulas (``_scoring.py``, bit-identical
to bm25s's), the same CSC layout and the same files, so ``bm25s.BM25.load`` opens it (a
parity test checks that both rank alike). What differs is speed:

* building counts term frequencies with numpy over chunks of documents instead of
  a Python loop per document;
* querying runs compiled kernels (numba, see ``_kernels.py``) that touch only the
  postings of the query's terms, and of those only the ones that can change the
  top k (MaxScore): bm25s scores every posting of every query term into an array
  of every document, so its cost grows with the graph and the query's common words.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from ark.index import _scoring
from ark.index._tokenize import Tokenizer

BM25_FILES = {
    "data": "data.csc.index.npy",
    "indices": "indices.csc.index.npy",
    "indptr": "indptr.csc.index.npy",
}
VOCAB_FILE = "vocab.index.json"
TERM_MAX_FILE = "term_max.npy"  # ARK's addition: per-term upper bounds for pruning
#: ARK's additions for updates (``_segments.py``): each posting's term frequency and
#: each document's length, from which weights are recomputed under the statistics of
#: a graph that has changed since the build.
TF_FILE = "tf.npy"
DOC_LEN_FILE = "doc_len.npy"
PARAMS_FILE = "params.index.json"

ProgressFn = Callable[[str, int, int], None]

#: Postings of the rarest terms read before a first estimate of the k-th best score:
#: at least this many, or this share of the collection.
SEED_BUDGET_MIN = 1024
SEED_BUDGET_SHARE = 32
#: Documents scored exactly for that estimate.
N_SEED = 64

_KERNELS: ModuleType | None = None


def _kernels() -> ModuleType:
    """The compiled kernels, imported on first use: importing numba takes a few tenths
    of a second that commands which never query should not pay."""
    global _KERNELS
    if _KERNELS is None:
        from ark.index import _kernels as kernels

        _KERNELS = kernels
    return _KERNELS


def _frozen(array: np.ndarray, dtype: type) -> np.ndarray:
    out = np.ascontiguousarray(array, dtype=dtype).view(np.ndarray)
    out.flags.writeable = False
    return out


@dataclass(frozen=True)
class TopKStats:
    """What one :meth:`BM25Index.top_k` call read."""

    terms: int  #: distinct query terms with postings
    accumulated: int  #: terms whose postings were all read
    postings: int  #: postings of all the query's terms
    read: int  #: postings read in full
    candidates: int  #: documents completed by look-ups in the lists not read
    probes: int  #: such look-ups

    @property
    def pruned(self) -> bool:
        """Whether some postings were skipped (MaxScore cut the query short)."""
        return self.read < self.postings

    @classmethod
    def of(cls, stats: np.ndarray) -> TopKStats:
        return cls(*(int(x) for x in stats[:6]))


@dataclass(frozen=True)
class QueryView:
    """What the query kernels see beside a base's postings (``_kernels.search``): an
    index as built has no delta and empty term tables (its stored weights are exact);
    after updates (``_seg_bm25.py``) the added documents' postings, the per-term idf,
    rescale and delta id, the removed base documents and the whole graph's length
    statistics."""

    delta: tuple[np.ndarray, ...]  #: (indptr, indices, data, term_max) of the delta
    tables: tuple[int, np.ndarray, np.ndarray, np.ndarray]  #: (v0, idf, rescale, delta_of)
    dead: np.ndarray  #: removed base documents (bool per base document; empty: none)
    consts: np.ndarray  #: avg length, k1, 1 - b, b (float32)
    widen: float  #: lo / hi of a rescaled base weight's error bounds (1: exact weights)
    n_delta: int  #: documents in the delta
    budgets: np.ndarray  #: postings read before a first k-th score: base, delta


def _static_tables() -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    return (0, np.zeros(0, np.float32), np.zeros(0, np.float64), np.zeros(0, np.int64))


_EMPTY_TF = _frozen(np.zeros(0, np.int32), np.int32)
_EMPTY_LEN = _frozen(np.zeros(0, np.int64), np.int64)
_NO_DELTA = (
    _frozen(np.zeros(1, np.int64), np.int64),
    _frozen(np.zeros(0, np.int32), np.int32),
    _frozen(np.zeros(0, np.float32), np.float32),
    _frozen(np.zeros(0, np.float32), np.float32),
)


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
        vocab: dict[str, int] | None,
        n_docs: int,
        tokenizer: Tokenizer,
        params: BM25Params,
        tf: np.ndarray | None = None,
        doc_len: np.ndarray | None = None,
    ) -> None:
        # Read-only views of one dtype each, whether built in memory or memory-mapped,
        # so that the compiled kernels have a single specialisation.
        self.data = _frozen(data, np.float32)
        self.indices = _frozen(indices, np.int32)
        self.indptr = _frozen(indptr, np.int64)
        self._vocab = vocab
        self._vocab_file: Path | None = None
        self.n_docs = n_docs
        self.tokenizer = tokenizer
        self.params = params
        #: Raw counts (absent in an index built before updates existed): a posting's
        #: term frequency and a document's token count.
        self.tf = None if tf is None else tf.view(np.ndarray)
        self.doc_len = None if doc_len is None else doc_len.view(np.ndarray)
        self._term_max: np.ndarray | None = None
        #: Pools of scratch accumulators (one set per concurrent caller), per delta size.
        self._scratch: dict[int, list[tuple[np.ndarray, ...]]] = {}

    @property
    def vocab(self) -> dict[str, int]:
        """Term -> id. A loaded index reads its vocabulary on first use (the largest
        JSON file of an index: an update, which never queries, does not read it)."""
        if self._vocab is None:
            assert self._vocab_file is not None
            with self._vocab_file.open(encoding="utf-8") as f:
                vocab = json.load(f)
            if len(vocab) + 1 != len(self.indptr):
                raise ValueError(f"{self._vocab_file} does not match the postings")
            self._vocab = vocab
        return self._vocab

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
            lengths = np.diff(self.indptr)
            out = np.zeros(len(lengths), dtype=np.float32)
            nonempty = np.flatnonzero(lengths)
            if len(nonempty):
                starts = self.indptr[:-1][nonempty]
                out[nonempty] = np.maximum.reduceat(self.data, starts)
            self._term_max = _frozen(out, np.float32)
        return self._term_max

    def top_k(self, terms: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best documents with a positive score, by score descending, equal
        scores by ascending document index (exact: the same as scoring every document).

        See :func:`ark.index._kernels.search` (the one top-k routine of an index as
        built and of one with updates) for how most postings of common words are never
        read. (The kernel's counters are not turned into a :class:`TopKStats` here:
        that record costs a good share of a short query's search,
        ``docs/decisions/index-kernels.md``.)
        """
        return self.search(self.query_view(), terms, k)

    def top_k_stats(self, terms: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, TopKStats]:
        """:meth:`top_k`, and what it read (which shows whether pruning happened)."""
        kernels = _kernels()
        stats = np.zeros(kernels.N_STATS, dtype=np.int64)
        docs, scores = self.search(self.query_view(), terms, k, stats)
        return docs, scores, TopKStats.of(stats)

    def score_docs(self, terms: np.ndarray, docs: np.ndarray) -> np.ndarray:
        """BM25 of the query for each of ``docs`` (sorted ascending, unique).

        Per term, the shorter of (postings, docs) is walked and the other searched by
        galloping, so a hub's 100k neighbors against a rare term, or a rare neighbor
        set against a common term, both cost little.
        """
        return self.score(self.query_view(), terms, docs)

    # -- the one query routine, shared with an index after updates ----------------------

    def query_view(self) -> QueryView:
        """This index as built, seen by the query kernels: no delta, stored weights."""
        view = self.__dict__.get("_view")
        if view is None:
            view = self.__dict__["_view"] = self.view(
                _NO_DELTA, _static_tables(), np.zeros(0, np.bool_), np.zeros(4, np.float32), 1.0, 0
            )
        return view

    def view(
        self,
        delta: tuple[np.ndarray, ...],
        tables: tuple[int, np.ndarray, np.ndarray, np.ndarray],
        dead: np.ndarray,
        consts: np.ndarray,
        widen: float,
        n_delta: int,
    ) -> QueryView:
        """A :class:`QueryView` of this base with a delta of ``n_delta`` documents."""
        budgets = np.array(
            [max(SEED_BUDGET_MIN, n // SEED_BUDGET_SHARE) for n in (self.n_docs, n_delta)],
            np.int64,
        )
        return QueryView(delta, tables, dead, consts, widen, n_delta, budgets)

    def postings_view(self) -> tuple[np.ndarray, ...]:
        """(indptr, indices, data, term_max, tf, doc_len) in the kernels' dtypes (empty
        counts for an index built before updates existed)."""
        got = self.__dict__.get("_postings_view")
        if got is None:
            tf = _EMPTY_TF if self.tf is None else _frozen(self.tf, np.int32)
            doc_len = _EMPTY_LEN if self.doc_len is None else _frozen(self.doc_len, np.int64)
            got = (self.indptr, self.indices, self.data, self.term_max(), tf, doc_len)
            self.__dict__["_postings_view"] = got
        return got

    def search(
        self, view: QueryView, terms: np.ndarray, k: int, stats: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """:func:`ark.index._kernels.search` over this base and ``view``'s delta."""
        kernels = _kernels()
        raw = np.asarray(terms, dtype=np.int64)
        if stats is None:
            stats = np.zeros(kernels.N_STATS, dtype=np.int64)
        if len(raw) == 0 or k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        pool = self._scratch.setdefault(view.n_delta, [])
        scratch = self._take_scratch(pool, view.n_delta)
        try:
            return kernels.search(  # type: ignore[no-any-return]
                self.postings_view(),
                view.delta,
                raw,
                view.tables,
                view.dead,
                view.consts,
                view.widen,
                int(k),
                view.budgets,
                N_SEED,
                scratch,
                stats,
            )
        finally:
            pool.append(scratch)  # list.append is atomic

    def score(self, view: QueryView, terms: np.ndarray, docs: np.ndarray) -> np.ndarray:
        """:func:`ark.index._kernels.score` over this base and ``view``'s delta."""
        return _kernels().score(  # type: ignore[no-any-return]
            self.postings_view(),
            view.delta,
            np.asarray(terms, dtype=np.int64),
            view.tables,
            view.consts,
            np.ascontiguousarray(docs, dtype=np.int64),
        )

    def _take_scratch(
        self, pool: list[tuple[np.ndarray, ...]], n_delta: int
    ) -> tuple[np.ndarray, ...]:
        """Zeroed accumulators (the kernel leaves them zeroed) and their scratch lists,
        for the base and a delta of ``n_delta`` documents."""
        try:
            return pool.pop()
        except IndexError:
            # touched: one slot more, as the branch-free accumulation writes one past
            # the last new document when every document is touched.
            return (
                np.zeros(self.n_docs, np.float32),
                np.zeros(self.n_docs + 1, np.int32),
                np.zeros(n_delta, np.float32),
                np.zeros(n_delta + 1, np.int32),
            )

    # -- persistence --------------------------------------------------------------------

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        np.save(directory / BM25_FILES["data"], self.data)
        np.save(directory / BM25_FILES["indices"], self.indices)
        np.save(directory / BM25_FILES["indptr"], self.indptr)
        np.save(directory / TERM_MAX_FILE, self.term_max())
        if self.tf is not None and self.doc_len is not None:
            np.save(directory / TF_FILE, self.tf)
            np.save(directory / DOC_LEN_FILE, self.doc_len)
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
        counts = [
            np.load(directory / f, mmap_mode="r") if (directory / f).exists() else None
            for f in (TF_FILE, DOC_LEN_FILE)
        ]
        index = cls(
            arrays["data"],
            arrays["indices"],
            arrays["indptr"],
            None,
            n_docs,
            tokenizer,
            params,
            *counts,
        )
        index._vocab_file = directory / VOCAB_FILE
        if (directory / TERM_MAX_FILE).exists():  # else computed on first use
            index._term_max = _frozen(np.load(directory / TERM_MAX_FILE, mmap_mode="r"), np.float32)
        return index


def score_nodes(bm25: Any, terms: np.ndarray, nodes: Iterable[int]) -> np.ndarray:
    """BM25 of the query ``terms`` for each of ``nodes``, in the order given (float32).

    ``score_docs`` (of a :class:`BM25Index` or an updated index's BM25) walks the
    postings and needs ascending, unique documents; callers that rank a list of their
    own (the passages of an evidence path, the nodes an answer reads) have it in
    another order, so it is sorted for the call and the scores put back."""
    nodes = np.asarray(nodes, dtype=np.int64)
    out = np.zeros(len(nodes), dtype=np.float32)
    if len(terms) and len(nodes):
        order = np.argsort(nodes, kind="stable")
        out[order] = bm25.score_docs(terms, nodes[order])
    return out


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
    idf = _scoring.idf(df, n_docs, params.method)
    avg_len = float(doc_len.mean()) if n_docs else 0.0
    weights = _scoring.weights(
        idf[term], tf, doc_len[doc], avg_len, params.k1, params.b, params.method
    )
    # Term-major order; stable so each term's documents stay ascending.
    order = np.argsort(term, kind="stable")
    data = weights[order].astype(np.float32)
    del weights
    tf = tf[order].astype(count_dtype(int(tf.max()) if len(tf) else 0))
    indices = doc[order].astype(np.int32)
    del order, doc
    indptr = np.zeros(n_vocab + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    if progress:
        progress("scoring", 1, 1)
    lengths = doc_len.astype(count_dtype(int(doc_len.max()) if n_docs else 0))
    return BM25Index(data, indices, indptr, vocab, n_docs, tokenizer, params, tf, lengths)


def count_dtype(largest: int) -> type[np.unsignedinteger]:  # type: ignore[type-arg]
    """The narrowest unsigned type holding counts up to ``largest`` (tf is almost
    always 1 or 2: one byte per posting, not four)."""
    for dtype in (np.uint8, np.uint16):
        if largest <= np.iinfo(dtype).max:
            return dtype
    return np.uint32
