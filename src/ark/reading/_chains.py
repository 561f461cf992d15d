"""A question's relation chain read against the paths the graph really has.

The relation linker says which relations a question's words name, one word at a time.
What the hints need is a chain: from the node the question names, which relations in
which order, how many times each. Counting mentions by their distance in the sentence
(and reading "co-", "same", "also" as a second use) is a guess that fits one set of
templates. Here the chain is chosen among the paths the graph offers from the named
node instead, each scored by how well its relations account for the question's words:

- **candidates**: relation paths of one to :data:`MAX_HOPS` hops from the anchor; the
  first step among the anchor's own relations, each later one among the relations
  that the nodes this path reached from the anchor have (while they have at most
  :data:`REACH_EDGES` edges; past that, among what the step-to-step table computed
  once per graph allows): a graph whose nodes of one kind have different relations
  (an English and a French ``predecessor``, a schema without node types) offers a
  path only where it leads somewhere from this node;
- **coverage**: every word the question uses (its node names aside) is explained by
  the path relation that matches it best, lexically (labels and aliases by lemma) or
  densely (all-MiniLM-L6-v2 over the single words no label or alias shares, function
  words included when the encoder ties them strongly to a relation: *where* to a
  country);
- **cost**: each hop costs a little (of two paths that explain the same words the
  shorter wins), a first relation other than the one named nearest the node a little,
  a relation no word names more, and so does each mention of a relation by its own
  label that the path does not use (*directed* ... *director*), and a word the path
  leaves unexplained (going out along a relation and straight back explains the word
  before its name: the films that *share* X's director, whose directors *also*
  directed X); a question naming no node type asks first for what it wants, so a path
  not ending at the object of the relation named first (*which club has a player from
  X*) costs; a node type the question names (*which movies*) that the path never
  reaches costs most; a word several relations have counts for one of them in full
  where the graph offers no other at the hop that takes it (*party* names ``parti``
  from a legislature); a word the encoder links joins a label's mention of the same
  relation across function words (*the creator of the script*: one mention).

The best path gives the relations in order with their number of uses; the words no
relation of it explains are what the hints must not pretend are answered.

This module holds what a path is scored on (:class:`PathFacts`, :data:`FEATURES`,
:class:`ChainWeights`), the step table and the word scores; the search itself is
:mod:`ark.reading._search`.
"""

from __future__ import annotations

import dataclasses
import operator
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ark.graph import DescribedSchema, code_steps
from ark.reading._linker import DENSE_RANGE, RelationLinker
from ark.words import (
    STOPWORDS,
    content,
    lemma_key,
    mention_groups,
    names_phrase,
    tokens,
    word_match,
)

#: Longest chain considered.
MAX_HOPS = 3
#: Most edges the nodes a partial path reached may have for the search to follow them
#: node by node (cheap below this; a hub's neighbourhood is read by the step table).
REACH_EDGES = 50_000
#: Partial paths kept at each depth of the search (a beam): the chain of a question
#: is among the few best-read prefixes, so the search costs the same at 10 relations
#: or 5,000 instead of growing with the cube of their number.
BEAM = 32
#: Steps no word names tried after each partial path, as bridges to named ones.
BRIDGES = 4
#: Named steps tried after each partial path, the surest first.
EXTEND = 24


@dataclass(frozen=True)
class PathFacts:
    """What a path of the chain search is scored on: the words it explains and what
    it leaves, counted, before any weight is put on them."""

    #: The scores of the words its relations explain, summed.
    explained: float
    #: Its hops, a hop into a mediator and the hop out counting as one.
    hops: int
    #: Mentions of a relation by its own label beyond the path's uses of it (*films
    #: directed by the director of X* names directed_by twice).
    missing_uses: int
    #: Whether its first relation is not the one named nearest the node (*the films
    #: starred by X were directed by whom* starts with starred_actors).
    out_of_order: bool
    #: Its relations no word of the question names.
    silent: int
    #: Node types the question names (*which movies*) it never reaches (the node it
    #: starts from aside).
    types_missed: int
    #: Whether it does not end at the object of the relation the question names first,
    #: before its node, when it names no node type (*which club has a player from X*).
    not_asked_first: bool
    #: Content words it leaves unexplained (going out along a relation and straight
    #: back explains the word before its name: the films that *share* X's director).
    unread: int


