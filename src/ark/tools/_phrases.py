"""Relation phrases: an ``edge_type`` that is no relation name, matched to the graph's.

A graph built from documents has thousands of free-text relations ("written by",
"was born in", "is the capital of"); a prompt cannot list them, and a model asking for
"wrote" should not have to guess that the graph says "written by". The neighborhood
tool therefore takes any phrase and matches it here, in two stages, the first that
finds something winning:

1. **label** — the phrase and a relation read the same once their names are split
   into words (``ark.graph.relation_label``: ``written_by``, ``writtenBy`` and
   "Written by" are one label; a relation's ``_inverse`` copy shares its label);
2. **lemma** — every content word of the phrase shares a lemma with a word of the
   relation (``ark.linking._words``: ``wrote`` / ``written by``, ``born`` / ``was born
   in``), or, failing that, one extends the other by a derivational ending
   (``director`` / ``directed by``).

Embedding similarity is not used: it would load a sentence-transformers model (the
``[dense]`` extra, seconds and hundreds of megabytes) into every process that opens the
tools, for phrases that the two stages above already read; an unmatched phrase is a
tool error listing the closest relations instead, so the model can pick one.

The matcher is built on first use (a graph whose calls all give exact names never
pays for it) and caches each phrase's answer.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ark.graph import relation_label

#: Most relations one phrase stands for; the most specific (fewest words), then the
#: most frequent, are kept: "located" finds dozens of "located in/on/near..." phrases.
MAX_MATCHED = 8
#: Relations named in the note and in an unmatched phrase's error.
MAX_SHOWN = 8


@dataclass(frozen=True, slots=True)
class PhraseMatch:
    """The relations a phrase was matched to, and by which stage."""

    phrase: str
    relations: tuple[str, ...]
    ids: tuple[int, ...]
    how: str  # "label" or "lemma"
    #: How many relations matched before the cut to :data:`MAX_MATCHED`.
    found: int

    def note(self) -> str:
        """The observation's line saying what the phrase was read as."""
        more = (
            f"; {self.found:,} matched, the {len(self.ids)} closest used"
            if (self.found > len(self.ids))
            else ""
        )
        return (
            f"(edge_type {self.phrase!r} matched: {', '.join(self.relations)} ({self.how}{more}).)"
        )

    def to_dict(self) -> dict[str, object]:
        return {"phrase": self.phrase, "relations": list(self.relations), "how": self.how}


def _label_key(text: str) -> str:
    return " ".join(relation_label(text).words).casefold()


class RelationPhrases:
    """Matches phrases to the relation ``names`` of one graph (``counts``: edges per
    relation, to prefer the frequent among equals)."""

    def __init__(self, names: Sequence[str], counts: Sequence[int] | None = None) -> None:
        from ark.linking._words import content, tokens

        self.names = list(names)
        self.counts = list(counts) if counts is not None else [0] * len(self.names)
        self._labels: dict[str, list[int]] = {}
        #: Content words of each relation; word -> the relations having it; and the
        #: words by their first letter. Lemmas are looked up only for the words a
        #: phrase could match (those starting like one of its lemmas): lemmas for all
        #: of a document graph's ~3,000 relation words took seconds.
        self._words: list[tuple[str, ...]] = []
        self._by_word: dict[str, set[int]] = {}
        self._by_prefix: dict[str, list[str]] = {}
        for i, name in enumerate(self.names):
            self._labels.setdefault(_label_key(name), []).append(i)
            words = tuple(content(tokens(relation_label(name).text)))
            self._words.append(words)
            for w in words:
                if w not in self._by_word:
                    self._by_prefix.setdefault(w[:1], []).append(w)
                self._by_word.setdefault(w, set()).add(i)
        self.match = lru_cache(maxsize=4096)(self._match)  # type: ignore[method-assign]

    def _match(self, phrase: str) -> PhraseMatch | None:
        """The relations ``phrase`` stands for, or ``None`` when no stage finds one."""
        from ark.linking._words import content, tokens

        label = self._labels.get(_label_key(phrase))
        if label:
            return self._result(phrase, set(label), "label")
        words = content(tokens(phrase))
        if not words:
            return None
        found = set.intersection(*(self._exact(w) for w in words))
        if not found:
            found = set.intersection(*(self._derived(w) for w in words))
        return self._result(phrase, found, "lemma") if found else None

    def _candidates(self, word: str, heads: bool = False) -> list[str]:
        """Relation words that may share a lemma with ``word``: those starting like
        one of its lemmas (inflections do: ``wrote``/``written``/``write``,
        ``won``/``win``), and with ``heads``, those containing one (a compound's head:
        ``screenwriter``). Suppletive forms (``was``/``is``) are left to the label stage."""
        from ark.linking._words import lemmas

        forms = lemmas(word)
        out: dict[str, None] = {}
        for prefix in {f[:1] for f in forms}:
            out.update(dict.fromkeys(self._by_prefix.get(prefix, ())))
        if heads:
            stems = [f[:3] for f in forms if len(f) >= 3]
            out.update(dict.fromkeys(w for w in self._by_word if any(s in w for s in stems)))
        return list(out)

    def _exact(self, word: str) -> set[int]:
        """Relations with a word sharing a lemma with ``word``."""
        from ark.linking._words import lemmas

        forms = lemmas(word)
        out: set[int] = set()
        for own in self._candidates(word):
            if lemmas(own) & forms:
                out |= self._by_word[own]
        return out

    def _derived(self, word: str) -> set[int]:
        """Relations with a word that ``word`` matches by a derivational ending or a
        compound's head (``ark.linking._words.word_match``)."""
        from ark.linking._words import word_match

        out: set[int] = set()
        for own in self._candidates(word, heads=True):
            if word_match(word, own) > 0:
                out |= self._by_word[own]
        return out

    def _result(self, phrase: str, ids: set[int], how: str) -> PhraseMatch:
        ranked = sorted(ids, key=lambda i: (len(self._words[i]), -self.counts[i], self.names[i]))
        kept = ranked[:MAX_MATCHED]
        return PhraseMatch(
            phrase, tuple(self.names[i] for i in kept), tuple(kept), how, found=len(ranked)
        )

    def closest(self, phrase: str, n: int = MAX_SHOWN) -> list[str]:
        """The relations nearest an unmatched phrase: those sharing most of its words
        by lemma (most frequent first), then the most similar spellings."""
        from ark.linking._words import content, tokens

        shares: dict[int, int] = {}
        for w in content(tokens(phrase)):
            for i in self._exact(w):
                shares[i] = shares.get(i, 0) + 1
        by_words = sorted(shares, key=lambda i: (-shares[i], -self.counts[i], self.names[i]))
        out = [self.names[i] for i in by_words[:n]]
        if len(out) < n:
            for name in difflib.get_close_matches(phrase[:100], self.names, n=n, cutoff=0.0):
                if name not in out:
                    out.append(name)
        return out[:n]
