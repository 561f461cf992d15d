"""ARK's two retrieval tools over an opened index.

Both are read-only and total: any argument, however wrong, yields either a
:class:`SearchResult` or a :class:`ToolError` describing the problem (with the
closest valid names when a type is misspelt). Nothing raises into the agent loop.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ark._coerce import as_int
from ark._safe import cut, short_repr
from ark.graph import (
    DIRECTION_NAMES,
    LISTING_LIMIT,
    Graph,
    Neighborhood,
    passage_ids,
    relation_label,
)
from ark.index import BM25Index, Index
from ark.tools._errors import ErrorCode
from ark.tools._phrases import MAX_SHOWN, PhraseMatch, RelationPhrases, phrase_encoder_name
from ark.tools._results import (
    MergedHit,
    MultiNeighborhoodResult,
    NodeHit,
    Relation,
    SearchResult,
    ToolError,
    ToolResult,
    make_hit,
)
from ark.tools._tool_specs import MAX_CENTERS, tool_parameters

MAX_K = 100
GLOBAL_K = 5
NEIGHBOR_K = 20
SNIPPET_CHARS = 160
TIE_MARGIN = 10
#: Longest query searched: a longer one is cut here, and the observation says so
#: (a megabyte of query text took seconds to score and is never a real question).
MAX_QUERY_CHARS = 2000


def _query_note(query: str) -> tuple[str, ...]:
    if len(query) <= MAX_QUERY_CHARS:
        return ()
    return (
        f"(The query was {len(query):,} characters long; only its first "
        f"{len(cap_query(query)):,} were searched.)",
    )


def cap_query(query: str) -> str:
    """``query`` cut to :data:`MAX_QUERY_CHARS` (at a word boundary when there is one)."""
    if len(query) <= MAX_QUERY_CHARS:
        return query
    head = query[:MAX_QUERY_CHARS]
    space = head.rfind(" ")
    return head[:space] if space > MAX_QUERY_CHARS // 2 else head


class GraphTools:
    """``search_in_graph`` and ``search_in_neighborhood`` bound to one index, and the
    hop over a set (:meth:`neighborhood_over_set`)."""

    def __init__(
        self,
        index: Index,
        *,
        snippet_chars: int = SNIPPET_CHARS,
        max_k: int = MAX_K,
        phrase_encoder: str = "auto",
    ):
        self.index = index
        self.graph: Graph = index.graph
        self.bm25: BM25Index = index.bm25
        self.snippet_chars = snippet_chars
        self.max_k = max_k
        self._relation_tuples: dict[tuple[int, ...], tuple[Relation, ...]] = {}
        # Name -> id for the node_type / edge_type arguments, exact and case-folded
        # (built once: the graph's names never change).
        self._lookups = {
            "node_type": _name_ids(self.graph.node_type_names),
            "edge_type": _name_ids(self.graph.relation_names),
        }
        # A plain view: indexing an np.memmap goes through Python-level hooks.
        self._node_type = np.asarray(self.graph.node_type).view(np.ndarray)
        #: Relation phrases matched to relation names (built on the first phrase given).
        self._phrases: RelationPhrases | None = None
        #: More relations than a prompt lists (not ``Schema.lists_relations``, the one
        #: test the prompt, the tool schemas and ``ark eval``'s record read too): a
        #: graph of free-text relations, whose ``edge_type`` takes any phrase
        #: (:meth:`_resolve`) and whose neighborhood query also reads the relation
        #: phrase (:meth:`_relation_share`). Curated graphs behave as they did.
        self.open_relations = not self.graph.schema.lists_relations
        #: The encoder of the phrase matcher's embedding stage, or None (``ToolConfig.
        #: phrase_encoder`` resolved: ``ark.tools._phrases.phrase_encoder_name``).
        self.phrase_encoder = phrase_encoder_name(phrase_encoder, listed=not self.open_relations)
        self._relation_words: dict[int, frozenset[str]] = {}
        #: A graph built from documents (``ark.graph._documents``): its passage nodes,
        #: which a global search returns beside the entities (:meth:`_document_top_k`).
        self._passages = passage_ids(self.graph)

    # -- the tools ----------------------------------------------------------------------

    def search_in_graph(self, query: str, k: int = GLOBAL_K) -> ToolResult:
        """The ``k`` nodes of the whole graph with the highest BM25 score for ``query``.

        Equal scores are ordered by exact name match (case-sensitive, then not), then
        by node index, so a person outranks a same-named lowercase tag.
        """
        tool = "search_in_graph"
        args = {"query": cap_query(query) if isinstance(query, str) else query, "k": k}
        if (err := self._check_k(tool, k)) is not None:
            return err
        if not isinstance(query, str) or not query.strip():
            return ToolError(tool, ErrorCode.EMPTY_QUERY, "query must be a non-empty string.")
        notes = _query_note(query)
        query = cap_query(query)
        terms = self.bm25.query_terms(query)
        if len(terms) == 0:
            return ToolError(
                tool,
                ErrorCode.NO_TERMS,
                f"query {short_repr(query)} has no searchable words (only stop words, short or "
                "unknown tokens); use distinctive words such as names or keywords.",
            )
        if len(self._passages):
            docs, scores = self._document_top_k(terms, k)
            hits = self._hits(docs, scores)
            return SearchResult(tool, args, hits, total=len(hits), notes=notes)
        # One more than asked shows whether equal scores straddle the cut; only then
        # are a few more fetched so the tie can be broken by name below (asking for
        # more every time is slower: docs/decisions/answer-and-tools.md).
        docs, scores = self.bm25.top_k(terms, k + 1)
        if len(scores) > k and scores[k] == scores[k - 1]:
            docs, scores = self.bm25.top_k(terms, k + TIE_MARGIN)
        values = scores.tolist()
        if any(values[i] == values[i + 1] for i in range(len(values) - 1)):
            names = self.graph.names.take(docs.tolist())
            wanted = query.strip()
            order = sorted(
                range(len(docs)),
                key=lambda i: (
                    -values[i],
                    names[i] != wanted,  # equal scores: the exact name first ("Tom Hanks"
                    names[i].lower() != wanted.lower(),  # the person before the tag)
                    int(docs[i]),
                ),
            )[:k]
            docs, scores = docs[order], scores[order]
        hits = self._hits(docs[:k], scores[:k])
        return SearchResult(tool, args, hits, total=len(hits), notes=notes)

    def _document_top_k(self, terms: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """On a graph built from documents: the best passages and the best other nodes
        (entities), half of ``k`` each (the passages' half rounded up), alternating from
        the best of either. BM25 normalises by length, so over all nodes a short entity
        name that repeats a query word outscores the long passage that states the fact
        (``docs/decisions/answer-and-tools.md``), while the passages are the evidence a
        reader needs. Each half is
        ranked by its own BM25; the passages are scored exactly (every passage, by its
        postings), the others taken from the overall top."""
        want_p = (k + 1) // 2
        p_scores = self.bm25.score_docs(terms, self._passages)
        order = np.argsort(-p_scores, kind="stable")[:want_p]
        order = order[p_scores[order] > 0]
        p_docs, p_top = self._passages[order], p_scores[order]
        want_e = k - len(p_docs)
        e_docs, e_top = self.bm25.top_k(terms, want_e + want_p + 1)
        other = ~np.isin(e_docs, self._passages)
        e_docs, e_top = e_docs[other][:want_e], e_top[other][:want_e]
        docs: list[int] = []
        scores: list[float] = []
        first, second = (p_docs, p_top), (e_docs, e_top)
        if len(e_top) and (not len(p_top) or e_top[0] > p_top[0]):
            first, second = second, first
        for i in range(max(len(p_docs), len(e_docs))):
            for d, sc in (first, second):
                if i < len(d):
                    docs.append(int(d[i]))
                    scores.append(float(sc[i]))
        return np.asarray(docs[:k], dtype=np.int64), np.asarray(scores[:k], dtype=np.float32)

    def search_in_neighborhood(
        self,
        node_index: int,
        query: str | None = None,
        node_type: str | Sequence[str] | None = None,
        edge_type: str | Sequence[str] | None = None,
        k: int = NEIGHBOR_K,
    ) -> ToolResult:
        """One-hop neighbors of ``node_index`` in either direction, filtered by neighbor
        type and edge type, ranked by BM25 of ``query`` (none: ascending node index).

        An empty or blank ``query`` counts as no query. ``node_type`` and ``edge_type``
        take a name or a list of names, matched exactly, then case-insensitively. On
        a graph of free-text relations (more than ``ark.graph.LISTING_LIMIT``
        relation names: :attr:`open_relations`), ``edge_type`` also takes any phrase,
        matched to relations by label, then lemma (:mod:`ark.tools._phrases`; the
        result's ``matched`` and a note in its observation say which relations were
        used), and ``query`` also ranks by the phrase of the relation linking each
        neighbor (:meth:`_relation_share`). Every hit carries its relations' text.
        """
        tool = "search_in_neighborhood"
        args: dict[str, Any] = {
            "node_index": node_index,
            "query": query,
            "node_type": node_type,
            "edge_type": edge_type,
            "k": k,
        }
        if (err := self._check_node(tool, node_index)) is not None:
            return err
        if (err := self._check_k(tool, k)) is not None:
            return err
        return self._neighborhood(tool, args, int(node_index), query, node_type, edge_type, k)

    def _neighborhood(
        self,
        tool: str,
        args: dict[str, Any],
        node_index: int,
        query: str | None,
        node_type: str | Sequence[str] | None,
        edge_type: str | Sequence[str] | None,
        k: int,
    ) -> ToolResult:
        """:meth:`search_in_neighborhood` after its node and ``k`` are checked (the hop
        over a set asks for more than ``k`` to count every center reaching a node)."""
        if query is not None and not isinstance(query, str):
            return ToolError(tool, ErrorCode.BAD_ARGUMENT, "query must be a string or omitted.")
        type_ids = self._resolve(tool, "node_type", node_type, self.graph.node_type_names)
        if isinstance(type_ids, ToolError):
            return type_ids
        matched: list[PhraseMatch] = []
        rel_ids = self._resolve(
            tool, "edge_type", edge_type, self.graph.relation_names, matched=matched
        )
        if isinstance(rel_ids, ToolError):
            return rel_ids

        hood = self.graph.neighborhood(int(node_index), type_ids, rel_ids)
        neighbors = hood.neighbors
        total = len(neighbors)
        notes = _query_note(query) if query is not None else ()
        notes += tuple(m.note() for m in matched)
        if query is not None:
            query = cap_query(query)
            args["query"] = query
        terms = self.bm25.query_terms(query) if query and query.strip() else None
        share = self._relation_share(hood, query) if total else None
        if share is not None:  # free-text relations: the phrase linking counts too
            text = self.bm25.score_docs(terms, neighbors) if terms is not None and len(terms) else 0
            scores = with_relation_share(np.zeros(total, dtype=np.float32) + text, share)
            order = np.lexsort((neighbors, -scores))[:k]
        elif terms is not None and len(terms) and total:
            scores = self.bm25.score_docs(terms, neighbors)
            order = np.lexsort((neighbors, -scores))[:k]
        else:
            scores = np.zeros(total, dtype=np.float32)
            order = np.arange(min(k, total))
        chosen = order.tolist()
        relations = self._relations(hood, chosen)
        hits = self._hits(neighbors[order], scores[order], relations)
        center = self._hit(int(node_index))
        available = ()
        if total == 0 and (type_ids is not None or rel_ids is not None):
            available = self.links(int(node_index))
        return SearchResult(
            tool,
            args,
            tuple(hits),
            total=total,
            center=center,
            available=available,
            notes=notes,
            matched=tuple(matched),
        )

    def neighborhood_over_set(
        self,
        node_indices: Sequence[Any],
        *,
        query: str | None = None,
        node_type: Any = None,
        edge_type: Any = None,
        k: int = NEIGHBOR_K,
    ) -> MultiNeighborhoodResult | ToolError | SearchResult:
        """The hop over a set: :meth:`search_in_neighborhood` of several nodes at once,
        their neighborhoods merged, each neighbor naming the centers it was reached from.

        Why: "the genres of the films directed by X" needs one neighborhood per film
        with the paper's tool, and a small model with a step budget rarely gets there.
        Offered as an option (``ToolConfig(multi_neighborhood=True)``: the session sends
        a list ``node_index`` here). A single index is the paper's tool unchanged.
        Neighbors are ranked by the number of centers reaching them, then by BM25 score
        of ``query``, then by index; the first bad index, type name or ``k`` is reported
        as the single-node tool reports it.
        """
        tool = "search_in_neighborhood"
        centers: list[int] = []
        for value in node_indices:
            node = as_int(value)
            if node is None:
                return ToolError(
                    tool, ErrorCode.BAD_ARGUMENT, f"node index {value!r} is not an integer."
                )
            if node not in centers:
                centers.append(node)
        if not centers:
            return ToolError(tool, ErrorCode.BAD_ARGUMENT, "node_index is an empty list.")
        if len(centers) > MAX_CENTERS:
            return ToolError(
                tool,
                ErrorCode.BAD_ARGUMENT,
                f"{len(centers)} node indices given, at most {MAX_CENTERS} per call.",
            )
        filters = {"query": query, "node_type": node_type, "edge_type": edge_type}
        if (err := self._check_k(tool, k)) is not None:
            return err
        if len(centers) == 1:
            return self.search_in_neighborhood(centers[0], k=k, **filters)
        for c in centers:
            if (err := self._check_node(tool, c)) is not None:
                return err
        if query is not None and not isinstance(query, str):
            return ToolError(tool, ErrorCode.BAD_ARGUMENT, "query must be a string or omitted.")
        graph = self.graph
        type_ids = self._resolve(tool, "node_type", node_type, graph.node_type_names)
        if isinstance(type_ids, ToolError):
            return type_ids
        matched: list[PhraseMatch] = []
        rel_ids = self._resolve(tool, "edge_type", edge_type, graph.relation_names, matched=matched)
        if isinstance(rel_ids, ToolError):
            return rel_ids
        # Every neighbor of every center, however many (a hub's included): the count of
        # centers reaching a node and the total are exact, and only the k shown are built.
        hoods = [graph.neighborhood(c, type_ids, rel_ids) for c in centers]
        every = np.concatenate([h.neighbors for h in hoods])
        if len(every) * 8 > graph.n_nodes:  # hubs: counting beats sorting millions
            per_node = np.bincount(every)
            reached = np.flatnonzero(per_node)
            counts = per_node[reached]
        else:
            reached, counts = np.unique(every, return_counts=True)
        if query is not None:
            query = cap_query(query)
        terms = self.bm25.query_terms(query) if query and query.strip() else None
        if terms is not None and len(terms) and len(reached):
            scores = np.asarray(self.bm25.score_docs(terms, reached), dtype=np.float64)
        else:
            scores = np.zeros(len(reached), dtype=np.float64)
        share = self._set_relation_share(hoods, reached, query)
        if share is not None:  # free-text relations: the phrase linking counts too
            scores = with_relation_share(scores, share).astype(np.float64)
        order = np.lexsort((reached, -scores, -counts))[:k]
        chosen = reached[order]
        from_centers: dict[int, list[int]] = {int(n): [] for n in chosen.tolist()}
        relations: dict[int, dict[Relation, None]] = {int(n): {} for n in chosen.tolist()}
        via: dict[int, list[tuple[Relation, ...]]] = {int(n): [] for n in chosen.tolist()}
        for c, hood in zip(centers, hoods, strict=True):
            at = np.searchsorted(hood.neighbors, chosen)  # neighbors are sorted ascending
            inside = at < len(hood.neighbors)
            found = inside.copy()
            found[inside] = hood.neighbors[at[inside]] == chosen[inside]
            nodes, positions = chosen[found].tolist(), at[found].tolist()
            for n, rels in zip(nodes, self._relations(hood, positions), strict=True):
                from_centers[n].append(c)
                relations[n].update(dict.fromkeys(rels))
                via[n].append(tuple(rels))
        ids = chosen.tolist()
        hits = self._hits(chosen, scores[order], [tuple(relations[n]) for n in ids])
        merged = tuple(
            MergedHit(h, tuple(from_centers[n]), tuple(via[n]))
            for h, n in zip(hits, ids, strict=True)
        )
        center_hits = [self._hit(c) for c in centers]
        args = {"node_index": centers, **filters, "k": int(k)}
        available: tuple[tuple[str, str, str, int], ...] = ()
        if not len(reached) and (node_type is not None or edge_type is not None):
            counts: dict[tuple[str, str, str], int] = {}
            for c in centers:
                for t, r, d, n in self.links(c):
                    counts[(t, r, d)] = counts.get((t, r, d), 0) + n
            available = tuple(
                (t, r, d, n) for (t, r, d), n in sorted(counts.items(), key=lambda x: -x[1])
            )
        return MultiNeighborhoodResult(
            tool,
            args,
            merged,
            len(reached),
            tuple(center_hits),
            available=available,
            notes=tuple(m.note() for m in matched),
        )

    def _set_relation_share(
        self, hoods: Sequence[Neighborhood], reached: np.ndarray, query: str | None
    ) -> np.ndarray | None:
        """Per node of ``reached`` (ascending), the best relation share over the centers'
        neighborhoods (:meth:`_relation_share`); ``None`` where the single-node tool
        would not rank by relation phrases."""
        if not len(reached):
            return None
        out = np.zeros(len(reached), dtype=np.float32)
        found = False
        for hood in hoods:
            if not len(hood.neighbors):
                continue
            share = self._relation_share(hood, query)
            if share is None:
                continue
            found = True
            np.maximum.at(out, np.searchsorted(reached, hood.neighbors), share)
        return out if found else None

    def _relation_share(self, hood: Neighborhood, query: str | None) -> np.ndarray | None:
        """Per neighbor of ``hood``, the share of ``query``'s content words (compared by
        lemma) that the phrase of a relation linking it carries — only on a graph of
        free-text relations (:attr:`open_relations`), and ``None`` when no relation
        phrase shares a word with the query (the ranking is then BM25's alone).

        Why only there: a curated graph's relation names are a closed vocabulary the
        model filters by with ``edge_type``; its rankings stay what they were. On a
        graph built from documents the relation phrase is often the only place the
        query's words are ("founded" on the edge, not in the founder's name)."""
        if not self.open_relations or not query or not query.strip():
            return None
        from ark.words import content_words, lemma_key

        wanted = {lemma_key(w) for w in content_words(query)}
        if not wanted:
            return None
        rels = hood.entry_relations
        present = np.unique(rels)
        per_relation = np.zeros(int(present[-1]) + 1 if len(present) else 1, dtype=np.float32)
        names = self.graph.relation_names
        for r in present.tolist():
            words = self._relation_words.get(r)
            if words is None:
                label = " ".join(relation_label(names[r]).words)
                words = self._relation_words[r] = frozenset(
                    lemma_key(w) for w in content_words(label)
                )
            per_relation[r] = len(wanted & words) / len(wanted)
        if not per_relation.any():
            return None
        per_entry = per_relation[rels]
        return np.maximum.reduceat(per_entry, hood.group_starts[:-1]).astype(np.float32)

    def links(self, node: int) -> tuple[tuple[str, str, str, int], ...]:
        """What the unfiltered neighborhood holds: (neighbor type, relation, direction,
        count), most common first — shown when filters leave nothing, so the caller
        can correct them, and read by hints to point at a node's relations."""
        hood = self.graph.neighborhood(node)
        if len(hood.neighbors) == 0:
            return ()
        sizes = np.diff(hood.group_starts)
        types = np.repeat(np.asarray(self.graph.node_type)[hood.neighbors], sizes)
        n_codes = 2 * len(self.graph.relation_names)
        key = types.astype(np.int64) * n_codes + hood.entry_relations * 2 + hood.entry_directions
        keys, counts = np.unique(key, return_counts=True)
        out = []
        for k_, c in sorted(zip(keys.tolist(), counts.tolist(), strict=True), key=lambda x: -x[1]):
            t, code = divmod(k_, n_codes)
            out.append(
                (
                    self.graph.node_type_names[t],
                    self.graph.relation_names[code >> 1],
                    DIRECTION_NAMES[code & 1],
                    int(c),
                )
            )
        return tuple(out)

    # -- dispatch for agents --------------------------------------------------------------

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> ToolResult:
        """Run a tool by name with model-supplied arguments; malformed calls become errors
        (a name that is not a string, such as a list, included: it is not hashable)."""
        if not isinstance(name, str) or name not in TOOL_PARAMETERS:
            shown = short_repr(name, 60)
            return ToolError(
                cut(str(name), 60),
                ErrorCode.UNKNOWN_TOOL,
                f"there is no tool {shown}.",
                tuple(
                    difflib.get_close_matches(
                        str(name)[:60], list(TOOL_PARAMETERS), n=2, cutoff=0.3
                    )
                ),
            )
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            return ToolError(name, ErrorCode.BAD_ARGUMENT, "arguments must be a JSON object.")
        allowed, required = TOOL_PARAMETERS[name]
        unknown = [a for a in arguments if a not in allowed]
        if unknown:
            return ToolError(
                name,
                ErrorCode.BAD_ARGUMENT,
                f"unknown argument(s) {short_repr(unknown)}; this tool takes {sorted(allowed)}.",
            )
        missing = [a for a in required if a not in arguments]
        if missing:
            return ToolError(
                name, ErrorCode.BAD_ARGUMENT, f"missing required argument(s) {missing}."
            )
        kwargs = dict(arguments)
        for key in ("k", "node_index"):
            if key in kwargs:
                value = as_int(kwargs[key])
                if value is None:
                    return ToolError(
                        name,
                        ErrorCode.BAD_ARGUMENT,
                        f"{key} must be an integer, got {short_repr(kwargs[key])}.",
                    )
                kwargs[key] = value
        if name == "search_in_graph":
            return self.search_in_graph(**kwargs)
        return self.search_in_neighborhood(**kwargs)

    # -- helpers --------------------------------------------------------------------------

    def _relations(self, hood: Neighborhood, chosen: list[int]) -> list[tuple[Relation, ...]]:
        """The distinct (relation, direction) pairs linking each chosen neighbor, in
        adjacency order; one shared tuple per combination seen (a few per graph)."""
        starts = hood.group_starts
        if len(hood.entry_relations) <= 4 * len(chosen) + 8:  # small: one conversion
            codes = (hood.entry_relations * 2 + hood.entry_directions).tolist()
            bounds = starts.tolist()
            keys = [tuple(codes[bounds[i] : bounds[i + 1]]) for i in chosen]
        else:  # a hub: only the chosen neighbors' entries
            rels, dirs = hood.entry_relations, hood.entry_directions
            keys = []
            for i in chosen:
                a, b = int(starts[i]), int(starts[i + 1])
                keys.append(tuple((rels[a:b] * 2 + dirs[a:b]).tolist()))
        cache = self._relation_tuples
        out = []
        for key in keys:
            rel = cache.get(key)
            if rel is None:
                names = self.graph.relation_names
                rel = cache[key] = tuple(
                    dict.fromkeys(
                        Relation(names[c >> 1], DIRECTION_NAMES[c & 1])  # type: ignore[arg-type]
                        for c in key
                    )
                )
            out.append(rel)
        return out

    def _hits(
        self,
        indices: np.ndarray | list[int],
        scores: np.ndarray | list[float],
        relations: list[tuple[Relation, ...]] | None = None,
    ) -> tuple[NodeHit, ...]:
        """Hits for many nodes: names and texts read straight from the Arrow buffers."""
        g = self.graph
        idx = np.asarray(indices, dtype=np.int64)
        type_names, snippet = g.node_type_names, self._snippet
        types = [type_names[t] for t in self._node_type[idx].tolist()]
        values = np.asarray(scores, dtype=np.float64).tolist()
        ids = idx.tolist()
        names = g.names.take(ids)
        texts = g.texts.take(ids)
        rels = relations if relations is not None else [()] * len(ids)
        return tuple(
            [
                make_hit(i, t, n, s, snippet(x), r)
                for i, t, n, x, s, r in zip(ids, types, names, texts, values, rels, strict=True)
            ]
        )

    def _hit(self, node: int) -> NodeHit:
        """The explored node itself (score 0)."""
        g = self.graph
        type_name = g.node_type_names[int(self._node_type[node])]
        return make_hit(node, type_name, g.names[node], 0.0, self._snippet(g.texts[node]), ())

    def _snippet(self, text: str) -> str:
        if not text:
            return ""
        n = self.snippet_chars
        window = text[: n + 16]
        if len(text) > len(window) and window.isascii() and _single_spaced(window):
            # Usual text: its only whitespace in the window is single ASCII spaces, so
            # the window stripped is its words joined. The words of a shorter window are
            # a prefix of those of the longer one below (the last word possibly cut
            # short), so when they fill the snippet the result is the same.
            flat = window.strip()
            if len(flat) > n:
                return flat[: n - 1].rstrip() + "…"
        flat = " ".join(text[: 4 * n].split())  # texts can be huge
        if len(flat) <= n:
            return flat
        return flat[: n - 1].rstrip() + "…"

    def _check_k(self, tool: str, k: object) -> ToolError | None:
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= k <= self.max_k:
            return ToolError(
                tool,
                ErrorCode.BAD_K,
                f"k must be an integer from 1 to {self.max_k}, got {short_repr(k)}.",
            )
        return None

    def _check_node(self, tool: str, node_index: object) -> ToolError | None:
        n = self.graph.n_nodes
        if isinstance(node_index, bool) or not isinstance(node_index, int | np.integer):
            return ToolError(
                tool,
                ErrorCode.BAD_ARGUMENT,
                f"node_index must be an integer, got {short_repr(node_index)}.",
            )
        if not 0 <= node_index < n:
            return ToolError(
                tool,
                ErrorCode.UNKNOWN_NODE,
                f"there is no node {node_index}; node indices run from 0 to {n - 1}. "
                "Use an index returned by a previous search.",
            )
        is_removed = getattr(self.graph, "is_removed", None)  # an updated index
        if is_removed is not None and is_removed(int(node_index)):
            return ToolError(
                tool,
                ErrorCode.UNKNOWN_NODE,
                f"there is no node {node_index}: it was removed from the graph. "
                "Use an index returned by a recent search.",
            )
        return None

    def _resolve(
        self,
        tool: str,
        arg: str,
        value: str | Sequence[str] | None,
        names: list[str],
        *,
        matched: list[PhraseMatch] | None = None,
    ) -> list[int] | ToolError | None:
        """The ids of the names in ``value``: exact, then case-folded; for
        ``edge_type`` (``matched`` given) on a graph of free-text relations, a phrase
        that is no name is then matched to relations (:mod:`ark.tools._phrases`), each
        match appended to ``matched``.

        Why not on a curated graph: its tool specs enumerate the relation names, so
        the names are the contract a model (and a constrained decoder) is given, and a
        name outside it is an error listing the valid ones, as it always was."""
        if value is None:
            return None
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, Sequence) or not all(isinstance(v, str) for v in values):
            return ToolError(
                tool, ErrorCode.BAD_ARGUMENT, f"{arg} must be a name or a list of names."
            )
        if len(values) == 0:
            return None
        lookup, lowered = self._lookups[arg]
        ids = []
        for v in values:
            i = lookup.get(v, lowered.get(v.strip().lower()))
            if i is None and matched is not None and self.open_relations and v.strip():
                found = self.phrases.match(v[:200])
                if found is not None:
                    matched.append(found)
                    ids.extend(r for r in found.ids if r not in ids)
                    continue
            if i is None:
                return self._unknown_name(tool, arg, v, names)
            ids.append(i)
        return ids

    @property
    def phrases(self) -> RelationPhrases:
        """The relation-phrase matcher of this graph (built on first use)."""
        if self._phrases is None:
            self._phrases = RelationPhrases.for_index(self.index, self.phrase_encoder)
        return self._phrases

    def _unknown_name(self, tool: str, arg: str, value: str, names: list[str]) -> ToolError:
        """A name that matched nothing: every valid name when there are few (as the
        tools always said), else the closest ones only, so the error stays short."""
        kind = "node type" if arg == "node_type" else "edge type"
        code = ErrorCode.UNKNOWN_NODE_TYPE if arg == "node_type" else ErrorCode.UNKNOWN_EDGE_TYPE
        if len(names) <= LISTING_LIMIT:
            close = difflib.get_close_matches(value[:100], names, n=3, cutoff=0.4)
            return ToolError(
                tool,
                code,
                f"unknown {kind} {short_repr(value)}. Valid {kind}s: {', '.join(names)}.",
                tuple(close),
            )
        if arg == "edge_type":
            close = self.phrases.closest(value)
            how = self.phrases.stages()
        else:
            close = difflib.get_close_matches(value[:100], names, n=MAX_SHOWN, cutoff=0.4)
            how = "by name"
        return ToolError(
            tool,
            code,
            f"no {kind} of the graph's {len(names):,} matches {short_repr(value)} {how}. "
            f"Use one of the closest, other words, or no {arg}.",
            tuple(close),
        )