#: The chain scorer's features by name, each a pure function of a path's facts (here
#: each fact as a number); a path's score is their sum weighted by
#: :class:`ChainWeights` (in this order).
FEATURES: dict[str, Callable[[PathFacts], float]] = {
    f.name: operator.attrgetter(f.name) for f in dataclasses.fields(PathFacts)
}


def path_features(facts: PathFacts) -> np.ndarray:
    """The features of ``facts`` as a vector, in :data:`FEATURES`' order."""
    return np.array([float(fn(facts)) for fn in FEATURES.values()], dtype=np.float64)


@dataclass(frozen=True)
class ChainWeights:
    """The chain scorer's weights, one per feature of :data:`FEATURES` (as bm25s
    takes ``k1, b``), and the two thresholds of the word scores. The defaults were
    chosen on the dev samples (``bench_linking.py --weight NAME=VALUE`` reads with
    others; ``docs/decisions/reading.md``, which also says why they are not fitted to
    the user's graph yet)."""

    #: Per unit of the words explained.
    explained: float = 1.0
    #: Per hop (two paths that explain the same words: the shorter wins).
    hops: float = -0.15
    #: Per mention of a relation the path does not use.
    missing_uses: float = -0.5
    #: For a first relation that is not the one named nearest the node.
    out_of_order: float = -0.2
    #: Per relation no word of the question names.
    silent: float = -0.6
    #: Per node type the question names that the path never reaches.
    types_missed: float = -1.0
    #: For not ending at the object of the relation the question names first.
    not_asked_first: float = -0.3
    #: Per content word left unexplained: the words a question says are there to be
    #: read.
    unread: float = -0.15
    #: A word counts as naming a relation at this score (below: as explaining nothing).
    names: float = 0.3
    #: A function word counts when the encoder ties it to a relation at least this
    #: strongly (rescaled as the linker rescales): *where* -> country, not *of* ->
    #: anything.
    function_word: float = 0.5
    #: Per unit of the sentence encoder's cosine between the question (the node it
    #: names written X) and the path in the described schema's words
    #: (:func:`path_words`), added to the best :data:`RERANKED` paths' scores where the
    #: ``[dense]`` extra is installed (0: the path's features alone); why 0.5:
    #: ``docs/decisions/reading.md``.
    similarity: float = 0.5

    def vector(self) -> np.ndarray:
        """The weights in :data:`FEATURES`' order."""
        return np.array([getattr(self, n) for n in FEATURES], dtype=np.float64)

    def replace(self, **changes: float) -> ChainWeights:
        """These weights with ``changes`` (unknown names are an error)."""
        unknown = set(changes) - set(self.__dataclass_fields__)
        if unknown:
            raise ValueError(f"no chain weight named {', '.join(sorted(unknown))}")
        return dataclasses.replace(self, **changes)

    def score(self, facts: PathFacts) -> float:
        """The weighted sum of ``facts``' features."""
        return float(self.vector() @ path_features(facts))


#: The weights read_chains uses unless given others.
DEFAULT_WEIGHTS = ChainWeights()

#: How many of the best paths by their features the encoder's similarity reorders
#: (:attr:`ChainWeights.similarity`): as many as the rival reading is looked for among.
RERANKED = 8


def path_words(described: DescribedSchema, relations: Sequence[str]) -> str:
    """A relation path in the described schema's own words, with no template of ours:
    each relation's label, and its description where ``ark index describe`` wrote one,
    in the path's order, joined by commas (a relation not described: its name)."""
    parts = []
    for name in relations:
        doc = described.relation(name)
        if doc is None:
            parts.append(name)
        else:
            parts.append(f"{doc.label} ({doc.description})" if doc.description else doc.label)
    return ", ".join(parts)


Step = tuple[str, str]  # (forward relation, "out" | "in")


