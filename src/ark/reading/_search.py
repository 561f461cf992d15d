"""The chain search: a question's words read against the relations once
(:class:`QuestionWords`), then relation paths from the node it names searched depth
by depth, each scored by its features (:class:`PathSearch`; what the features and
weights are: :mod:`ark.reading._chains`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ark.reading._chains import (
    BEAM,
    BRIDGES,
    DEFAULT_WEIGHTS,
    EXTEND,
    MAX_HOPS,
    RERANKED,
    Chain,
    ChainWeights,
    PathFacts,
    StepTable,
    excuse_repeats,
    label_mentions,
    path_features,
    path_words,
    runner_ups,
    step_table,
    word_scores,
)
from ark.reading._linker import RelationLinker
from ark.reading._mediators import mediator_steps
from ark.words import STOPWORDS, mention_groups

#: A scored path: (score, steps, facts, words per relation, words unread).
Found = tuple[float, tuple[int, ...], PathFacts, dict[str, list[int]], list[int]]


class QuestionWords:
    """A question's words as the search reads them, path aside: how surely each names
    each relation, which count, which name node types, where the node's name is, and
    what the question asks first."""

    def __init__(
        self,
        index: Any,
        linker: RelationLinker,
        words: Sequence[str],
        masked: set[int],
        types: Sequence[tuple[str, Sequence[int]]],
        anchor_span: tuple[int, int] | None,
        weights: ChainWeights,
    ) -> None:
        self.words, self.masked, self.anchor_span = words, masked, anchor_span
        self.type_words = {i for _, at in types for i in at}
        self.unshared = np.zeros((len(words), len(linker.phrases)))
        self.relations, self.scores, self.lexical, self.counted = word_scores(
            linker, words, masked, self.type_words, weights.function_word, alone=self.unshared
        )
        self.col = {r: j for j, r in enumerate(self.relations)}
        self.start, self.end = anchor_span or (-1, -1)
        self.wanted_types = {t for t, at in types if not all(self.own_type(i) for i in at)}
        # A question that names the type it wants says so itself (the type features
        # read it).
        self.head = None if self.wanted_types else self.first_named(weights.names)
        self.typed = len(index.graph.node_type_names) > 1 and bool(self.wanted_types)
        counted = self.counted
        # Words no relation of the schema names at all stay unread whatever the path:
        # the outlook of a partial path does not hold them against it.
        self.nameable = {
            i for i in counted if self.scores[i].max() >= weights.names or self.lexical[i].any()
        }
        self.counted_scores = self.scores[counted]
        self.counted_lexical = self.lexical[counted]
        self.counted_unshared = self.unshared[counted]
        #: Per counted word, the relations whose labels or aliases have it.
        self.matching = [
            frozenset(self.relations[j] for j in np.flatnonzero(row))
            for row in self.counted_lexical
        ]

    def between(self, i: int) -> list[int]:
        """The positions between word ``i`` and the node's name."""
        start, end = self.start, self.end
        return list(range(i + 1, start)) if i < start else list(range(end, i))

    def own_type(self, i: int) -> bool:
        """A type word with only function words between it and the node's name is
        the node's own (*the film Big*, *what type of film is Big*)."""
        return self.anchor_span is not None and all(
            self.words[j] in STOPWORDS for j in self.between(i)
        )

    def distance(self, i: int) -> int:
        """Content words between position ``i`` and the node's name, the node's own
        type word aside (*actors with the film X* names ``actors`` next to X)."""
        return sum(
            self.words[j] not in STOPWORDS and not (j in self.type_words and self.own_type(j))
            for j in self.between(i)
        )

    def first_named(self, names: float) -> str | None:
        """The relation a label or alias names first, before the node's name and any
        node type the question names (the node's own type aside)."""
        if self.anchor_span is None:
            return None
        for i in self.counted:
            if i >= self.start:
                return None
            if i in self.type_words:
                if self.own_type(i):
                    continue
                return None
            row = np.where(self.lexical[i], self.scores[i], 0.0)
            if row.max() >= names:
                return self.relations[int(np.argmax(row))]
        return None

    def one_phrase(self, i: int, j: int) -> bool:
        """Whether words ``i`` and ``j`` are one noun phrase: only function words
        between them, and no node's name (not *the daughter of X 's parent*)."""
        lo, hi = sorted((i, j))
        return all(k not in self.masked and self.words[k] in STOPWORDS for k in range(lo + 1, hi))