def with_relation_share(scores: np.ndarray, share: np.ndarray) -> np.ndarray:
    """BM25 ``scores`` raised by each neighbor's relation ``share`` (0..1): a neighbor
    whose relation phrase carries every query word gains the best text score of the
    neighborhood plus one, so it ranks above any neighbor matched by its text alone —
    the edge says what the query asks ("born" on the edge to a place), a text may only
    mention it — and a neighbor matched by both ranks first."""
    top = float(scores.max()) if len(scores) else 0.0
    return (scores + share * (top + 1.0)).astype(np.float32)


def _name_ids(names: list[str]) -> tuple[dict[str, int], dict[str, int]]:
    """Exact and case-folded name -> id."""
    return {n: i for i, n in enumerate(names)}, {n.lower(): i for i, n in enumerate(names)}


def _single_spaced(ascii_text: str) -> bool:
    """Whether the only whitespace ``str.split`` sees in ``ascii_text`` is single spaces
    (each test a memchr-speed substring search; ``str.isprintable`` is slower)."""
    return not (
        "  " in ascii_text
        or "\n" in ascii_text
        or "\t" in ascii_text
        or "\r" in ascii_text
        or "\x0b" in ascii_text
        or "\x0c" in ascii_text
        or "\x1c" in ascii_text
        or "\x1d" in ascii_text
        or "\x1e" in ascii_text
        or "\x1f" in ascii_text
    )


TOOL_PARAMETERS = tool_parameters()
