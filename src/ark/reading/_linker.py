"""Relation linking: which of the graph's relations a question uses, where, and how
surely.

Two general signals, each scored in [0, 1], the best one kept per relation:

- **lexical**: a relation's label and aliases (the described schema) against the
  question's words, compared by lemma (``wrote``/``written``, ``directed``/``director``);
  a phrase scores the share of its content words the question has;
- **dense** (optional): similarity of the question's short spans to the same phrases
  under a sentence encoder (all-MiniLM-L6-v2 from the ``[dense]`` extra), read only
  over the words no label shares (``job`` for ``profession``), rescaled so that
  unrelated pairs score 0.

A relation and its stored reverse (``plays_in_club_inverse``) are one meaning: they
link together, under the forward name. Besides the ranked relations, a linking says
which node types the question names (what it asks for) and which content words
nothing accounts for: a hint must not declare the chain complete while any remain.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ark.graph import DescribedSchema
from ark.words import (
    DERIVED,
    SPELLED,
    STOPWORDS,
    content,
    lemma_key,
    mention_groups,
    names_phrase,
    tokens,
    word_match,
)

#: A link above this score is confident: hints act on it. (Half a two-word label, or
#: one word shared by two relations, is not.)
CONFIDENT = 0.5
#: Dense similarity at or below ``low`` maps to 0, at or above ``high`` to 1.
DENSE_RANGE = (0.38, 0.72)
#: Longest question span (in words) compared densely.
MAX_SPAN = 3
#: How surely one word names the relation it is the whole phrase of (see
#: :meth:`RelationLinker.exact`): a derived form's weight.
EXACT = DERIVED
#: Question spans whose vectors a linker keeps (then it starts over).
ENCODED_KEPT = 20000


class Encoder(Protocol):
    """What the dense signal needs: L2-normalised vectors for texts."""

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class Mention:
    """Where a relation is named: the question's word ``positions``, how surely, by
    which phrase and which signal (``lexical`` or ``dense``)."""

    relation: str
    positions: tuple[int, ...]
    score: float
    phrase: str
    via: str


@dataclass(frozen=True, slots=True)
class Link:
    """A relation the question uses: its best score and every place it is named."""

    relation: str
    score: float
    mentions: tuple[Mention, ...]

    @property
    def positions(self) -> tuple[int, ...]:
        return tuple(sorted({i for m in self.mentions for i in m.positions}))


@dataclass(frozen=True)
class Linking:
    """The linker's reading of one question."""

    question: str
    words: tuple[str, ...]
    links: tuple[Link, ...]
    #: Node types the question names, with the word positions that name them.
    types: tuple[tuple[str, tuple[int, ...]], ...] = ()
    #: Content words that no confident link, type or entity accounts for.
    unaccounted: tuple[str, ...] = ()
    threshold: float = CONFIDENT
    entity_positions: frozenset[int] = field(default_factory=frozenset)

    def confident(self) -> list[Link]:
        return [link for link in self.links if link.score > self.threshold]

    def uses(self) -> dict[str, tuple[int, tuple[int, ...]]]:
        """Per confident relation, best first: how many separate times the question
        names it (mentions more than two words apart, node names not counted) and the
        word positions naming it. A relation named only by a word that names a node
        type ("the genres that are the genre of X") is left out unless fully matched:
        such a word says what is asked for."""
        type_positions = {i for _, at in self.types for i in at}
        out: dict[str, tuple[int, tuple[int, ...]]] = {}
        for link in self.confident():
            positions = tuple(
                sorted({i for m in link.mentions if m.score > self.threshold for i in m.positions})
            )
            at = [i for i in positions if i not in type_positions]
            if not at and link.score < 1.0:
                continue
            out[link.relation] = (max(1, mention_groups(at, self.entity_positions)), positions)
        return out

    def score(self, relation: str) -> float:
        return next((link.score for link in self.links if link.relation == relation), 0.0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "links": [
                {
                    "relation": link.relation,
                    "score": round(link.score, 3),
                    "mentions": [
                        {
                            "words": " ".join(self.words[i] for i in m.positions),
                            "phrase": m.phrase,
                            "via": m.via,
                            "score": round(m.score, 3),
                        }
                        for m in link.mentions
                    ],
                }
                for link in self.links
            ],
            "types": [t for t, _ in self.types],
            "unaccounted": list(self.unaccounted),
        }


