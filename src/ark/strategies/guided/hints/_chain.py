"""The chain hints of ``ark-guided`` as a session observer.

:class:`ChainHints` reads the question once against the index (the relations it
names, the nodes it names, the chain the graph has from them), keeps what the search
has followed of that chain, and after each call returns the part (a typed line,
:class:`ark.session.Hint` or :class:`ark.session.Note`) of
:mod:`ark.strategies.guided.hints._lines` that makes the next move obvious. The session
renders it and never knows about any of it.

The reading costs a dense encoder pass and a path search, and every agent of a
retriever asks the same question: :func:`question_reading` keeps the last readings
per index, so ``n_agents`` agents read a question once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ark.graph import LINK_MAX_MENTIONS, MENTIONS, PASSAGE_TYPE, Mentions
from ark.index import Index
from ark.reading import (
    Chain,
    Reading,
    linker_for,
    mediators,
    onward_relation,
    read_chain_and_rival,
    read_question,
)
from ark.session import Hint, Note, Part, SessionObserver
from ark.strategies.guided.hints import _documents, _lines
from ark.words import STOPWORDS, tokens

if TYPE_CHECKING:
    from ark.session import ToolSession
    from ark.tools import GraphTools

#: Readings kept per index: enough for the questions an evaluation runs at once.
READINGS_KEPT = 64
_LOCK = threading.Lock()


@dataclass(frozen=True)
class QuestionReading:
    """A question read against one index, as the hints use it: the linker's reading,
    the chain read from the node it names (None when it names no node or several) and
    that chain's rival, the best reading to other nodes (None without one)."""

    reading: Reading
    chain: Chain | None
    rival: Chain | None = None


def question_reading(index: Index, question: str) -> QuestionReading:
    """The reading of ``question``, computed once per index and question text (the
    agents of one retrieval share it; a re-described index reads it again)."""
    described = index.described
    cache: OrderedDict[str, tuple[object, QuestionReading]]
    with _LOCK:
        cache = index.memo("question_readings", OrderedDict)
        hit = cache.get(question)
        if hit is not None and hit[0] is described:
            cache.move_to_end(question)
            return hit[1]
    reading = read_question(index, question)
    read = QuestionReading(reading, *read_chain_and_rival(index, reading, question))
    with _LOCK:
        cache[question] = (described, read)
        cache.move_to_end(question)
        while len(cache) > READINGS_KEPT:
            cache.popitem(last=False)
    return read


