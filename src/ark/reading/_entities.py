"""The nodes a question names: node names found in it, scored by how surely.

One BM25 query with the whole question brings candidates (the index splits names
written as one word, ``prince_miguel_duke_of_viseu``, into their words too); a
candidate counts when its name's words stand in the question, compared as the linker
compares words (case folded, ``_``, ``-`` and camelCase split), each kind of match
with its own score:

- the whole name, several words: 1.0;
- one word, as written with a capital or a digit (``Big``, ``R2D2``), by the node or
  by the question (*Who wrote Twilight*, for a graph that writes ``twilight``; not the
  capital opening a sentence): 1.0; in lower case, a word no English dictionary has
  (``kalama``, from ``lemminflect``'s lexicon, not a list for one graph):
  :data:`UNKNOWN_WORD`; an English word in lower case (``fall``, the tag ``script``):
  :data:`COMMON_WORD`, under :data:`ACCEPT`, in a graph that writes names with
  capitals; in one that folds case (a dump: case says nothing there), by how few of
  its nodes have the word (BM25's document frequency): from :data:`UNKNOWN_WORD` for
  one node down to :data:`COMMON_WORD` for many (*film*); such a word is a name only
  where the question names no node more surely;
- the name without what qualifies it, a parenthesis at its end
  (``Big (1988 film)`` named "Big"): :data:`QUALIFIED` times the core's own score;
- written otherwise: accents dropped (*Rene Descartes*: equal), without its spaces or
  dashes (*F15* for ``f-15``) or with one word of five letters or more spelt
  otherwise (*Canegham*): :data:`FUZZY`.

Longer names win overlaps (``Club Leon`` over ``Leon``), then surer ones; a name made
only of stopwords, or one word that is a node type's or the question's relation word,
is left out by the caller's choice of ``exclude`` positions.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from ark.words import STOPWORDS, is_word, spelt_alike, tokens, without_accents, written

#: Candidates fetched from BM25 for one question.
CANDIDATES = 200
#: A mention scoring at least this counts as a node the question names.
ACCEPT = 0.5
#: A one-word name in lower case that no English lexicon knows (``kalama``).
UNKNOWN_WORD = 0.8
#: A one-word name in lower case that is an English word (``fall``): not a name.
COMMON_WORD = 0.3
#: A name found without its qualifier (``Big`` for ``Big (1988 film)``), times the
#: core's own score.
QUALIFIED = 0.9
#: A name written otherwise (one word spelt otherwise, ``Cointrea`` for ``cointreau``;
#: without its spaces or dashes, ``F15`` for ``f-15``), times its score as written.
FUZZY = 0.85
#: Least similarity (difflib's ratio, accents folded) of a word spelt otherwise.
FUZZY_RATIO = 0.8
#: A graph writes its names in lower case when fewer than this share of them has a
#: capital.
CASED = 0.2

_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")


@dataclass(frozen=True, slots=True)
class EntityMention:
    """Node ``index`` (named ``name``) at words ``start:end`` of the question, found
    with ``score`` (1.0: the whole name as written)."""

    index: int
    name: str
    start: int
    end: int
    score: float = 1.0


def _one_word(
    name: str, word: str, question: str, written_as: tuple[str, bool], common: float
) -> tuple[float, bool]:
    """The score of a one-word name found as ``word``: written with a capital (not the
    one opening a sentence) or a digit, 1.0; in lower case by whether English has the
    word, an English word at ``common`` (what the graph says of how specific it is:
    :func:`_common_score`). ``written_as``: the word as the question writes it, and
    whether it opens a sentence. Also returns whether the score is an English word's
    (``common``)."""
    written = name in question or name.replace("_", " ") in question
    if written and any(c.isupper() or c.isdigit() for c in name):
        return 1.0, False
    raw, opens = written_as
    # The question's own writing counts, whatever case the graph writes names in
    # (``twilight`` asked as *Who wrote Twilight*).
    if any(c.isdigit() for c in raw) or (not opens and any(c.isupper() for c in raw)):
        return 1.0, False
    if any(c.isdigit() for c in word) or "_" in name:
        return (1.0 if written else UNKNOWN_WORD), False
    if word in STOPWORDS:
        return 0.0, False
    return (common, True) if is_word(word) else (UNKNOWN_WORD, False)


def _graph_writes_lower_case(index: Any) -> bool:
    """Whether fewer than :data:`CASED` of the graph's names (a sample of up to 20,000)
    have a capital: such a graph (a dump that folds case) says nothing by the case of
    a name, so a lower-case English word may be one of its names. Computed once per
    opened index."""

    def lower_case() -> bool:
        names = index.graph.names
        step = max(1, len(names) // 20000)
        sample = [names[i] for i in range(0, len(names), step)]
        lettered = [n for n in sample if any(c.isalpha() for c in n)]
        cased = sum(any(c.isupper() for c in n) for n in lettered)
        return bool(lettered) and cased < CASED * len(lettered)

    return bool(index.memo("lower_case_names", lower_case))


def _common_score(index: Any, word: str, lower_case_graph: bool) -> float:
    """How surely a lower-case English word names the node called so: in a graph that
    writes names with capitals, :data:`COMMON_WORD` (a question's lower-case word is
    how it speaks, not a name); in one that folds case, by how few of the graph's
    nodes have the word (BM25's document frequency): from :data:`UNKNOWN_WORD` for a
    word one node has down to :data:`COMMON_WORD` for one many share (*film*, *year*
    in a film graph's names)."""
    if not lower_case_graph:
        return COMMON_WORD
    shared = _nodes_with(index, word)
    if not shared:
        return COMMON_WORD
    return COMMON_WORD + (UNKNOWN_WORD - COMMON_WORD) / shared


def _plain_words(text: str) -> list[str]:
    """The words of ``text`` as names are compared: accents folded."""
    return [without_accents(w) for w in tokens(text)]


def _fuzzy(
    words: Sequence[str], own: Sequence[str], squashed: dict[str, tuple[int, int]]
) -> tuple[int, int] | None:
    """(start, end) where ``own`` stands written otherwise: without its spaces or dashes
    (``F15`` for ``f-15``; ``squashed``: the question's runs of up to six words joined),
    or with one of its words of five letters or more spelt otherwise (``Cointrea`` for
    ``cointreau``), the others as they are."""
    joined = "".join(own)
    if len(joined) >= 4 and joined in squashed:
        return squashed[joined]
    n = len(own)
    if n == 1 and is_word(own[0]):  # an English word spelt otherwise is another word
        return None
    for i in range(len(words) - n + 1):
        odd = [k for k in range(n) if words[i + k] != own[k]]
        if len(odd) == 1:
            k = odd[0]
            if own[k] in STOPWORDS:
                continue
            if spelt_alike(words[i + k], own[k], least=FUZZY_RATIO, shortest=5):
                return i, i + n
    return None


def _find(words: Sequence[str], own: Sequence[str]) -> int | None:
    """Where ``own`` stands contiguously in ``words``, or None."""
    n = len(own)
    for i in range(len(words) - n + 1):
        if list(words[i : i + n]) == list(own):
            return i
    return None


def _nodes_with(index: Any, word: str) -> int:
    """How many nodes' texts have ``word`` (BM25's document frequency of its first
    term; 0 when the index has no term for it)."""
    terms = index.bm25.query_terms(word)
    if not len(terms):
        return 0
    t = int(terms[0])
    return int(index.bm25.indptr[t + 1] - index.bm25.indptr[t])


def spot_entities(
    index: Any, question: str, *, exclude: Collection[int] = (), limit: int = 5
) -> list[EntityMention]:
    """Up to ``limit`` non-overlapping node names found in ``question`` with a score of
    at least :data:`ACCEPT`, in question order; a span touching an ``exclude`` position
    is skipped. For several nodes with one name, the one BM25 ranks first (the most
    specific) stands for them."""
    writing = written(question)
    words = _plain_words(question)
    terms = index.bm25.query_terms(question)
    if not len(terms) or not words:
        return []
    docs, _ = index.bm25.top_k(terms, CANDIDATES)
    lower_case_graph = _graph_writes_lower_case(index)
    squashed: dict[str, tuple[int, int]] = {}
    for i in range(len(words)):
        for n in range(min(6, len(words) - i), 0, -1):
            squashed.setdefault("".join(words[i : i + n]), (i, i + n))

    #: Mentions read as an English word in lower case (``album``): taken only when the
    #: question names no node more surely.
    weak: set[int] = set()

    def one_word(name: str, word: str, at: int, doc: int) -> float:
        common = _common_score(index, word, lower_case_graph)
        score, is_common = _one_word(name, word, question, writing[at], common)
        if is_common:
            weak.add(doc)
        return score

    found: list[EntityMention] = []
    seen_names: set[tuple[str, ...]] = set()
    banned = set(exclude)
    for doc in docs.tolist():
        name = index.graph.name(int(doc))
        own = _plain_words(name)
        key = tuple(own)
        if not own or key in seen_names or all(w in STOPWORDS for w in own):
            continue
        seen_names.add(key)
        best: tuple[int, int, float] | None = None
        at = _find(words, own)
        if at is not None:
            n = len(own)
            best = (at, at + n, 1.0 if n > 1 else one_word(name, own[0], at, doc))
        core = _QUALIFIER.sub("", name)
        core_words = _plain_words(core) if core != name else []
        if core_words and not all(w in STOPWORDS for w in core_words):
            at = _find(words, core_words)
            if at is not None:
                n = len(core_words)
                own_score = 1.0 if n > 1 else one_word(core, core_words[0], at, doc)
                score = QUALIFIED * own_score
                if best is None or score > best[2]:
                    best = (at, at + n, score)
        if best is None or best[2] < FUZZY:
            span = _fuzzy(words, own, squashed)
            if span is not None:
                i, j = span
                # One word found otherwise stands as a one-word name does.
                alone = 1.0 if j - i > 1 or len(own) > 1 else one_word(name, own[0], i, doc)
                if best is None or FUZZY * alone > best[2]:
                    best = (i, j, FUZZY * alone)
        if best is None or best[2] < ACCEPT or set(range(best[0], best[1])) & banned:
            continue
        found.append(EntityMention(int(doc), name, best[0], best[1], round(best[2], 3)))
    # A lower-case English word is a name only where nothing surer is: *the album Night
    # Train* names Night Train, not the node called album.
    sure = [e for e in found if e.index not in weak]
    if sure:
        found = sure
    found.sort(key=lambda e: (-(e.end - e.start), -e.score, e.start))
    kept: list[EntityMention] = []
    for e in found:
        if all(e.end <= k.start or e.start >= k.end for k in kept):
            kept.append(e)
    return sorted(kept[:limit], key=lambda e: e.start)
