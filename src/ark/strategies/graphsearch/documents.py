"""GraphSearch's two channels on a graph built from documents (``ark.graph._documents``).

The paper's setting is a GraphRAG store: text chunks and an entity graph extracted from
them. On such a graph the semantic channel reads *passages* — BM25 over the passage
nodes only (an entity node, a short name, would otherwise outscore the text that holds
the fact), fused with dense retrieval over the same passages when the ``[dense]`` extra
is installed and the index has embeddings (``ark index embed``) — and the relational
channel reads the extracted triples: the anchor entity's neighbors along relation
phrases that match the step's own phrase (the phrases are free text, so they are
matched by shared words, not by name), and the passages that mention the anchor.

What the model reads here is the passages' text and the triples as
``(subject, phrase, object)`` lines, not the tools' one-line snippets: context
refinement must be able to write a summary and a sub-answer from it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ark._safe import cut
from ark.graph import ENTITY_TYPE, PASSAGE_TYPE, entity_key, passage_ids
from ark.index import Index
from ark.session import CallOutcome, ToolSession
from ark.tools import NodeHit, SearchResult

log = logging.getLogger(__name__)

#: The name under which a passage search is recorded in the trajectory (it is not one
#: of the tools: those search every node).
PASSAGE_SEARCH = "search_passages"
PASSAGE_K = 5  # passages per semantic sub-query (the paper: top-K 30 chunks, on a 32B model)
PASSAGE_CHARS = 600  # of each passage's text shown to the model
ANCHOR_K = 10
MAX_ANCHORS = 3
NEIGHBOR_K = 100  # neighbors fetched per anchor, then ranked by their relation phrase
MAX_RELATIONS = 20  # relation phrases a hub is read along
TRIPLES_SHOWN = 12
MENTION_K = 2  # passages mentioning an anchor, per anchor
RRF_K = 60  # reciprocal rank fusion's constant (Cormack et al. 2009)

Call = tuple[str, dict[str, Any], CallOutcome]


class DenseSearch:
    """Dense retrieval over passage nodes: the index's embeddings and the encoder that
    made them (``ark.index.DenseIndex`` and an object with ``encode(texts)``)."""

    def __init__(self, dense: Any, encoder: Any) -> None:
        self.dense = dense
        self.encoder = encoder

    def rank(self, query: str, candidates: np.ndarray, k: int) -> list[int]:
        vector = np.asarray(self.encoder.encode([query])[0], dtype=np.float32)
        # Every node scored, then the candidates picked: gathering the candidates' rows
        # first would copy them all (gigabytes for a million passages) per query.
        scores = np.asarray(self.dense.embeddings @ vector, dtype=np.float32)[candidates]
        order = np.lexsort((candidates, -scores))[:k]
        return [int(candidates[i]) for i in order]


_DENSE_CACHE: dict[tuple[str, str], DenseSearch | None] = {}


def open_dense_search(index: Index) -> DenseSearch | None:
    """The index's dense retrieval with the default embedder, or None when the
    ``[dense]`` extra is missing or the index has no (current) embeddings. Loaded once
    per index: the encoder takes seconds to load and every question needs it."""
    from ark.index import DEFAULT_DENSE_MODEL, DenseEncoder, open_dense

    key = (str(index.path), DEFAULT_DENSE_MODEL)
    if key not in _DENSE_CACHE:
        found: DenseSearch | None = None
        try:
            dense = open_dense(index, DEFAULT_DENSE_MODEL)
            found = DenseSearch(dense, DenseEncoder())
        except Exception as exc:  # no extra, no embeddings, stale ones: BM25 alone
            log.debug("GraphSearch: no dense retrieval for %s (%s)", index.path, exc)
        _DENSE_CACHE[key] = found
    return _DENSE_CACHE[key]


@dataclass
class DocumentGraph:
    """What the two channels need of a document graph: its passage nodes, and dense
    retrieval over them when there is one."""

    index: Index
    passages: np.ndarray
    dense: DenseSearch | None = None

    @classmethod
    def of(cls, index: Index, dense: bool | DenseSearch = True) -> DocumentGraph | None:
        """None for a curated graph (no passage nodes): the channels work as before."""
        passages = passage_ids(index.graph)
        if len(passages) == 0:
            return None
        if isinstance(dense, DenseSearch):
            return cls(index, passages, dense)
        return cls(index, passages, open_dense_search(index) if dense else None)

    # -- the semantic channel ----------------------------------------------------------

    def search_passages(self, query: str, k: int = PASSAGE_K) -> Call:
        """BM25 over the passage nodes (exact: every passage is scored), fused with the
        dense ranking by reciprocal rank when there is one."""
        started = time.perf_counter()
        args: dict[str, Any] = {"query": query, "k": k}
        bm25 = self.index.bm25
        terms = bm25.query_terms(query)
        ranked: list[list[int]] = []
        if len(terms):
            scores = np.asarray(bm25.score_docs(terms, self.passages), dtype=np.float32)
            order = np.lexsort((self.passages, -scores))
            order = order[scores[order] > 0][: 2 * k]
            ranked.append([int(self.passages[i]) for i in order])
        if self.dense is not None:
            args["dense"] = True
            ranked.append(self.dense.rank(query, self.passages, 2 * k))
        fused = _rrf(ranked)[:k]
        g = self.index.graph
        hits = tuple(
            NodeHit(n, PASSAGE_TYPE, g.name(n), score, cut(g.text(n), PASSAGE_CHARS))
            for n, score in fused
        )
        result = SearchResult(PASSAGE_SEARCH, args, hits, total=len(hits))
        outcome = CallOutcome(
            render_passages(self.index, [h.index for h in hits], f"Passages for {query!r}"),
            nodes=[h.index for h in hits],
            result=result,
            duration_s=time.perf_counter() - started,
        )
        return PASSAGE_SEARCH, args, outcome

    # -- the relational channel --------------------------------------------------------

    def anchors(self, session: ToolSession, name: str, calls: list[Call]) -> list[int]:
        """Entity nodes standing for ``name``: those spelt like it among the top hits,
        else the best entity hit."""
        wanted = name.strip("[] ")
        if not wanted:
            return []
        args: dict[str, Any] = {"query": wanted, "k": ANCHOR_K}
        outcome = session.call("search_in_graph", args)
        calls.append(("search_in_graph", args, outcome))
        g = self.index.graph
        entities = [n for n in outcome.nodes if g.type_name(n) == ENTITY_TYPE]
        exact = [n for n in entities if entity_key(g.name(n)) == entity_key(wanted)]
        return (exact or entities[:1])[:MAX_ANCHORS]

    def explore(
        self, session: ToolSession, anchors: list[int], phrase: str, other: str | None
    ) -> list[Call]:
        """Each anchor's entity neighbors (ranked by the other end's name when it is
        one) and the passages that mention it, ranked by the step's words. A hub with
        more entity neighbors than one call returns is read along the relation phrases
        that share a word with the step's phrase only (when any does), so that the
        edge asked for is not cut off by a hundred others."""
        calls: list[Call] = []
        words = " ".join(w for w in (phrase, other or "") if w)
        tool = "search_in_neighborhood"
        for node in anchors[:MAX_ANCHORS]:
            args: dict[str, Any] = {"node_index": node, "node_type": ENTITY_TYPE, "k": NEIGHBOR_K}
            if other:
                args["query"] = other
            matched = self._matching_relations(session, node, phrase)
            if matched:
                args["edge_type"] = matched
            calls.append((tool, args, session.call(tool, args)))
            args = {"node_index": node, "node_type": PASSAGE_TYPE, "k": MENTION_K}
            if words:
                args["query"] = words
            calls.append((tool, args, session.call(tool, args)))
        return calls

    def _matching_relations(self, session: ToolSession, node: int, phrase: str) -> list[str]:
        """The relations of ``node``'s entity edges that share a word with ``phrase``,
        most shared first — only when it has more entity neighbors than one call shows
        (below that, every edge is read and ranked by :meth:`triples`)."""
        links = [x for x in session.tools.links(node) if x[0] == ENTITY_TYPE]
        if sum(count for *_, count in links) <= NEIGHBOR_K:
            return []
        tokens = self.index.bm25.tokenizer.tokens
        wanted = set(tokens(phrase))
        shared: dict[str, int] = {}
        for _, relation, _, _ in links:
            n = len(wanted & set(tokens(relation)))
            if n:
                shared[relation] = max(n, shared.get(relation, 0))
        ranked = sorted(shared, key=lambda r: (-shared[r], r))
        return ranked[:MAX_RELATIONS]

    def triples(self, calls: list[Call], phrase: str) -> list[tuple[int, str]]:
        """(neighbor, ``(subject, phrase, object)`` line) of the entity neighborhoods,
        those whose relation phrase shares most words with ``phrase`` first (then in
        the tool's order), at most :data:`TRIPLES_SHOWN`."""
        g = self.index.graph
        tokens = self.index.bm25.tokenizer.tokens  # the index's words: case, stop words
        wanted = set(tokens(phrase)) if phrase else set()
        rows: list[tuple[int, int, int, str]] = []
        for name, args, outcome in calls:
            r = outcome.result
            if name != "search_in_neighborhood" or args.get("node_type") != ENTITY_TYPE:
                continue
            if not isinstance(r, SearchResult) or r.center is None:
                continue
            center = g.name(r.center.index)
            for hit in r.hits:
                for rel in hit.relations:
                    words = set(tokens(rel.type))
                    if rel.direction == "out":
                        line = f"({center}, {rel.type}, [{hit.index}] {hit.name})"
                    else:
                        line = f"([{hit.index}] {hit.name}, {rel.type}, {center})"
                    rows.append((-len(wanted & words), len(rows), hit.index, line))
        rows.sort()
        out: list[tuple[int, str]] = []
        for _, _, node, line in rows:
            if len(out) == TRIPLES_SHOWN:
                break
            if all(line != seen for _, seen in out):
                out.append((node, line))
        return out


def _rrf(rankings: list[list[int]]) -> list[tuple[int, float]]:
    """Reciprocal rank fusion; with one ranking, that ranking (ties by node index)."""
    score: dict[int, float] = {}
    for ranking in rankings:
        for rank, node in enumerate(ranking):
            score[node] = score.get(node, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(score.items(), key=lambda x: (-x[1], x[0]))


def render_passages(index: Index, nodes: list[int], head: str) -> str:
    """Passages as the model reads them: ``[index] title`` and the text (cut)."""
    g = index.graph
    lines = [f"{head}: {len(nodes)} passage(s)."]
    for n in nodes:
        text = g.text(n)
        name = g.name(n)
        if text.startswith(name + "\n"):  # the title is the name already
            text = text[len(name) + 1 :]
        lines.append(f"[{n}] {cut(name, 120)}\n{cut(' '.join(text.split()), PASSAGE_CHARS)}")
    return "\n".join(lines)