class PathSearch:
    """Relation paths from one node, read against a question's words: the graph's
    steps after each partial path, what each path explains, and its facts."""

    def __init__(
        self,
        index: Any,
        table: StepTable,
        q: QuestionWords,
        mentions: Mapping[str, int],
        weights: ChainWeights,
    ) -> None:
        self.table, self.q, self.mentions, self.weights = table, q, mentions, weights
        self.vector = weights.vector()
        # Steps into a graph's nameless mediator nodes: no chain ends there, and the
        # hop in and the hop out are one fact (all False on a graph without them).
        self.into = mediator_steps(index, table)
        self.has_mediators = bool(self.into.any())
        #: Per partial path, the relations the graph offers after it (the anchor's
        #: first).
        self.offered: dict[tuple[int, ...], frozenset[str]] = {}
        #: Per partial path, the nodes it reached from the anchor, repeats kept
        #: (absent: too many to follow).
        self.reached: dict[tuple[int, ...], np.ndarray] = {}
        # The steps some word names (a score that counts, or a label's word): the
        # search extends a path by these, by the step the question asks first for, and
        # by steps reaching a node type it asks for; a step no word names is tried
        # only as a bridge on the way to a named one.
        self.step_col = np.array([q.col.get(rel, -1) for rel, _ in table.steps])
        named_rel = (q.counted_scores >= weights.names).any(axis=0) | q.counted_lexical.any(axis=0)
        wanted = np.array([j >= 0 and bool(named_rel[j]) for j in self.step_col], dtype=bool)
        if q.head is not None:
            wanted |= np.array([s == (q.head, "out") for s in table.steps], dtype=bool)
        if q.typed:
            wanted |= np.array([t in q.wanted_types for t in table.end_type], dtype=bool)
        self.wanted = wanted
        self.leads_on = table.follows[:, wanted].sum(axis=1)
        # How surely some word names each step: of many named steps after a path, the
        # search tries the surest :data:`EXTEND` (a schema of thousands of free-text
        # relations shares its common words among hundreds of them).
        self.strength = np.array(
            [
                q.counted_scores[:, j].max() if j >= 0 and len(q.counted) else 0.0
                for j in self.step_col
            ]
        )

    def in_context(self, path: tuple[int, ...], cols: list[int]) -> np.ndarray:
        """The counted words' scores for the relations ``cols`` of ``path``: a word
        several relations' labels or aliases have (*party*: ``party``, ``parti``,
        ``stateParty``) is shared out among them, but where the graph offers only
        one of them at the hop that takes it (a legislature has ``parti``, not
        ``party``), it names that one alone."""
        q, table = self.q, self.table
        sub = q.counted_scores[:, cols]  # a copy (indexed by a list)
        at_hop: dict[str, frozenset[str]] = {}
        for k, s in enumerate(path):
            rel = table.steps[s][0]
            if rel not in at_hop and path[:k] in self.offered:
                at_hop[rel] = self.offered[path[:k]]
        for b, j in enumerate(cols):
            here = at_hop.get(q.relations[j])
            if here is None:
                continue
            for a in np.flatnonzero(q.counted_lexical[:, j]).tolist():
                if (
                    q.counted_unshared[a, j] > sub[a, b]
                    and not (q.matching[a] - {q.relations[j]}) & here
                ):
                    sub[a, b] = q.counted_unshared[a, j]
        return sub

    def explain(
        self, rels: list[str], uses: Counter[str], path: tuple[int, ...] = ()
    ) -> tuple[float, dict[str, list[int]], list[int]]:
        """Which words each relation of the path explains: the best-scored pairs
        first, a word the encoder links (no label or alias of the relation has it)
        taken as a new mention (words more than two apart, node names not counted)
        only while the relation has a use left that no label or alias names, so that
        a relation the question names by its label does not also take a word that
        names the path's next hop (the *daughter* of X's *parent*: a kinship word the
        encoder puts close to both). Returns the score of the words
        explained, the words per relation, and the words left loose."""
        q = self.q
        cols = [q.col[r] for r in rels if r in q.col]
        explains: dict[str, list[int]] = {r: [] for r in rels}
        if not cols:
            return 0.0, explains, list(q.counted)
        sub = self.in_context(path, cols)
        pairs = sorted(
            (
                (float(sub[a, b]), a, b)
                for a, b in zip(*np.nonzero(sub >= self.weights.names), strict=True)
            ),
            key=lambda t: (-t[0], t[1], t[2]),
        )
        total, taken = 0.0, set()
        for value, a, b in pairs:
            if a in taken:
                continue
            rel, i = q.relations[cols[b]], q.counted[a]
            at = explains[rel]
            # A label's own words are one mention however far apart (the *release* of
            # the *year*); the encoder's looser reading of a word joins a mention of
            # the relation, or opens one of its uses that no label or alias names.
            if (
                at
                and not q.lexical[i, cols[b]]
                and not any(q.one_phrase(i, j) for j in at)
                and mention_groups(sorted([*at, i]), q.masked) > mention_groups(at, q.masked)
                and (
                    any(q.lexical[j, cols[b]] for j in at)
                    or mention_groups(at, q.masked) >= max(1, uses[rel])
                )
            ):
                continue
            at.append(i)
            taken.add(a)
            total += value
        # A word some label of the path has (``play``, in three labels) is accounted
        # for, though too common to name a relation by itself.
        labelled = q.counted_lexical[:, cols].any(axis=1)
        loose = [q.counted[a] for a in np.flatnonzero(~labelled).tolist() if a not in taken]
        for at in explains.values():
            at.sort()
        return total, explains, loose

    def facts(
        self, path: tuple[int, ...]
    ) -> tuple[PathFacts, PathFacts, dict[str, list[int]], list[int]]:
        """(facts, outlook facts, words per relation, words unread) of ``path``; the
        outlook ranks it as a prefix: its last relation's silence and where it ends
        are not held against it, nor words that a later hop may yet explain."""
        q, table, into = self.q, self.table, self.into
        steps = [table.steps[s] for s in path]
        rels = list(dict.fromkeys(r for r, _ in steps))
        uses = Counter(r for r, _ in steps)
        total, explains, loose = self.explain(rels, uses, path)
        # A hop into a mediator and the hop out of it state one fact: one hop, named
        # when either relation is (Freebase-style names split the fact between them).
        through = [k for k in range(len(path) - 1) if into[path[k]]] if self.has_mediators else []
        missing = sum(max(0, m - uses[r]) for r, m in self.mentions.items())
        out_of_order = False
        if q.anchor_span is not None:
            near = {r: min(q.distance(i) for i in at) for r, at in explains.items() if at}
            first = steps[0][0]
            out_of_order = bool(near and first in near and near[first] > min(near.values()))
        # A relation that explains no word better than the path's others do is silent:
        # the question does not name it (a detour, or a relation added for one word
        # another relation of the path explains as well).
        silent = [r for r in rels if not explains[r]]
        if through:
            spoken = {
                r
                for k in through
                for r in (steps[k][0], steps[k + 1][0])
                if explains[steps[k][0]] or explains[steps[k + 1][0]]
            }
            silent = [r for r in silent if r not in spoken]
        types_missed = 0
        if q.typed:
            reached = {table.end_type[s] for s in path}
            types_missed = len(q.wanted_types - reached)
        # Past a mediator, the fact the last two hops state ends where the path does.
        ends = {steps[-1]}
        if len(path) > 1 and self.has_mediators and into[path[-2]]:
            ends.add(steps[-2])
        # What the question asks for first is the relation's object.
        not_asked_first = q.head is not None and (q.head, "out") not in ends
        # Out along a relation from the node and straight back (X's co-stars, the films
        # that share X's director) is what a modifier of the relation's name can say.
        back: set[str] = set()
        if len(path) > 1:
            (first, way), (second, back_way) = steps[0], steps[1]
            if first == second and way != back_way:
                back = {first}
        unread = [
            i
            for i in excuse_repeats(loose, explains, back)
            if q.words[i] not in STOPWORDS and i not in q.type_words
        ]
        hops = len(path) - len(through)
        whole = PathFacts(
            total,
            hops,
            missing,
            out_of_order,
            len(silent),
            types_missed,
            not_asked_first,
            len(unread),
        )
        outlook = PathFacts(
            total,
            hops,
            missing,
            out_of_order,
            len(silent) - (steps[-1][0] in silent),
            0,
            False,
            sum(i not in q.nameable for i in unread),
        )
        return whole, outlook, explains, unread

    def score(
        self, path: tuple[int, ...]
    ) -> tuple[float, float, PathFacts, dict[str, list[int]], list[int]]:
        """(score, outlook, facts, words per relation, words unread) of ``path``."""
        whole, outlook, explains, unread = self.facts(path)
        return (
            float(self.vector @ path_features(whole)),
            float(self.vector @ path_features(outlook)),
            whole,
            explains,
            unread,
        )

    def extensions(self, path: tuple[int, ...], depth: int, max_hops: int) -> list[tuple[int, ...]]:
        """The paths one step longer than ``path`` worth scoring: the steps the graph
        has after the nodes it reached that some word names (the surest
        :data:`EXTEND`), and a few bridges to them; out of a mediator, every step it
        has but the way back."""
        table = self.table
        mediated = self.has_mediators and bool(self.into[path[-1]])
        if depth >= max_hops and not mediated:
            return []
        after = table.follows[path[-1]]
        nodes = self.reached.get(path)
        onward = None if nodes is None else table.expand(nodes)
        if onward is not None:
            there = np.zeros(len(after), dtype=bool)
            there[list(onward)] = True
            after = after & there
            self.reached.update({(*path, b): ns for b, ns in onward.items()})
            self.offered[path] = frozenset(table.steps[b][0] for b in onward)
        # Out of a mediator, every relation it has is a candidate (the one that best
        # explains what the question still says wins by the same scoring): a question
        # names the fact, not always the hop out.
        named = np.flatnonzero(after if mediated else after & self.wanted)
        if mediated:
            # Back along the relation it came in by is where the fact began.
            rel, way = table.steps[path[-1]]
            back = (rel, "in" if way == "out" else "out")
            named = np.array([k for k in named if table.steps[k] != back], dtype=np.int64)
        if len(named) > EXTEND:
            named = np.sort(named[np.argsort(-self.strength[named], kind="stable")[:EXTEND]])
        out = [(*path, int(b)) for b in named]
        if depth + 1 != max_hops and not mediated:
            # Bridges: the unnamed steps leading on to the most named ones.
            bridges = np.flatnonzero(after & ~self.wanted & (self.leads_on > 0))
            bridges = sorted(bridges.tolist(), key=lambda b: (-self.leads_on[b], b))[:BRIDGES]
            out += [(*path, b) for b in sorted(bridges)]
        return out

    def run(self, anchor: int, max_hops: int, beam: int) -> list[Found]:
        """Every path scored, best first (paths ending at a mediator only when no
        path ends elsewhere)."""
        table = self.table
        found: list[Found] = []
        stopped: list[Found] = []
        frontier: list[tuple[int, ...]] = [(s,) for s in table.first_steps(anchor)]
        first = table.expand(np.array([anchor], dtype=np.int64)) or {}
        self.offered[()] = frozenset(table.steps[s][0] for s in table.first_steps(anchor))
        self.reached.update({(s,): nodes for s, nodes in first.items()})
        # A path that reaches mediators at the last hop goes one hop further.
        deepest = max_hops + self.has_mediators
        for depth in range(1, deepest + 1):
            ranked = []
            for path in frontier:
                total, outlook, whole, explains, loose = self.score(path)
                mediated = self.has_mediators and self.into[path[-1]]
                (stopped if mediated else found).append((total, path, whole, explains, loose))
                ranked.append((outlook, total, path))
            if depth == deepest:
                break
            ranked.sort(key=lambda r: (-r[0], -r[1], r[2]))
            frontier = [
                longer
                for _, _, path in ranked[:beam]
                for longer in self.extensions(path, depth, max_hops)
            ]
        found = found or stopped
        found.sort(key=lambda f: (-f[0], len(f[1]), f[1]))
        return found