@dataclass(frozen=True)
class Chain:
    """A path read as the question's chain: from ``anchor`` along ``steps``."""

    anchor: int
    steps: tuple[Step, ...]
    score: float
    #: Per relation of the path, the word positions it explains.
    explains: tuple[tuple[str, tuple[int, ...]], ...]
    #: Words of the question that no relation of the path explains.
    unexplained: tuple[str, ...]
    #: The score of the next-best path the search found that reaches other nodes
    #: (None: it found no other): two paths to different nodes read almost as well
    #: make a reading to be less sure of; two ways to the same nodes do not. For a
    #: rival read as the other choice (:func:`ark.reading.read_chain_and_rival`), the
    #: best chain's score, above its own.
    runner_up: float | None = field(default=None, compare=False)
    #: What the scorer read of the path (None for a chain made otherwise).
    facts: PathFacts | None = field(default=None, compare=False)
    #: The encoder's cosine between the question and the path in the schema's words
    #: (None: not read by it); ``score`` is the features' weighted sum plus
    #: :attr:`ChainWeights.similarity` times this.
    closeness: float | None = field(default=None, compare=False)

    @property
    def relations(self) -> list[str]:
        """The path's relations, each once, in the order first followed."""
        return list(dict.fromkeys(r for r, _ in self.steps))

    @property
    def uses(self) -> Counter[str]:
        return Counter(r for r, _ in self.steps)

    @property
    def guessed(self) -> bool:
        """Whether the graph's shape alone chose this path: no word of the question
        names any of its relations while some of its words stay unexplained (*what
        words describe X*, with no label or alias saying *describe*). The hints then
        state no path when the node it starts from offers a choice of relations
        (:class:`ark.strategies.guided.hints.ChainHints`; such paths are rarely right:
        ``docs/decisions/reading.md``)."""
        return bool(self.unexplained) and not any(at for _, at in self.explains)

    def to_dict(self) -> dict[str, Any]:
        return {
            "anchor": self.anchor,
            "steps": [list(s) for s in self.steps],
            "score": round(self.score, 3),
            "unexplained": list(self.unexplained),
            "guessed": self.guessed,
        }


class StepTable:
    """Per graph: the canonical step of every adjacency code, which steps can follow
    which, and the node types each step reaches."""

    def __init__(self, graph: Any, canonical: Mapping[str, str]) -> None:
        self.graph = graph
        steps = code_steps(graph, canonical)
        self.code_step = steps
        self.steps = list(dict.fromkeys(steps))
        index_of = {s: i for i, s in enumerate(self.steps)}
        self.code_index = np.array([index_of[s] for s in steps], dtype=np.int64)
        n_steps = len(self.steps)
        codes = np.asarray(graph.adj_code, dtype=np.int64)
        others = np.asarray(graph.adj_node, dtype=np.int64)
        centers = np.repeat(np.arange(graph.n_nodes), np.diff(np.asarray(graph.indptr)))
        step_of = self.code_index[codes]
        # has[node, step]: the node has an edge along the step.
        has = np.zeros((graph.n_nodes, n_steps), dtype=bool)
        has[centers, step_of] = True
        # follows[a, b]: some node reached along step a has an edge along step b;
        # end_type[a]: the node type most reached along step a.
        types = np.asarray(graph.node_type, dtype=np.int64)
        self.follows = np.zeros((n_steps, n_steps), dtype=bool)
        self.end_type: list[str] = []
        for a in range(n_steps):
            reached = others[step_of == a]
            top = 0
            if len(reached):
                self.follows[a] = has[np.unique(reached)].any(axis=0)
                top = int(np.bincount(types[reached]).argmax())
            self.end_type.append(graph.node_type_names[top])

    def expand(self, nodes: np.ndarray, limit: int = REACH_EDGES) -> dict[int, np.ndarray] | None:
        """Per step, the nodes reached from ``nodes`` along it, repeats kept (None when
        they have more than ``limit`` edges between them)."""
        g = self.graph
        nodes = np.unique(nodes)
        indptr = np.asarray(g.indptr)
        starts, ends = indptr[nodes], indptr[nodes + 1]
        lengths = ends - starts
        total = int(lengths.sum())
        if total > limit:
            return None
        if not total:
            return {}
        at = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(total)
        steps = self.code_index[np.asarray(g.adj_code[at], dtype=np.int64)]
        others = np.asarray(g.adj_node[at], dtype=np.int64)
        order = np.argsort(steps, kind="stable")
        steps, others = steps[order], others[order]
        cuts = np.flatnonzero(np.diff(steps)) + 1
        return {
            int(part[0]): reached
            for part, reached in zip(np.split(steps, cuts), np.split(others, cuts), strict=True)
        }

    def first_steps(self, node: int) -> list[int]:
        g = self.graph
        codes = np.asarray(g.adj_code[g.indptr[node] : g.indptr[node + 1]], dtype=np.int64)
        return sorted(set(self.code_index[codes].tolist()))


