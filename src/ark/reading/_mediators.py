"""Mediator nodes: the nameless nodes through which a graph states one fact of many parts.

A graph that says *Leonid Kravchuk held the office of President of Ukraine from 1991
to 1994* in triples cannot put it on one edge; Freebase-style dumps route it through a
node of its own (a "compound value": ``kravchuk -positions_held-> m -office-> president``,
``m -jurisdiction-> ukraine``), RDF through a blank node, other exports through a row
id. Such a node is no answer and no node a question can name: the fact it stands for
ends one hop past it. The chain reading must therefore never stop at one.

What marks a mediator here, in general terms (nothing about one dump's prefix or
relations):

- **its name is an identifier no question could say** (:func:`identifier_name`): an
  RDF blank-node label (``_:b3``), or a name without spaces, in ASCII, with a piece
  (letters and digits between separators) that is a *code*: six characters or more,
  letters and digits alternating at least twice (``m.0abc12``, ``cvt_f7f4f801f4``, a
  UUID, a hex hash), or a letter tag with a serial number of six digits or more
  (``tt0111161``); and no run of four letters or more in it is a word, by the English
  lexicon (lemminflect's, as the entity spotter reads it) or by the graph's own names
  (the index's BM25 vocabulary): ``event_3fa85f64`` says *event*. A run of five
  letters or more (``iphone``, unknown to both) asks one alternation more. People
  write numbers with units and words with numbers (``1980s``, ``10000m``, ``node_17``,
  ``iphone_5s``), short codes (``R2D2``, ``F-15``, ``se7en``: under six characters),
  names with spaces (*Friday the 13th*) and names of words: none of these is an
  identifier (what it marks on the dev graphs: ``docs/decisions/reading.md``);
- **it stands between things**: it has two distinct neighbours or more. An
  identifier at the end of one edge is a value (a product code, a checksum) that a
  question may ask for;
- **it is the exception**: when most of a graph's nodes (by a sample) are named by
  identifiers, the names say nothing about which nodes a question may name or ask
  for, and no node is taken for a mediator.

The test runs once per opened index (:func:`mediators`, memoised with
:meth:`ark.index.Index.memo`): names without a digit are ruled out in Arrow's
vectorised regex before any Python reads them, so a graph of millions of nodes pays
for its few candidates only. The chain search then asks per step (relation and
direction) which share of the nodes it reaches are mediators (:func:`mediator_steps`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ark.words import is_word

#: Fewest letters and digits (separators aside) an identifier has.
CODE_LENGTH = 6
#: Fewest letter/digit alternations in an identifier.
ALTERNATIONS = 2
#: Letter runs this long or longer are checked for being words.
WORD_RUN = 4
#: A letter run this long, though no word, may be a name's own word (``iphone``): a
#: code around it must alternate once more.
SAYABLE_RUN = 5
#: A run of this many digits or more with a letter tag is a serial number.
SERIAL = 6
#: Names of the graph sampled to see whether identifiers are the exception.
SAMPLE = 20_000
#: Most share of identifier names (of those sampled) for identifiers to mark mediators.
EXCEPTION = 0.5
#: A step leads into mediators when at least this share of the nodes it reaches are.
INTO = 0.5

_BLANK = "_:"
_PIECES = re.compile(r"[^\W_]+")
_RUNS = re.compile(r"[^\W\d_]+|\d+")


def _is_word(run: str, vocabulary: Any) -> bool:
    """Whether a letter run reads as a word: the English lexicon has it, or the index's
    names use it as a word of their own (``vocabulary``: the BM25 index, or None)."""
    if is_word(run):
        return True
    if vocabulary is not None:
        try:
            return len(vocabulary.query_terms(run)) > 0
        except Exception:  # a vocabulary that cannot be read says nothing
            return False
    return False


def _code(piece: str, alternations: int) -> bool:
    """Whether one piece of a name (letters and digits between separators) is a code:
    :data:`CODE_LENGTH` characters or more, letters and digits, alternating at least
    ``alternations`` times."""
    if len(piece) < CODE_LENGTH:
        return False
    runs = _RUNS.findall(piece)
    letters = [r for r in runs if not r.isdigit()]
    if not letters or len(letters) == len(runs):
        return False
    return len(runs) - 1 >= alternations


def _serial(pieces: list[str]) -> bool:
    """Whether the name is a letter tag and a serial number: a run of :data:`SERIAL`
    digits or more (``tt0111161``, ``cvt_6631936614``), letters elsewhere in it. A
    year, a count or a model number is shorter."""
    has_letters = any(not p.isdigit() for p in pieces)
    return has_letters and any(
        len(r) >= SERIAL and r.isdigit() for p in pieces for r in _RUNS.findall(p)
    )


def identifier_name(name: str, vocabulary: Any = None) -> bool:
    """Whether ``name`` is an identifier no question could say (see the module's
    text). ``vocabulary``: the index's BM25 (its names' words), or None for the English
    lexicon alone."""
    if name.startswith(_BLANK):
        return True
    # Words written with spaces, or in a script beyond ASCII, are a name.
    if not name.isascii() or any(c.isspace() for c in name):
        return False
    pieces = _PIECES.findall(name.casefold())
    letters = [r for p in pieces for r in _RUNS.findall(p) if not r.isdigit()]
    long_runs = [r for r in letters if len(r) >= WORD_RUN]
    if any(_is_word(r, vocabulary) for r in long_runs):
        return False
    # A long run of letters (``kawasaki``, unknown to the lexicon) may be a name's
    # word: its code must alternate once more than a model number does (``iphone5s``
    # is a word and a number; a hash alternates all along).
    sayable = any(len(r) >= SAYABLE_RUN for r in long_runs)
    if sayable:
        return any(_code(p, ALTERNATIONS + 1) for p in pieces)
    return _serial(pieces) or any(_code(p, ALTERNATIONS) for p in pieces)


class Mediators:
    """Which nodes of one graph are mediators (see the module's text)."""

    def __init__(self, graph: Any, vocabulary: Any = None) -> None:
        n = int(graph.n_nodes)
        self.mask = np.zeros(n, dtype=bool)
        #: How many mediators (set once: the hints ask on every tool call).
        self.count = 0
        names = graph.names
        if not n:
            return
        arrow = getattr(names, "arrow", None)
        if arrow is None:  # a plain sequence of names
            arrow = pa.chunked_array([pa.array([str(names[i]) for i in range(n)])])
        # Only a name with a digit, or a blank node's, can be an identifier: Arrow's
        # regex rules out the rest without a Python string each.
        maybe = pc.or_(pc.match_substring_regex(arrow, r"[0-9]"), pc.starts_with(arrow, _BLANK))
        candidates = np.flatnonzero(np.asarray(maybe.to_numpy(zero_copy_only=False), dtype=bool))
        if not len(candidates):
            return
        step = max(1, n // SAMPLE)
        sampled = np.arange(0, n, step)
        in_sample = np.intersect1d(sampled, candidates)
        named_by_id = sum(identifier_name(names[int(i)], vocabulary) for i in in_sample)
        if named_by_id > EXCEPTION * len(sampled):
            return
        indptr = np.asarray(graph.indptr)
        adj = np.asarray(graph.adj_node)
        for i in candidates.tolist():
            start, end = int(indptr[i]), int(indptr[i + 1])
            if end - start < 2 or len(set(adj[start:end].tolist()) - {i}) < 2:
                continue
            if identifier_name(names[i], vocabulary):
                self.mask[i] = True
        self.count = int(self.mask.sum())

    def __contains__(self, node: int) -> bool:
        return bool(self.mask[node])

    def __len__(self) -> int:
        return self.count


def mediators(index: Any) -> Mediators:
    """The index's mediators, found once per opened index."""
    return index.memo("mediators", lambda: Mediators(index.graph, getattr(index, "bm25", None)))


def mediator_steps(index: Any, table: Any) -> np.ndarray:
    """Per step of the chain search's ``table`` (a :class:`~ark.reading._chains.StepTable`):
    whether the nodes it reaches are mediators (at least :data:`INTO` of them, over the
    whole graph). A graph without mediators gets all False, so nothing it reads
    changes. Memoised per step table."""
    # Keyed by the table's id, the table kept beside its answer: an id is only reused
    # once its object is gone, and a kept table never goes.
    cache: dict[int, tuple[Any, np.ndarray]] = index.memo("mediator_steps", dict)
    key = id(table)
    if key in cache and cache[key][0] is table:
        return cache[key][1]
    found = mediators(index)
    n_steps = len(table.steps)
    into = np.zeros(n_steps, dtype=bool)
    if len(found):
        graph = table.graph
        codes = np.asarray(graph.adj_code, dtype=np.int64)
        others = np.asarray(graph.adj_node, dtype=np.int64)
        step_of = table.code_index[codes]
        total = np.bincount(step_of, minlength=n_steps)
        hit = np.bincount(step_of, weights=found.mask[others], minlength=n_steps)
        into = (total > 0) & (hit >= INTO * np.maximum(total, 1))
    cache[key] = (table, into)
    return into


def onward_relation(
    index: Any,
    scores: Callable[[str], float],
    nodes: Sequence[int],
    came_from: Collection[int] = (),
) -> str | None:
    """The relation out of mediator ``nodes`` that the question names best, by
    ``scores`` (a reading's :meth:`~ark.reading.Linking.score`, by forward relation
    name), leaving out those that join them to ``came_from`` (the nodes the search
    came from): *Which actor played Odysseus in Troy* meets at the records of the part
    and goes on along ``performance.actor``. None when the question names none of
    them, or two alike: the hop on is then left to the model, unfiltered."""
    canonical = index.described.canonical
    g = index.graph
    indptr = np.asarray(g.indptr)
    names = g.relation_names
    back = set(came_from)
    own: set[str] = set()
    behind: set[str] = set()
    for n in nodes:
        codes = np.asarray(g.adj_code[indptr[n] : indptr[n + 1]], dtype=np.int64).tolist()
        others = np.asarray(g.adj_node[indptr[n] : indptr[n + 1]], dtype=np.int64).tolist()
        for code, other in zip(codes, others, strict=True):
            name = canonical.get(names[code // 2], names[code // 2])
            (behind if other in back else own).add(name)
    ranked = sorted(((scores(r), r) for r in own - behind), reverse=True)
    if not ranked or ranked[0][0] <= 0 or (len(ranked) > 1 and ranked[1][0] == ranked[0][0]):
        return None
    return ranked[0][1]