def read_chains(
    index: Any,
    linker: RelationLinker,
    words: Sequence[str],
    anchor: int,
    masked: set[int],
    types: Sequence[tuple[str, Sequence[int]]] = (),
    *,
    anchor_span: tuple[int, int] | None = None,
    mentions: Mapping[str, int] | None = None,
    max_hops: int = MAX_HOPS,
    limit: int | None = 5,
    weights: ChainWeights = DEFAULT_WEIGHTS,
    beam: int = BEAM,
) -> list[Chain]:
    """The best ``limit`` chains from ``anchor`` for a question of ``words`` (positions
    in ``masked`` are node names), best first. ``types``: node types it names, with the
    word positions naming them (a type word need not be explained by a relation);
    ``anchor_span``: the word positions ``start:end`` of the anchor's name;
    ``mentions``: how many separate times the question names each relation (by
    default :func:`label_mentions`); ``limit``: None for every path the search scored;
    ``weights``: the scorer's (:class:`ChainWeights`); ``beam``: the partial paths kept
    at each depth (the best by their outlook, :meth:`PathSearch.facts`)."""
    q = QuestionWords(index, linker, words, masked, types, anchor_span, weights)
    if mentions is None:
        mentions = label_mentions(linker, words, masked)
    search = PathSearch(index, step_table(index, linker), q, mentions, weights)
    found = search.run(anchor, max_hops, beam)
    closeness: dict[tuple[int, ...], float] = {}
    if weights.similarity and linker.encoder is not None and found:
        found, closeness = closest_first(
            found, linker, words, anchor_span, search.table, weights.similarity
        )
    if limit is None:
        limit = len(found)
    rivals = runner_ups([f[0] for f in found], [search.reached.get(f[1]) for f in found], limit)
    return [
        Chain(
            anchor,
            tuple(search.table.steps[s] for s in path),
            total,
            tuple((r, tuple(at)) for r, at in explains.items()),
            tuple(words[i] for i in loose),
            runner_up=rivals[rank],
            facts=whole,
            closeness=closeness.get(path),
        )
        for rank, (total, path, whole, explains, loose) in enumerate(found[:limit])
    ]


