"""The nodes a question names: node names found in it, scored by how surely.

One BM25 query with the whole question brings candidates (the index splits names
written as one word, ``prince_miguel_duke_of_viseu``, into their words too); a
candidate counts when its name's words stand in the question, compared as the linker
compares words (case folded, ``_``, ``-`` and camelCase split), each kind of match
with its own score:

- the whole name, several words: 1.0;
- one word, as written with a capital or a digit (``Big``, ``R2D2``): 1.0; in lower
  case, a word no English dictionary has (``kalama``, from ``lemminflect``'s
  lexicon, not a list for one graph): :data:`UNKNOWN_WORD`; an English word in lower
  case (``fall``, the tag ``script``): :data:`COMMON_WORD`, under :data:`ACCEPT`;
- the name without what qualifies it, a parenthesis or a year at its end
  (``Big (1988 film)`` named "Big"): :data:`QUALIFIED` times the core's own score;
- all of a long name's words but one, in order (``Prince Miguel of Viseu``):
  :data:`PARTIAL` times the share of its words found, when some word found is written
  as a name is (a capital or a digit) or is no English word (``viseu``): a run of
  common words in lower case (*live album*) is how a question speaks, not a name
  (``double live album``), as a lower-case English word is not one either.

Longer names win overlaps (``Club Leon`` over ``Leon``), then surer ones; a name made
only of stopwords, or one word that is a node type's or the question's relation word,
is left out by the caller's choice of ``exclude`` positions.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from ark.linking._words import STOPWORDS, tokens

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
#: A long name found but for one of its words, times the share found.
PARTIAL = 0.8

_QUALIFIER = re.compile(r"\s*(\([^()]*\)|,?\s*\b1[5-9]\d\d\b|,?\s*\b20\d\d\b)\s*$")


@dataclass(frozen=True, slots=True)
class EntityMention:
    """Node ``index`` (named ``name``) at words ``start:end`` of the question, found
    with ``score`` (1.0: the whole name as written)."""

    index: int
    name: str
    start: int
    end: int
    score: float = 1.0


def _known_word(word: str) -> bool:
    """Whether ``word`` is an English word (a lemma in lemminflect's lexicon)."""
    try:
        from lemminflect import getAllLemmas
    except ImportError:  # without it, every lower-case word reads as a known one
        return True
    return bool(getAllLemmas(word))


def _one_word(name: str, word: str, question: str) -> float:
    """The score of a one-word name found as ``word``: as written with a capital or a
    digit, or in lower case by whether English has the word."""
    written = name in question or name.replace("_", " ") in question
    if written and any(c.isupper() or c.isdigit() for c in name):
        return 1.0
    if any(c.isdigit() for c in word) or "_" in name:
        return 1.0 if written else UNKNOWN_WORD
    if word in STOPWORDS:
        return 0.0
    return COMMON_WORD if _known_word(word) else UNKNOWN_WORD


def _name_like(word: str, question: str) -> bool:
    """Whether ``word`` (case folded) is written in ``question`` as names are, with a
    capital or a digit, or is a word no English lexicon has; stopwords never are."""
    if word in STOPWORDS:
        return False
    if any(c.isdigit() for c in word):
        return True
    written = re.findall(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", question, re.I)
    return any(w != w.casefold() for w in written) or not _known_word(word)


def _find(words: Sequence[str], own: Sequence[str]) -> int | None:
    """Where ``own`` stands contiguously in ``words``, or None."""
    n = len(own)
    for i in range(len(words) - n + 1):
        if list(words[i : i + n]) == list(own):
            return i
    return None


def _partial(words: Sequence[str], own: Sequence[str]) -> tuple[int, int, float] | None:
    """(start, end, share) where all but one of a long name's content words stand in
    order, with at most one other word between them and nothing else."""
    kept = [w for w in own if w not in STOPWORDS]
    if len(kept) < 3:
        return None
    for skip in range(len(kept)):
        want = kept[:skip] + kept[skip + 1 :]
        for i in range(len(words)):
            if words[i] != want[0]:
                continue
            j, k, extra = i, 0, 0
            while j < len(words) and k < len(want):
                if words[j] == want[k]:
                    k += 1
                elif words[j] not in STOPWORDS:
                    extra += 1
                    if extra > 1:
                        break
                j += 1
            if k == len(want):
                return i, j, len(want) / len(kept)
    return None


def spot_entities(
    index: Any, question: str, *, exclude: Collection[int] = (), limit: int = 5
) -> list[EntityMention]:
    """Up to ``limit`` non-overlapping node names found in ``question`` with a score of
    at least :data:`ACCEPT`, in question order; a span touching an ``exclude`` position
    is skipped. For several nodes with one name, the one BM25 ranks first (the most
    specific) stands for them."""
    # A possessive is the name's own word (*Viseu's parent*).
    words = [w.split("'")[0] or w for w in tokens(question)]
    terms = index.bm25.query_terms(question)
    if not len(terms) or not words:
        return []
    docs, _ = index.bm25.top_k(terms, CANDIDATES)
    found: list[EntityMention] = []
    seen_names: set[tuple[str, ...]] = set()
    banned = set(exclude)
    for doc in docs.tolist():
        name = index.graph.name(int(doc))
        own = [w.split("'")[0] or w for w in tokens(name)]
        key = tuple(own)
        if not own or key in seen_names or all(w in STOPWORDS for w in own):
            continue
        seen_names.add(key)
        best: tuple[int, int, float] | None = None
        at = _find(words, own)
        if at is not None:
            n = len(own)
            best = (at, at + n, 1.0 if n > 1 else _one_word(name, own[0], question))
        core = _QUALIFIER.sub("", name)
        core_words = [w.split("'")[0] or w for w in tokens(core)] if core != name else []
        if core_words and not all(w in STOPWORDS for w in core_words):
            at = _find(words, core_words)
            if at is not None:
                n = len(core_words)
                own_score = 1.0 if n > 1 else _one_word(core, core_words[0], question)
                score = QUALIFIED * own_score
                if best is None or score > best[2]:
                    best = (at, at + n, score)
        if best is None or best[2] < ACCEPT:
            part = _partial(words, own)
            if (
                part is not None
                and (best is None or PARTIAL * part[2] > best[2])
                and any(_name_like(w, question) for w in words[part[0] : part[1]] if w in own)
            ):
                best = (part[0], part[1], PARTIAL * part[2])
        if best is None or best[2] < ACCEPT or set(range(best[0], best[1])) & banned:
            continue
        found.append(EntityMention(int(doc), name, best[0], best[1], round(best[2], 3)))
    found.sort(key=lambda e: (-(e.end - e.start), -e.score, e.start))
    kept: list[EntityMention] = []
    for e in found:
        if all(e.end <= k.start or e.start >= k.end for k in kept):
            kept.append(e)
    return sorted(kept[:limit], key=lambda e: e.start)