class ChainHints(SessionObserver):
    """The hints of ``ark-guided`` (its ``GuidedAgent``): after a global search, the first hop
    of the question's chain (or the hop over the nodes it names, for an
    intersection); after a neighborhood, the chain's next relation or the add; after a
    repeat, the nodes not explored yet; after an add, a reminder when the node was a
    step on the way. ``question=None`` keeps the hints that need no question."""

    def __init__(self, index: Index, question: str | None = None, *, rival: bool = False) -> None:
        """``rival``: follow the chain's rival instead (:attr:`QuestionReading.rival`),
        the other reading a plan choice offers; no chain when there is none."""
        self.index = index
        self.question = question
        #: Relations followed by neighborhood calls with results, one entry per use: a
        #: relation followed again from other nodes counts again.
        self.followed: list[str] = []
        self._uses: set[tuple[str, frozenset[int]]] = set()  # (relation, centers)
        self._last_hits: list[tuple[int, str, str]] = []  # of the last search with results
        read = question_reading(index, question) if question else None
        #: The question read against the index (relations linked, nodes named), and
        #: its chain: the graph's path from the node it names that best accounts for
        #: its words (:func:`ark.reading.read_chain`), or, when it names no node or
        #: several, the relations the linker is sure of.
        self.reading = read.reading if read else None
        self.chain = (read.rival if rival else read.chain) if read else None
        #: A chain no word of the question names while words of it are unexplained
        #: (*what words describe X*, when no relation's words say *describe*): the
        #: graph's shape alone chose it, so the hints state no path and hand the
        #: choice to the model (:func:`._lines.unread_hop`); kept here for the record.
        self.guess: Chain | None = None
        if self.chain is not None and self.chain.guessed and self._offers_a_choice(self.chain):
            self.guess, self.chain = self.chain, None
        if self.chain is not None:
            self._chain = _lines.chain_relations(self.chain)
            self._unaccounted: tuple[str, ...] = self.chain.unexplained
        elif self.guess is not None:
            self._chain, self._unaccounted = [], self.guess.unexplained
        elif self.reading is not None:
            self._chain = _lines.named_relations(self.reading.linking)
            self._unaccounted = self.reading.linking.unaccounted
        else:
            self._chain, self._unaccounted = [], ()
        self._matching = self._matching_relations()
        self._asks_for = self._asked_types()
        self._named = [n.relation for n in self._chain]
        #: Relations the chain takes that no word of the question names: the hints
        #: say the path takes them, not that the question names them.
        self._unnamed = _lines.unnamed_relations(self._chain)
        self._wanted = {n.relation: n.uses for n in self._chain}
        #: The nodes the question names, when it names several (an intersection).
        self._anchors = (
            list(self.reading.entities) if self.reading and len(self.reading.entities) > 1 else []
        )
        self._canonical = linker_for(index).canonical if self.reading else {}
        #: On a graph built from documents, the passage type and ``mentions``: the
        #: hints then send the search to the passages (:mod:`._documents`).
        self.documents = _documents.has_passages(index)
        #: Nodes a hint wrote by index and name that no result has shown (the nodes the
        #: question names): the model has seen them, so it may explore from them.
        self.shown: set[int] = set()
        #: The part the latest hook returned (None for none): the plan runner runs the
        #: call it offers (:func:`ark.strategies.guided.plans.ready_call`).
        self.last_part: Part | None = None

    # -- what the reading holds (the plan's confidence reads some of it)

    @property
    def relations(self) -> list[_lines.Named]:
        """The relations the hints act on, in chain order, with their uses."""
        return list(self._chain)

    @property
    def unaccounted(self) -> tuple[str, ...]:
        """The question's content words no relation of the reading explains."""
        return tuple(self._unaccounted)

    @property
    def unnamed(self) -> set[str]:
        """The chain's relations no word of the question names."""
        return set(self._unnamed)

    @property
    def anchors(self) -> list[Any]:
        """The nodes the question names when it names several (an intersection)."""
        return list(self._anchors)

    @property
    def asked_types(self) -> list[str]:
        """The node types the question asks for."""
        return list(self._asks_for)

    def _offers_a_choice(self, chain: Chain) -> bool:
        """Whether the node a guessed chain starts from has relations of more than one
        meaning (a relation and its stored reverse are one). With one, the first hop is
        the only way on, not a guess, and the path through the nodes that join a fact
        (a marriage, a term of office) is the graph's own; handing such a hop to the
        model lost questions the path answered (``docs/decisions/reading.md``)."""
        hood = self.index.graph.neighborhood(chain.anchor)
        names = self.index.graph.relation_names
        canonical = self.index.described.canonical
        meanings = {canonical.get(names[c], names[c]) for c in np.unique(hood.entry_relations)}
        return len(meanings) > 1

    # -- the hooks ----------------------------------------------------------------------

    def after_search(
        self,
        session: ToolSession,
        name: str,
        arguments: Mapping[str, Any],
        result: Any,
        centers: list[int],
    ) -> Hint | None:
        """The first hop after a global search, the chain's next move after a
        neighborhood (nothing after a search without results); on a graph built from
        documents, the passages instead (:meth:`_document_hint`)."""
        if result.hits:
            self._last_hits = [(h.index, h.name, h.type) for h in result.hits]
        if self.documents:
            part = self._document_hint(session, arguments, result, centers)
        elif not result.hits:
            part = None
        else:
            part = self._hint(session, name, arguments, result, centers)
        self.last_part = part
        return part

    def after_repeat(
        self, session: ToolSession, name: str, arguments: Mapping[str, Any]
    ) -> Hint | None:
        """The latest results' nodes not explored yet, as next moves."""
        part = _lines.after_repeat([h for h in self._last_hits if h[0] not in session.explored])
        self.last_part = part
        return part

    def after_add(self, session: ToolSession, added: list[int]) -> Note | None:
        """A reminder when an added node was a step on the way, or, when the question
        names relations not followed yet, the next hop from the added nodes; on a
        graph built from documents, the passages to add or how to go on."""
        g = self.index.graph
        if self.documents:
            self.last_part = self._document_add(session, added)
            return self.last_part
        self.last_part = _lines.after_add(
            self.question,
            [(n, g.name(n), g.type_name(n)) for n in added],
            session.explored,
            remaining=[r for r in self._named if self.followed.count(r) < self._wanted[r]],
            schema=self.index.schema,
            multi=session.config.multi_neighborhood,
            unnamed=self._unnamed,
        )
        return self.last_part

    # -- a graph built from documents ----------------------------------------------------

    def _document_hint(
        self,
        session: ToolSession,
        arguments: Mapping[str, Any],
        result: Any,
        centers: list[int],
    ) -> Hint | None:
        """The passages to read or add after a call on a graph built from documents."""
        g = self.index.graph
        question = self.question or ""
        multi = session.config.multi_neighborhood
        passage = PASSAGE_TYPE
        if not centers:  # a global search
            if not result.hits:
                return None
            titled = [
                (h.index, h.name)
                for h in result.hits
                if h.type == passage and _documents.titled_in(question, h.name)
            ]
            found = [(h.index, h.name, h.type) for h in result.hits if h.type != passage]
            found += self._question_nodes()  # the nodes the question names, found or not
            anchors = _named_nodes(question, found, passage)
            query = _documents.query_words(question, [n for _, n, _ in anchors])
            if _made(session, anchors, query, multi):
                anchors = []  # their passages were read: a call the session would refuse
            self.shown.update(i for i, _, _ in _documents.written(anchors, multi))  # written
            return _documents.after_global(titled, anchors, query, multi=multi)
        fresh = [h for h in result.hits if h.index not in centers]
        passages = [h.index for h in fresh if h.type == passage]
        if passages:
            merged = getattr(result, "merged", ())
            ranked = bool(arguments.get("query")) or (bool(merged) and len(merged[0].centers) > 1)
            return _documents.after_passages(
                [p for p in passages if p not in session.answer],
                ranked=ranked,
                n_shown=len(passages),
            )
        if _only(arguments.get("edge_type"), MENTIONS) and _only(
            arguments.get("node_type"), passage
        ):
            return None  # the passages were asked for and there are none
        anchors = {i for i, _, _ in _named_nodes(question, self._question_nodes(), passage)}
        from_passages = all(g.type_name(c) == passage for c in centers)
        entities = [(h.index, h.name, h.type) for h in fresh if h.type != passage]
        if from_passages:  # the nodes the passages name: the next link is among them
            nodes = [n for n in entities if n[0] not in anchors and n[0] not in session.explored]
        else:  # a hop along relations: the passages mentioning both ends state it
            own = [(c, g.name(c), g.type_name(c)) for c in centers if g.type_name(c) != passage]
            nodes = own[:1] + entities[:2] if entities else own
        query = _documents.query_words(question, [n for _, n, _ in nodes])
        if _made(session, nodes, query, multi):
            return None
        return _documents.to_passages(nodes, query, multi=multi, named_by_passages=from_passages)

    def _question_nodes(self) -> list[tuple[int, str, str]]:
        g = self.index.graph
        if self.reading is None:
            return []
        return [(e.index, g.name(e.index), g.type_name(e.index)) for e in self.reading.entities]

    def _document_add(self, session: ToolSession, added: list[int]) -> Note:
        """After an add on a graph built from documents: with entities only, the
        passages already shown that mention them."""
        g = self.index.graph
        nodes = [(n, g.name(n), g.type_name(n)) for n in added]
        passage_id, mentions_id = g.type_id(PASSAGE_TYPE), g.relation_id(MENTIONS)
        mentioning: list[tuple[int, str, int]] = []
        bridges: list[tuple[int, str, str]] = []
        if passage_id is None or mentions_id is None:
            return _documents.after_add(nodes, mentioning)
        for n, _, t in nodes:
            if t == PASSAGE_TYPE:
                bridges += self._bridges(n, passage_id, mentions_id)
                continue
            hood = g.neighborhood(n, [passage_id], [mentions_id])
            mentioning += [
                (int(p), g.name(int(p)), n)
                for p in hood.neighbors.tolist()
                if int(p) in session.seen and int(p) not in session.answer
            ]
        bridges = list(dict.fromkeys(bridges))
        multi = session.config.multi_neighborhood
        question = self.question or ""
        named = [n for _, n, _ in _named_nodes(question, self._question_nodes(), "")]
        query = _documents.query_words(question, named + [n for _, n, _ in bridges[:3]])
        if _made(session, bridges, query, multi):
            bridges = []
        # The note writes the bridges by index and name, with the call to explore them:
        # the model has seen them (a session that refuses unseen nodes must run it).
        self.shown.update(i for i, _, _ in _documents.written(bridges, multi))
        unstated: list[str] = []
        if not bridges and any(t == PASSAGE_TYPE for _, _, t in nodes):
            # Only the note without a bridge names them: the answer's texts are read then.
            texts = [g.text(p) for p in session.answer if g.node_type[p] == passage_id]
            unstated = _documents.unstated_words(question, named, texts)
        return _documents.after_add(
            nodes,
            mentioning,
            bridges,
            query,
            multi=multi,
            unstated=unstated,
        )

    def _bridges(
        self, passage: int, passage_id: int, mentions_id: int
    ) -> list[tuple[int, str, str]]:
        """The nodes ``passage`` mentions that the question does not name and that lead
        to other passages: first those with a passage of their own (titled with their
        name: where the facts about a node are), then those 2 to
        :data:`ark.graph.LINK_MAX_MENTIONS` passages mention (a node most
        passages name links everything and nothing); fewer passages first within each
        (an example: ``docs/decisions/reading.md``)."""
        g = self.index.graph
        question = self.question or ""
        naming = Mentions(g, passage_id, mentions_id)
        found: list[tuple[int, int, int, str, str]] = []
        for e in g.neighborhood(passage, None, [mentions_id]).neighbors.tolist():
            e = int(e)
            name = g.name(e)
            if g.node_type[e] == passage_id or _documents.named_in(question, name):
                continue
            others = naming.passages_naming(e).tolist()
            own = any(_documents.same_name(g.name(p), name) for p in others if p != passage)
            if own or 2 <= len(others) <= LINK_MAX_MENTIONS:
                found.append((0 if own else 1, len(others), e, name, g.type_name(e)))
        found.sort(key=lambda f: (f[0], f[1]))  # stable
        return [(e, name, t) for _, _, e, name, t in found]

    # -- the hint after a search ----------------------------------------------------------

    def _hint(
        self,
        session: ToolSession,
        name: str,
        arguments: Mapping[str, Any],
        result: Any,
        centers: list[int],
    ) -> Hint | None:
        schema = self.index.schema
        explored = session.explored
        multi = session.config.multi_neighborhood
        anchors = [e.index for e in self._anchors]
        if not centers:
            if name == "search_in_graph" and anchors and not explored:
                self.shown.update(anchors)
                return _lines.intersection_call(
                    self._anchors, self._anchor_relations(session.tools), multi=multi
                )
            if name == "search_in_graph" and self.guess is not None and not explored:
                return self._unread_hop(session, result)
            if name != "search_in_graph" or not self._chain or explored:
                return None
            top = result.hits[0].score
            # The node the reading found named in the question comes first wherever the
            # search ranked it: a query that repeats the question's other words ("the
            # football club that X plays for") can rank a club named "... Football ..."
            # above X, and the hint must not call that the best match.
            read = {e.index for e in self.reading.entities} if self.reading else set()
            hits = [h for h in result.hits if h.index in read]
            ordered = self.chain is not None
            if read and not hits:
                # A query of the question's other words ("football club") returned other
                # nodes: the hop starts from the node the question names, said as such.
                g, e = self.index.graph, self.reading.entities[0]  # type: ignore[union-attr]
                links = session.tools.links(e.index)
                own = [(e.index, g.name(e.index), g.type_name(e.index), links)]
                part = _lines.first_hop(
                    self._chain, self.question or "", own, ordered=ordered, returned=False
                )
                if part is not None:
                    self.shown.add(e.index)
                    return part
            hits += [h for h in result.hits[:3] if h.score >= 0.9 * top and h.index not in read]
            candidates = [(h.index, h.name, h.type, session.tools.links(h.index)) for h in hits]
            return _lines.first_hop(self._chain, self.question or "", candidates, ordered=ordered)
        hop = self._follow(arguments.get("edge_type"), result.hits, centers)
        if anchors and len(centers) > 1 and set(anchors) <= set(centers):
            merged = [(m.hit.index, len(m.centers)) for m in result.merged]
            filtered = bool(arguments.get("edge_type") or arguments.get("node_type"))
            common = _lines.linked_to_all(merged, len(centers))
            if common:
                # The intersection is the whole chain: every named relation is used up.
                for relation in self._named:
                    missing = self._wanted[relation] - self.followed.count(relation)
                    self.followed += [relation] * max(0, missing)
            found = mediators(self.index)
            nameless = [i for i, _ in merged if i in found] if len(found) else []
            onward = None
            if common and self.reading is not None and set(common) <= set(nameless):
                onward = onward_relation(
                    self.index, self.reading.linking.score, common[: _lines.MAX_SUGGESTED], centers
                )
            return _lines.after_intersection(
                common,
                len(centers),
                self._unaccounted,
                centers,
                filtered,
                self._anchor_relations(session.tools),
                nameless=nameless,
                multi=multi,
                onward=onward,
            )
        hits = [(h.index, h.type) for h in result.hits]
        found = mediators(self.index)
        nameless = [i for i, _ in hits if i in found] if len(found) else []
        if not self.question:
            return _lines.after_neighborhood(schema, hits, explored, multi=multi, nameless=nameless)
        return _lines.chain_hint(
            schema,
            self._named,
            hits,
            explored,
            self.followed,
            multi=multi,
            uses=self._wanted,
            centers=[(c, self.index.graph.type_name(c)) for c in centers],
            hop=hop,
            unaccounted=self._unaccounted,
            matching=self._matching,
            # A type asked for that the search has passed through is a step on the way
            # (*the films directed by X were released in which years*).
            asks_for=[]
            if any(self.index.graph.type_name(n) in self._asks_for for n in explored)
            else self._asks_for,
            nameless=nameless,
            unnamed=self._unnamed,
        )

    def _unread_hop(self, session: ToolSession, result: Any) -> Hint | None:
        """The first hop when the reading is a guess (:attr:`guess`): from the node the
        question names (said so when the search did not return it), its relations
        listed, none claimed."""
        assert self.guess is not None
        g, anchor = self.index.graph, self.guess.anchor
        returned = any(h.index == anchor for h in result.hits)
        candidate = (anchor, g.name(anchor), g.type_name(anchor), session.tools.links(anchor))
        part = _lines.unread_hop(candidate, self._unaccounted, returned=returned)
        if part is not None and not returned:
            self.shown.add(anchor)
        return part

    def _matching_relations(self) -> list[str]:
        """The relations whose labels or aliases (or, with the encoder, meaning) match
        the words the reading leaves unexplained, best first: what a hint names when it
        cannot say the question is answered."""
        if self.reading is None or not self._unaccounted:
            return []
        linking = self.reading.linking
        loose = set(self._unaccounted)
        at = {
            i
            for i, w in enumerate(linking.words)
            if w in loose and i not in linking.entity_positions
        }
        scored: dict[str, float] = {}
        for link in linking.links:
            for m in link.mentions:
                # A label or alias that has the word, or the encoder when it is sure:
                # its looser ties (*professional* to a national team) name nothing.
                sure = m.via == "lexical" or m.score > linking.threshold
                if sure and at & set(m.positions):
                    scored[link.relation] = max(scored.get(link.relation, 0.0), m.score)
        return sorted(scored, key=lambda r: -scored[r])

    def _asked_types(self) -> list[str]:
        """The node types the question asks for: those it names, less a type word that
        stands next to a node's name with only function words between (*the film X*:
        the node's own type), on a graph of several node types."""
        if self.reading is None or len(self.index.graph.node_type_names) < 2:
            return []
        words = self.reading.linking.words
        spans = [(e.start, e.end) for e in self.reading.entities]

        def own(i: int) -> bool:
            for start, end in spans:
                gap = range(i + 1, start) if i < start else range(end, i)
                if all(words[j] in STOPWORDS for j in gap):
                    return True
            return False

        return [t for t, at in self.reading.linking.types if not all(own(i) for i in at)]

    def _anchor_relations(self, tools: GraphTools) -> list[str]:
        """For the intersection's filter: per anchor, the relation it has that the
        linker scores highest, however low (forward names; an anchor's relation is
        rarely named outright: "a player from Mexico"); empty when some anchor has no
        scored relation, so that no filter cuts its neighbors."""
        assert self.reading is not None
        linking = self.reading.linking
        chosen: list[str] = []
        for e in self._anchors:
            present = {self._canonical.get(r, r) for _, r, _, _ in tools.links(e.index)}
            scored = [(linking.score(r), r) for r in present if linking.score(r) > 0]
            if not scored:
                return []
            best = max(scored)[1]
            if best not in chosen:
                chosen.append(best)
        return chosen

    def _follow(self, edge_type: object, hits: Sequence[Any], centers: list[int]) -> list[str]:
        """Record the relation a neighborhood call went along (its edge filter, or else
        the relation its results were reached by) as one use, unless the call names
        several: which of them the chain took is then unknown. A relation followed
        again from the same centers is not a new use. Returns the relations recorded."""
        names = [edge_type] if isinstance(edge_type, str) else edge_type
        if isinstance(names, list) and names:
            new = {n for n in names if isinstance(n, str)}
        else:
            new = {r.type for h in hits for r in h.relations}
        known = {n.casefold(): n for n in self.index.schema.relation_names}
        # A stored reverse (plays_in_club_inverse) is a use of its forward relation.
        canonical = {
            self._canonical.get(known[n.casefold()], known[n.casefold()])
            for n in new
            if n.casefold() in known
        }
        if len(canonical) != 1:
            return []
        (relation,) = canonical
        use = (relation, frozenset(centers))
        if use not in self._uses:
            self._uses.add(use)
            self.followed.append(relation)
        return [relation]