def relation_own_words(name: str) -> str | None:
    """A relation name's own words when it has letters outside ASCII (``prédécesseur``,
    ``hiérarchie``), read by :func:`tokens`, which keeps them. An index built before
    labels read every script stores a letter-blind label (``pr d cesseur``), which
    names nothing; None for an ASCII name, which its label already reads. A path's last
    segment only (``a.b.c``, ``a/b``)."""
    if name.isascii():
        return None
    last = re.split(r"__|[./]", name.strip("_"))[-1]
    return " ".join(tokens(last)) or None


def entity_positions(words: Sequence[str], names: Sequence[str]) -> set[int]:
    """Word positions covered by any of ``names`` (node names found in the question)."""
    covered: set[int] = set()
    for name in names:
        own = tokens(name)
        n = len(own)
        for i in range(len(words) - n + 1):
            if n and list(words[i : i + n]) == own:
                covered.update(range(i, i + n))
    return covered


class RelationLinker:
    """Links questions to the relations of one described schema (build once per index)."""

    def __init__(
        self,
        described: DescribedSchema,
        *,
        encoder: Encoder | None = None,
        threshold: float = CONFIDENT,
    ) -> None:
        self.described = described
        self.threshold = threshold
        self.encoder = encoder
        #: Forward name of every relation (a reverse copy maps to what it reverses).
        self.canonical = described.canonical
        phrases: dict[str, list[str]] = {}
        #: Per relation, its phrases from its own name (the label, the name's own
        #: words), not the words a model or a schema file added.
        self.named: dict[str, set[str]] = {}
        for r in described.relations:
            own = phrases.setdefault(self.canonical[r.name], [])
            spelled = relation_own_words(r.inverse_of or r.name)
            own += [p for p in (r.label, *r.aliases, spelled) if p and p not in own]
            named = self.named.setdefault(self.canonical[r.name], set())
            named.update(p for p in (r.label, spelled) if p)
        self.phrases = phrases
        self._phrase_words = {
            rel: [(p, content(tokens(p))) for p in ps] for rel, ps in phrases.items()
        }
        #: In how many relations' phrases each word stands: a word many share names none.
        spread: dict[str, int] = {}
        for pairs in self._phrase_words.values():
            for w in {lemma_key(w) for _, own in pairs for w in own}:
                spread[w] = spread.get(w, 0) + 1
        self._spread = spread
        #: Per distinct content word of the phrases, the relations whose phrases have it.
        owners: dict[str, set[str]] = {}
        for rel, pairs in self._phrase_words.items():
            for _, own in pairs:
                for w in own:
                    owners.setdefault(w, set()).add(rel)
        self._owners = owners
        # A phrase of several words is named by them together more surely than by any
        # one of them: "place of death" is one relation's label though "place" and
        # "death" are each in two. Per such phrase: in how many relations' phrases all
        # of its words stand.
        keyed = {
            rel: [frozenset(lemma_key(w) for w in own) for _, own in pairs]
            for rel, pairs in self._phrase_words.items()
        }
        # Only relations with a phrase holding every word of the key can count: look
        # them up by word, not by comparing all pairs of phrases (why:
        # docs/decisions/reading.md).
        holding: dict[str, set[str]] = {}
        for rel, ks in keyed.items():
            for w in set().union(*ks):
                holding.setdefault(w, set()).add(rel)
        self._joint: dict[str, list[tuple[str, list[str], int, int]]] = {}
        for rel, pairs in self._phrase_words.items():
            for phrase, own in pairs:
                if len(own) < 2:
                    continue
                key = frozenset(lemma_key(w) for w in own)
                rels = set.intersection(*(holding.get(w, set()) for w in key))
                n = sum(any(key <= k for k in keyed[r]) for r in rels)
                self._joint.setdefault(rel, []).append((phrase, own, len(tokens(phrase)), n))
        # A name of one word is named exactly by that word: ``type`` names the
        # relation called *type* more surely than *subdivision type*, which it only
        # half names. Per one-word key: how many relations are called by it alone. Own
        # names only: a small model gives the same everyday word to many relations
        # (docs/decisions/reading.md), which would share out the one named so.
        self._exact: dict[str, int] = {}
        for rel, pairs in self._phrase_words.items():
            mine = self.named[rel]
            for w in {lemma_key(own[0]) for p, own in pairs if len(own) == 1 and p in mine}:
                self._exact[w] = self._exact.get(w, 0) + 1
        #: Per such word, the other words of the longer names that have it too.
        self._longer: dict[str, list[frozenset[str]]] = {w: [] for w in self._exact}
        for rel, pairs in self._phrase_words.items():
            for _, own in (pair for pair in pairs if pair[0] in self.named[rel]):
                keys = {lemma_key(w) for w in own}
                for w in keys & self._exact.keys() if len(keys) > 1 else ():
                    self._longer[w].append(frozenset(keys - {w}))
        self._type_words = [
            (t.name, [content(tokens(p)) for p in (t.label, *t.aliases) if p])
            for t in described.types
        ]
        self._phrase_vectors: np.ndarray | None = None
        self._phrase_owner: list[tuple[str, str]] = []
        self._type_owner = [
            (t.name, p) for t in described.types for p in dict.fromkeys((t.label, *t.aliases)) if p
        ]
        self._type_vectors: np.ndarray | None = None
        if encoder is not None:
            self._phrase_owner = [(rel, p) for rel, ps in phrases.items() for p in ps]
            self._phrase_vectors = encoder.encode([p for _, p in self._phrase_owner])
            if self._type_owner:
                self._type_vectors = encoder.encode([p for _, p in self._type_owner])

    def exact(self, rel: str, phrase: str, own: Sequence[str], asked: Collection[str]) -> float:
        """How surely a question word matching ``own`` (the content words of ``rel``'s
        ``phrase``) by lemma names ``rel`` when that phrase is its own one-word name
        (``type``, not *subdivision type*, which it only half names): :data:`EXACT`
        shared among the relations with such a name — 0 for any other phrase, or when
        the question (``asked``: the lemma keys of its open words) also has another
        word of a longer name holding it (*plays ... for country* names ``plays for
        country``, not ``country``): the shared-word weights then decide. The linker
        and the chain search (``word_scores``) both read it here."""
        if len(own) != 1 or phrase not in self.named[rel]:
            return 0.0
        key = lemma_key(own[0])
        n = self._exact.get(key)
        if not n or any(other & asked for other in self._longer[key]):
            return 0.0
        return EXACT / n

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """The encoder's vectors for ``texts``, each text encoded once per linker: a
        reading encodes a question's spans, then its single words again (and the
        agents of one retrieval read the same question)."""
        assert self.encoder is not None
        cache: dict[str, np.ndarray] = self.__dict__.setdefault("_encoded", {})
        # Read into a local dict first: another agent's thread may clear the cache.
        found = {t: v for t in texts if (v := cache.get(t)) is not None}
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            if len(cache) > ENCODED_KEPT:
                cache.clear()
            for text, vector in zip(missing, self.encoder.encode(missing), strict=True):
                found[text] = cache[text] = vector
        if not texts:
            return self.encoder.encode([])
        return np.stack([found[t] for t in texts])

    def reach(self, words: Sequence[str], positions: Sequence[int]) -> dict[int, dict[float, int]]:
        """Per position and match strength, how many relations' phrases have a word it
        matches that well or better (by lemma 1.0; by derivation or compound head
        less): a word that matches many by a derived form (*form*: ``formal``,
        ``formally``, ``format``) tells none of them apart, however few phrases share
        each of those words, while its own lemma (``formed in``) competes only with
        the phrases that have it too. Among 10 relations this is the phrases' own
        spread; among 5,000 free-text ones nearly every word matches some phrase by a
        derived form alone."""
        out: dict[int, dict[float, int]] = {}
        for i in positions:
            best: dict[str, float] = {}
            for w, owners in self._owners.items():
                m = word_match(words[i], w)
                if m:
                    for rel in owners:
                        best[rel] = max(best.get(rel, 0.0), m)
            out[i] = {m: sum(b >= m for b in best.values()) for m in set(best.values())}
        return out

    def ambiguity(self, reach: dict[int, dict[float, int]], i: int, match: float) -> int:
        """How many relations the word at ``i`` matches at least as well as ``match``.
        A match by spelling alone (:data:`~ark.words.SPELLED`: a cognate,
        ``parti`` for *party*) is the word itself written otherwise: it is as ambiguous
        as the word's best match, not counted among every relation spelled alike
        (``party``, ``partof``, ``parti`` are one word in three spellings)."""
        levels = reach.get(i, {})
        if match == SPELLED and levels:
            match = max(levels)
        return max(1, levels.get(match, 1))

    # -- the two signals --------------------------------------------------------------

    def _lexical(self, words: Sequence[str], masked: set[int]) -> list[Mention]:
        """Per relation, its best phrase: the share of the phrase's content words the
        question has (by lemma), each word weighted by how few relations' phrases
        share it (``plays`` is in three labels, ``club`` in one) and by how few
        relations the question's word matches (:meth:`reach`), or one word's match so
        weighted when it carries the phrase alone. A phrase the question does not
        name (:func:`~ark.words.names_phrase`: too few of its words, as one
        word of ``began formal museum operations in``) gives no mention: that word
        would carry it alone. Every matching position is kept."""
        out = []
        open_positions = [
            i for i in range(len(words)) if i not in masked and words[i] not in STOPWORDS
        ]
        reach = self.reach(words, open_positions)
        asked = {lemma_key(words[i]) for i in open_positions}
        for rel, phrases in self._phrase_words.items():
            best: Mention | None = None
            for phrase, own in phrases:
                if not own:
                    continue
                total, single, where, explained = 0.0, 0.0, set(), 0
                weights = {w: 1 / self._spread.get(lemma_key(w), 1) for w in own}
                for w in own:
                    matches = [(word_match(words[i], w), i) for i in open_positions]
                    matches = [(m, i) for m, i in matches if m > 0]
                    if not matches:
                        continue
                    explained += 1
                    score = max(
                        m * min(weights[w], 1 / self.ambiguity(reach, i, m)) for m, i in matches
                    )
                    total += score
                    single = max(single, score)
                    where.update(i for _, i in matches)
                if not names_phrase(explained, len(own)):
                    continue
                score = max(total / len(own), single)
                if any(m == 1.0 for m, _ in matches):  # by lemma
                    score = max(score, self.exact(rel, phrase, own, asked))
                if where and (best is None or score > best.score):
                    best = Mention(rel, tuple(sorted(where)), score, phrase, "lexical")
            if best is not None:
                out.append(best)
        for mention in self.joint(words, masked):
            own = next((m for m in out if m.relation == mention.relation), None)
            if own is None or mention.score > own.score:
                out = [m for m in out if m is not own] + [mention]
        return out

    def joint(self, words: Sequence[str], masked: set[int]) -> list[Mention]:
        """The phrases of several words the question has all of, close together (no
        wider than the phrase and one word more): each scored by its weakest word's
        match over the number of relations whose phrases have all of its words."""
        out = []
        open_positions = [
            i for i in range(len(words)) if i not in masked and words[i] not in STOPWORDS
        ]
        for rel, phrases in self._joint.items():
            for phrase, own, width, shared in phrases:
                found = [
                    [(i, m) for i in open_positions if (m := word_match(words[i], w)) > 0]
                    for w in own
                ]
                if not all(found):
                    continue
                for first, m0 in found[0]:
                    picked = [(first, m0)]
                    for others in found[1:]:
                        picked.append(min(others, key=lambda im: abs(im[0] - first)))
                    at = sorted({i for i, _ in picked})
                    if len(at) == len(own) and at[-1] - at[0] <= width:
                        score = min(m for _, m in picked) / shared
                        out.append(Mention(rel, tuple(at), score, phrase, "lexical"))
                        break
        return out

    def _dense(self, words: Sequence[str], masked: set[int]) -> list[Mention]:
        if self.encoder is None or self._phrase_vectors is None or not len(self._phrase_owner):
            return []
        spans = [
            (i, j)
            for i in range(len(words))
            for j in range(i + 1, min(len(words), i + MAX_SPAN) + 1)
            if not masked & set(range(i, j))
            and words[i] not in STOPWORDS
            and words[j - 1] not in STOPWORDS
        ]
        if not spans:
            return []
        vectors = self.encode([" ".join(words[i:j]) for i, j in spans])
        sims = vectors @ self._phrase_vectors.T  # spans x phrases
        low, high = DENSE_RANGE
        best: dict[str, Mention] = {}
        for p, (rel, phrase) in enumerate(self._phrase_owner):
            s = int(np.argmax(sims[:, p]))
            score = float(np.clip((sims[s, p] - low) / (high - low), 0.0, 1.0))
            if score > 0 and (rel not in best or score > best[rel].score):
                i, j = spans[s]
                best[rel] = Mention(rel, tuple(range(i, j)), score, phrase, "dense")
        return list(best.values())

    def _dense_types(
        self, words: Sequence[str], covered: set[int]
    ) -> list[tuple[str, tuple[int, ...]]]:
        """Node types named by a word no relation or type label accounts for (``films``
        for ``movie``), by the same rescaled similarity as relations."""
        if self.encoder is None or self._type_vectors is None:
            return []
        at = [i for i, w in enumerate(words) if i not in covered and w not in STOPWORDS]
        if not at:
            return []
        sims = self.encode([words[i] for i in at]) @ self._type_vectors.T
        low, high = DENSE_RANGE
        found: dict[str, list[int]] = {}
        for row, i in enumerate(at):
            p = int(np.argmax(sims[row]))
            if (sims[row, p] - low) / (high - low) >= self.threshold:
                found.setdefault(self._type_owner[p][0], []).append(i)
        return [(name, tuple(pos)) for name, pos in found.items()]

    # -- the reading ------------------------------------------------------------------

    def link(
        self,
        question: str,
        *,
        entities: Sequence[str] = (),
        spans: Sequence[tuple[int, int]] = (),
        dense: bool = True,
    ) -> Linking:
        """Rank the relations ``question`` uses; ``entities`` are node names it contains
        and ``spans`` the word positions ``start:end`` where names were found (written
        otherwise: *Kalama's*, a partial name); their words name no relation.
        ``dense=False`` reads labels and aliases only."""
        words = tokens(question)
        masked = entity_positions(words, entities)
        masked |= {i for start, end in spans for i in range(start, end)}
        lexical = self._lexical(words, masked)
        types = self._lexical_types(words, masked)
        if not dense:
            return self._reading(question, words, masked, lexical, types)
        # The dense signals read only the words no label or alias shares: where a label
        # matched, a sentence encoder's looser similarity adds noise, not knowledge. A
        # word naming a node type (``films``) is what is asked for, not a relation.
        taken = masked | {i for m in lexical for i in m.positions}
        types += self._dense_types(words, taken | {i for _, at in types for i in at})
        taken |= {i for _, at in types for i in at}
        return self._reading(question, words, masked, lexical + self._dense(words, taken), types)

    def _lexical_types(
        self, words: Sequence[str], masked: set[int]
    ) -> list[tuple[str, tuple[int, ...]]]:
        """Node types a word names by label or alias (one-word phrases)."""
        types = []
        for name, phrases in self._type_words:
            at = tuple(
                i
                for i, w in enumerate(words)
                if i not in masked
                and any(len(p) == 1 and word_match(w, p[0]) == 1.0 for p in phrases)
            )
            if at:
                types.append((name, at))
        return types

    def _reading(
        self,
        question: str,
        words: list[str],
        masked: set[int],
        mentions: list[Mention],
        types: list[tuple[str, tuple[int, ...]]],
    ) -> Linking:
        by_rel: dict[str, list[Mention]] = {}
        for m in mentions:
            by_rel.setdefault(m.relation, []).append(m)
        links = [
            Link(rel, max(m.score for m in ms), tuple(sorted(ms, key=lambda m: -m.score)))
            for rel, ms in by_rel.items()
        ]
        links.sort(key=lambda link: -link.score)
        covered = set(masked) | {i for _, at in types for i in at}
        for link in links:
            covered.update(
                i for m in link.mentions if m.score > self.threshold for i in m.positions
            )
        unaccounted = tuple(
            w
            for i, w in enumerate(words)
            if i not in covered and w not in STOPWORDS and not w.isdigit()
        )
        return Linking(
            question,
            tuple(words),
            tuple(links),
            tuple(types),
            unaccounted,
            self.threshold,
            frozenset(masked),
        )
