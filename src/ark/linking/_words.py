"""Words of a question and of a schema phrase, compared through their lemmas.

English morphology comes from general resources, never from a list written for one
graph: lemmas from ``lemminflect`` (``wrote`` -> ``write``, ``children`` -> ``child``),
stopwords from ``bm25s`` (its extended English list, NLTK's). A word also matches a
longer one that extends it by a derivational ending (``direct`` / ``director``,
``play`` / ``player``), and a compound matches by its head (``screenwriter`` /
``written``), both at a lower score.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from functools import lru_cache
from itertools import pairwise

from bm25s.stopwords import STOPWORDS_EN_PLUS

#: English function words (bm25s's extended list), which name no relation by themselves.
STOPWORDS = frozenset(STOPWORDS_EN_PLUS)
#: Score of a derivational match (``director`` for ``directed``) against an exact one.
DERIVED = 0.8

_TOKEN = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")


def tokens(text: str) -> list[str]:
    """Words of ``text``, case folded; underscores, dashes and camelCase split."""
    spaced = re.sub(r"([a-z])([A-Z][a-z])", r"\1 \2", text)
    return [t.casefold().replace("’", "'") for t in _TOKEN.findall(spaced.replace("_", " "))]


@lru_cache(maxsize=65536)
def lemmas(word: str) -> frozenset[str]:
    """Every lemma of ``word`` under any part of speech, and the word itself."""
    out = {word}
    base = word.split("'")[0]
    out.add(base)
    try:
        from lemminflect import getAllLemmas, getAllLemmasOOV
    except ImportError:  # the [core] install has it; keep working without, by the word
        return frozenset(out)
    found = getAllLemmas(base)
    if not found:
        found = {**getAllLemmasOOV(base, "NOUN"), **getAllLemmasOOV(base, "VERB")}
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
    # head keeps its own stem (``elder`` is not read as ``old``).
    for word in (asked, own):
        other = b if word is asked else a
        for i in range(3, len(word) - 4) if len(word) >= 8 else ():
            head = word[i:]
            tail = frozenset(w for w in lemmas(head) if w[:3] == head[:3])
            if tail & other or _derived(tail, other):
                return DERIVED
    return 0.0


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