def closest_first(
    found: Sequence[Found],
    linker: RelationLinker,
    words: Sequence[str],
    anchor_span: tuple[int, int] | None,
    table: StepTable,
    weight: float,
) -> tuple[list[Found], dict[tuple[int, ...], float]]:
    """``found`` (best first) with the best :data:`RERANKED` paths rescored by
    ``weight`` x the encoder's cosine between the question, its node's name written X
    (what a path starts from, not a word to explain), and the path in the described
    schema's words (:func:`path_words`), and put in their new order; the paths below
    keep theirs. Why: the features count words and hops, the encoder reads what the
    whole question is about, and among the few paths the features rank close it tells
    the one the question means where the rules read least well (garbled or unusual
    wording; ``docs/decisions/reading.md``). Both texts are encoded once per linker;
    returned with each rescored path's cosine."""
    top = list(found[:RERANKED])
    if anchor_span is not None:
        start, end = anchor_span
        words = [*words[:start], "X", *words[end:]]
    texts = [path_words(linker.described, [table.steps[s][0] for s in f[1]]) for f in top]
    vectors = linker.encode([" ".join(words), *texts])
    closeness = vectors[1:] @ vectors[0]
    rescored = [(f[0] + weight * float(c), *f[1:]) for f, c in zip(top, closeness, strict=True)]
    rescored.sort(key=lambda f: -f[0])  # stable: a tie keeps the features' order
    by_path = {f[1]: float(c) for f, c in zip(top, closeness, strict=True)}
    return [*rescored, *found[RERANKED:]], by_path  # type: ignore[list-item]
