"""Words of a question and of a schema phrase, compared through their lemmas.

English morphology comes from general resources, never from a list written for one
graph: lemmas from ``lemminflect`` (``wrote`` -> ``write``, ``children`` -> ``child``),
stopwords from ``bm25s`` (its extended English list, NLTK's). A word also matches a
longer one that extends it by a derivational ending (``direct`` / ``director``,
``play`` / ``player``), and a compound matches by its head (``screenwriter`` /
``written``), both at a lower score.

A phrase is *named* by a question only when the question has enough of its content
words (:func:`names_phrase`): a knowledge graph's label says its relation in one or
two words (``directed by``, ``starred actors``, ``place of death``), and one of them is
what a question says (*acted*, the other implied by *who*); a phrase extracted from
free text says several things (``began formal museum operations in``), and among
thousands of them nearly every word of a question stands in some phrase alone, so one
shared word is a coincidence, not a mention.

One normalisation for every reader of words, so that they read them the same way: the
tools' ``edge_type`` phrases, the reading (:mod:`ark.reading`), ``ark index describe``
(:mod:`ark.describe`) and distillation's questions. It knows no graph, no index and no
model, and sits below all of them in the layers contract.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterator, Sequence
from difflib import SequenceMatcher
from functools import lru_cache
from itertools import pairwise

from bm25s.stopwords import STOPWORDS_EN_PLUS

#: English function words (bm25s's extended list), which name no relation by themselves.
STOPWORDS = frozenset(STOPWORDS_EN_PLUS)
#: Score of a derivational match (``director`` for ``directed``) against an exact one.
DERIVED = 0.8
#: Least share of a phrase's content words a question must have to name the phrase:
#: half keeps one word of a two-word label (*acted* for ``starred actors``) and asks
#: two of a three- or four-word phrase.
COVERAGE = 0.5
#: Shortest first part of a compound matched by its head (``screen|writer``): shorter
#: ones are prefixes, not words (``con|forms``, ``per|forms``, ``re|formed``).
MODIFIER = 4

#: Score of a match by spelling alone (``fonction`` / ``function``, ``auteur`` /
#: ``author``, a misspelt ``foootball``): below a derivation, so a word's own lemma
#: or a derived form always wins.
SPELLED = 0.7
#: Least similarity (difflib's ratio, accents folded) of a spelling match.
SPELLING = 0.65

# Letters of any script (a name's ``é``, ``ß``), not only ASCII: ``prédécesseur`` is
# one word, not ``pr d cesseur``. Anything else splits words, an apostrophe too
# (*Kalama's*: ``kalama``, ``s``; *d'Algérie*: ``d``, ``algérie``), as it does in the
# questions that write *Kalama 's*.
_TOKEN = re.compile(r"[^\W_]+")
# What may stand between a sentence's end and its first word.
_OPENING = frozenset(" \t\n\"'`‘“«(")


def tokens(text: str) -> list[str]:
    """Words of ``text`` (letters of any script), case folded; underscores, dashes and
    camelCase split."""
    return list(_tokens(text))


@lru_cache(maxsize=65536)
def _tokens(text: str) -> tuple[str, ...]:
    """:func:`tokens`, cached: a reading splits the same node names and labels again
    and again."""
    return tuple(w.casefold() for w in _words_of(text))


def _words_of(text: str) -> list[str]:
    return [p for _, m in _matches(text) for p in _split_camel(m.group())]


def _matches(text: str) -> Iterator[tuple[str, re.Match[str]]]:
    """The words of ``text`` (underscores as spaces) as regex matches on that spaced
    text: what :func:`tokens` and :func:`written` both read."""
    spaced = text.replace("_", " ")
    for m in _TOKEN.finditer(spaced):
        yield spaced, m


def written(text: str) -> list[tuple[str, bool]]:
    """The words of :func:`tokens` as ``text`` writes them (case kept), each with
    whether it opens a sentence (first in ``text``, or after ``.``, ``!``, ``?``, ``:``
    and any quotes): there a capital says nothing about a name."""
    out = []
    for spaced, m in _matches(text):
        t = m.group()
        j = m.start() - 1
        while j >= 0 and spaced[j] in _OPENING:
            j -= 1
        opens = j < 0 or spaced[j] in ".!?:"
        parts = _split_camel(t)
        out += [(p, opens and k == 0) for k, p in enumerate(parts)]
    return out


def _split_camel(word: str) -> list[str]:
    """``word`` split before each capital that follows a small letter and starts a
    small-letter run (``nordOuest`` -> ``nord Ouest``; ``McDonald`` splits as well, as
    it always did; ``NASA`` and ``iPhone``'s tail stay whole)."""
    cuts = [
        i
        for i in range(1, len(word) - 1)
        if word[i].isupper() and word[i - 1].islower() and word[i + 1].islower()
    ]
    if not cuts:
        return [word]
    return [word[a:b] for a, b in zip([0, *cuts], [*cuts, len(word)], strict=True)]


@lru_cache(maxsize=65536)
def lemmas(word: str) -> frozenset[str]:
    """Every lemma of ``word`` under any part of speech, and the word itself."""
    out = {word}
    try:
        from lemminflect import getAllLemmas, getAllLemmasOOV
    except ImportError:  # the [core] install has it; keep working without, by the word
        return frozenset(out)
    found = getAllLemmas(word)
    if not found:
        found = {**getAllLemmasOOV(word, "NOUN"), **getAllLemmasOOV(word, "VERB")}
    for forms in found.values():
        out.update(f.casefold() for f in forms)
    return frozenset(out)


@lru_cache(maxsize=1 << 18)
def word_match(asked: str, own: str) -> float:
    """1.0 when two words share a lemma, :data:`DERIVED` when one's lemma extends the
    other's by a short ending (``direct``/``director``, ``act``/``actor``), else 0.
    Cached: a reading compares every word of the question with every word of every
    label and alias, and a schema of thousands of phrases has far fewer words."""
    a, b = lemmas(asked), lemmas(own)
    if a & b or _derived(a, b):
        return 1.0 if a & b else DERIVED
    # A compound by its head, the last part: ``screenwriter`` for ``written``. The
    # head keeps its own stem (``elder`` is not read as ``old``), and the part before
    # it is a word (``screen``), not a prefix (``conforms`` is not ``form``).
    for word in (asked, own):
        other = b if word is asked else a
        for i in range(MODIFIER, len(word) - 4):  # a head of five letters or more
            if not is_word(word[:i]):
                continue
            head = word[i:]
            tail = frozenset(w for w in lemmas(head) if w[:3] == head[:3])
            if tail & other or _derived(tail, other):
                return DERIVED
    return SPELLED if _spelled_alike(asked, own) else 0.0


def _spelled_alike(asked: str, own: str) -> bool:
    """Whether two words are one word in other spellings: a cognate of another
    language (``prédécesseur`` / ``predecessor``, ``parti`` / ``party``) or a
    misspelling (``honorifc``). Tried only when one of them is no English word: two
    English words spelt alike are two words (``county`` / ``country``)."""
    if is_word(asked) and is_word(own):
        return False
    return spelt_alike(_folded(asked), _folded(own), least=SPELLING, shortest=4)


def spelt_alike(a: str, b: str, *, least: float, shortest: int) -> bool:
    """Whether two folded words are one word spelt otherwise: ``shortest`` letters or
    more, the same first letter, and at least ``least`` alike by difflib's ratio (the
    relation words' cognates and the node names' misspellings, each at its own bar)."""
    return (
        min(len(a), len(b)) >= shortest
        and a[0] == b[0]
        and SequenceMatcher(None, a, b, autojunk=False).ratio() >= least
    )


def without_accents(word: str) -> str:
    """``word`` with its accents dropped (``rené`` -> ``rene``, ``pellonpää`` ->
    ``pellonpaa``): questions often drop them."""
    if word.isascii():
        return word
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@lru_cache(maxsize=65536)
def _folded(word: str) -> str:
    """``word`` without accents, letters only (``légende`` -> ``legende``)."""
    return "".join(c for c in without_accents(word) if c.isalpha())


@lru_cache(maxsize=65536)
def is_word(text: str) -> bool:
    """Whether ``text`` is an English word (a lemma in lemminflect's lexicon); without
    lemminflect, every text is. The one test of the reading's spotter, mediators and
    word matching alike."""
    try:
        from lemminflect import getAllLemmas
    except ImportError:
        return True
    return bool(getAllLemmas(text))


def names_phrase(explained: int, total: int) -> bool:
    """Whether a question that has ``explained`` of a phrase's ``total`` content words
    (each by lemma, derivation or compound head) names the phrase: at least
    :data:`COVERAGE` of them."""
    return total > 0 and explained >= COVERAGE * total


def lemma_key(word: str) -> str:
    """One form standing for all of a word's lemmas (the shortest): ``plays`` and
    ``play`` count as one word."""
    return min(lemmas(word), key=lambda w: (len(w), w))


def _derived(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether a lemma of one extends a lemma of the other by a short ending."""
    for x in a:
        for y in b:
            short, long = sorted((x, y), key=len)
            extra = len(long) - len(short)
            if (
                len(short) >= 3
                and long.startswith(short)
                and 0 < extra <= (4 if len(short) >= 4 else 2)
            ):
                return True
    return False


def mention_groups(positions: Sequence[int], names: Collection[int]) -> int:
    """How many separate mentions sorted word ``positions`` make: a new one where the
    gap to the last is more than two words, the words of node names (``names``) not
    counted ("club does Ann_A play" is one mention)."""
    return int(bool(positions)) + sum(
        b - a - sum(1 for j in range(a + 1, b) if j in names) > 2 for a, b in pairwise(positions)
    )


def content(words: list[str]) -> list[str]:
    """The words that are not stopwords (all of them when every one is)."""
    kept = [w for w in words if w not in STOPWORDS]
    return kept or words


def content_words(text: str) -> list[str]:
    """The words of ``text`` that say something: its :func:`tokens` less the stopwords
    (all of them when every one is a stopword, so that a phrase is never empty). The
    tools compare a query with relation phrases by these words, the linker does the
    same with questions: one normalisation, read the same way by both."""
    return content(tokens(text))