def step_table(index: Any, linker: RelationLinker) -> StepTable:
    """The index's step table, built once per opened index."""
    cache: dict[int, StepTable] = index.memo("step_tables", dict)
    key = id(linker.canonical)
    if key not in cache:
        cache[key] = StepTable(index.graph, linker.canonical)
    return cache[key]


def _content_vectors(linker: RelationLinker) -> np.ndarray:
    """The linker's phrases without their function words, encoded once per linker."""
    cached = linker.__dict__.get("_content_vectors")
    if cached is None:
        texts = [" ".join(content(tokens(p))) for _, p in linker._phrase_owner]
        cached = linker.__dict__["_content_vectors"] = linker.encoder.encode(texts)  # type: ignore[union-attr]
    return cached


def _hollow(linker: RelationLinker) -> np.ndarray:
    """Per phrase of the linker's encoded ones: whether all its words are function
    words (``is``, ``was in``), computed once per linker."""
    cached = linker.__dict__.get("_hollow")
    if cached is None:
        cached = linker.__dict__["_hollow"] = np.array(
            [all(w in STOPWORDS for w in tokens(p)) for _, p in linker._phrase_owner], dtype=bool
        )
    return cached


def word_scores(
    linker: RelationLinker,
    words: Sequence[str],
    masked: set[int],
    typed: set[int] = frozenset(),
    function_word: float = DEFAULT_WEIGHTS.function_word,
    alone: np.ndarray | None = None,
) -> tuple[list[str], np.ndarray, np.ndarray, list[int]]:
    """(relations, scores[position, relation], lexical[position, relation], positions
    that count): how surely each word of the question names each (forward) relation,
    lexically or densely, and whether a label or alias has the word at all. Words in
    ``typed`` name a node type: only a label may also read them as a relation
    (*genre*), never the encoder's looser similarity. ``alone``, when given (an array
    of ``scores``' shape), receives the lexical scores as they would be if no other
    relation had the question's word: the chain search reads a word so where the
    graph offers only one of the relations it matches."""
    relations = list(linker.phrases)
    col = {r: j for j, r in enumerate(relations)}
    scores = np.zeros((len(words), len(relations)))
    said = [i for i, w in enumerate(words) if i not in masked and w not in STOPWORDS]
    reach = linker.reach(words, said)
    asked = {lemma_key(words[i]) for i in said}
    for rel, pairs in linker._phrase_words.items():
        j = col[rel]
        for phrase, own in pairs:
            if not own:
                continue
            found = [[(i, m) for i in said if (m := word_match(words[i], w))] for w in own]
            # A phrase the question does not name (one word of a long free-text
            # phrase) lends none of its words a score: the encoder may read them.
            if not names_phrase(sum(map(bool, found)), len(own)):
                continue
            # A word carrying the whole phrase alone counts fully; one of several
            # words of a phrase counts by its share of it.
            share = 1.0 if len(own) == 1 else max(1 / len(own), 0.5)
            for w, at in zip(own, found, strict=True):
                # Weighted by how few relations' phrases share the word, and how few
                # relations the question's word matches at all.
                weight = 1 / linker._spread.get(lemma_key(w), 1)
                for i, m in at:
                    unique = 1 / linker.ambiguity(reach, i, m)
                    score = m * share * min(weight, unique)
                    if m == 1.0:  # by lemma: a one-word own name (RelationLinker.exact)
                        score = max(score, linker.exact(rel, phrase, own, asked))
                    scores[i, j] = max(scores[i, j], score)
                    if alone is not None:
                        alone[i, j] = max(alone[i, j], score, m * share * weight)
    # A phrase of several words the question has together names its relation by all
    # of them at once ("place of death"), more surely than each word alone.
    for mention in linker.joint(words, masked):
        j = col[mention.relation]
        for i in mention.positions:
            scores[i, j] = max(scores[i, j], mention.score)
    lexical = scores > 0
    counted = list(said)
    encoder = linker.encoder
    if encoder is not None and linker._phrase_vectors is not None and len(words):
        # As in the linker, the encoder reads only the words no label or alias shares:
        # a word a label names (``play`` in three labels) keeps its lexical weight,
        # which already says how little it tells the relations apart.
        at = [
            i
            for i in range(len(words))
            if i not in masked and i not in typed and not words[i].isdigit() and not scores[i].any()
        ]
        if at:
            vectors = linker.encode([words[i] for i in at])
            sims = vectors @ linker._phrase_vectors.T
            # A function word is compared with what the phrases say besides their own
            # function words: *in* must not name ``in language`` for sharing *in*, nor
            # a phrase of function words only (``is``, ``of``: a graph built from
            # documents has such relations), which says nothing it could ask for.
            bare = vectors @ _content_vectors(linker).T
            bare[:, _hollow(linker)] = 0.0
            low, high = DENSE_RANGE
            for row, i in enumerate(at):
                chosen = bare[row] if words[i] in STOPWORDS else sims[row]
                rescaled = np.clip((chosen - low) / (high - low), 0.0, 1.0)
                per_rel: dict[str, float] = {}
                for p, (rel, _) in enumerate(linker._phrase_owner):
                    per_rel[rel] = max(per_rel.get(rel, 0.0), float(rescaled[p]))
                function = words[i] in STOPWORDS
                if function and max(per_rel.values(), default=0.0) < function_word:
                    continue
                if function:
                    counted.append(i)
                for rel, s in per_rel.items():
                    scores[i, col[rel]] = max(scores[i, col[rel]], s)
    return relations, scores, lexical, sorted(set(counted))