def _made(
    session: ToolSession, nodes: Sequence[tuple[int, str, str]], query: str, multi: bool
) -> bool:
    """Whether the call for the passages that mention ``nodes`` (as a hint writes it)
    was made already: the session would refuse it as a repeat, so no hint offers it."""
    chosen = _documents.written(nodes, multi)
    if not chosen:
        return False
    arguments = _documents.passages_arguments([i for i, _, _ in chosen], query, multi)
    return session.made("search_in_neighborhood", arguments)


def _named_nodes(
    question: str, found: Sequence[tuple[int, str, str]], passage_type: str
) -> list[tuple[int, str, str]]:
    """The nodes of ``found`` ((index, name, type), best first) that the question
    names as written (:func:`._documents.named_in`), not passages, one per index,
    less a name inside a longer one also named (*Dodge City* in *Dodge City Regional
    Airport*), at most :data:`._documents.MAX_ANCHORS`."""
    named: dict[int, tuple[int, str, str]] = {}
    for i, name, t in found:
        if t != passage_type and i not in named and _documents.named_in(question, name):
            named[i] = (i, name, t)
    nodes = list(named.values())
    words = {i: " ".join(tokens(n)) for i, n, _ in nodes}
    kept = [
        (i, n, t)
        for i, n, t in nodes
        if not any(
            j != i and len(words[j]) > len(words[i]) and f" {words[i]} " in f" {words[j]} "
            for j in words
        )
    ]
    return kept[: _documents.MAX_ANCHORS]


def _only(value: object, name: str) -> bool:
    """Whether a filter argument (a name or a list of names) is ``name`` alone."""
    names = [value] if isinstance(value, str) else value
    return (
        isinstance(names, list)
        and len(names) == 1
        and isinstance(names[0], str)
        and names[0].strip().casefold() == name.casefold()
    )