def excuse_repeats(
    loose: list[int], explains: Mapping[str, list[int]], repeated: set[str]
) -> list[int]:
    """``loose`` without the words just before the mentions of a relation the path
    follows and then takes back (``repeated``): such a path says something the question
    must say too (the films that *share* X's director, whose directors *also* directed
    X), and the word before the relation's name is where it says it, not a part of the
    question left unread."""
    said = {j for r, at in explains.items() if r in repeated for i in at for j in (i - 1, i - 2)}
    return [i for i in loose if i not in said]


def label_mentions(
    linker: RelationLinker, words: Sequence[str], masked: set[int]
) -> dict[str, int]:
    """How many separate times the question names each relation by its own label: a
    word of one relation's label only (*directed*, *director* for ``directed by``; not
    *plays*, in three labels, nor an alias) found again more than two words (node
    names not counted) from where it was last found. Two words of one label (*release*
    ... *year*) are one mention."""
    said = [i for i, w in enumerate(words) if i not in masked and w not in STOPWORDS]
    owners: dict[str, set[str]] = {}
    for r in linker.described.relations:
        own = content(tokens(r.label))
        # Only a label the question names (enough of its words) is mentioned by them.
        if not names_phrase(sum(any(word_match(words[i], w) for i in said) for w in own), len(own)):
            continue
        for w in own:
            owners.setdefault(w, set()).add(linker.canonical[r.name])
    at: dict[tuple[str, str], list[int]] = {}
    for i in said:
        word = words[i]
        named = {(rel, w) for w, rels in owners.items() if word_match(word, w) for rel in rels}
        if len({rel for rel, _ in named}) == 1:
            for key in named:
                at.setdefault(key, []).append(i)
    out: dict[str, int] = {}
    for (rel, _), ps in at.items():
        out[rel] = max(out.get(rel, 0), mention_groups(ps, masked))
    return out


def runner_ups(
    scores: Sequence[float], reached: Sequence[np.ndarray | None], limit: int
) -> list[float | None]:
    """For each of the first ``limit`` paths (sorted best first, with the nodes each
    reached, repeats kept; None where not followed), the best score below it of a path
    that reaches other nodes. A second way to the very same nodes (a relation and its
    mirror) is no rival reading; a path not followed counts as one."""
    ends: dict[int, np.ndarray] = {}

    def same(i: int, j: int) -> bool:
        if reached[i] is None or reached[j] is None:
            return False
        for k in (i, j):
            if k not in ends:
                ends[k] = np.unique(reached[k])  # type: ignore[arg-type]
        return bool(np.array_equal(ends[i], ends[j]))

    out: list[float | None] = []
    for rank in range(min(limit, len(scores))):
        rival = next((scores[j] for j in range(rank + 1, len(scores)) if not same(rank, j)), None)
        out.append(rival)
    return out
