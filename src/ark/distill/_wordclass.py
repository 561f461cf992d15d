"""How a relation's label reads as English: its word class, from a general lexicon.

A synthetic question has to say a relation the way a person would, whatever shape its
name has: ``writes`` is a verb ("what does X write", "who writes X"), ``written_by`` a
passive with its agent ("who wrote X", "what did X write"), ``spouse`` and
``place_of_death`` nouns ("what is the spouse of X", "whose spouse is X"),
``married_to`` a state ("who is X married to"), ``member_of`` a role ("what is X a
member of", "the members of X"). Splitting a name into words is not enough: "the
writes of X" is what templates that know only the name's surface write.

The class of each word comes from ``lemminflect``'s lexicon (a core dependency: the
relation linker reads question words with it), so the reading needs no model, is the
same on every install, and holds no word list of any dataset. Ambiguous words follow
English usage in relation names: a form that is both a noun and a verb reads as a verb
only in its inflected forms (``plays in club``, ``acted in``) and as a noun in its base
form (``release year``, ``place of death``); a ``-ed`` form that is also an adjective
(``married to``, ``based in``) reads as a state, one that is not (``acted in``,
``starred actors``) as an active verb in the past. The one trade-off this makes: a
regular participle the lexicon knows only as a verb (``located in``) reads as active
("the places that X located in"); a described label (``is located in``) or a
``--templates`` file fixes such a relation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

#: Copulas that open a label (``is_in_country``, ``isMarriedTo``).
_COPULAS = frozenset({"is", "are", "was", "were", "be", "been", "being"})
#: Words that open a label naming an attribute (``has_genre``, ``with_tag``).
_HAVE = frozenset({"has", "have", "had", "with"})
#: Prepositions: one that opens a label names an attribute (``in_language``); one that
#: ends it belongs to the verb, state or role before it (``plays_in``, ``member_of``).
PREPOSITIONS = frozenset(
    {
        "about", "across", "after", "against", "among", "as", "at", "before", "behind",
        "between", "by", "during", "for", "from", "in", "inside", "into", "near", "of",
        "off", "on", "onto", "over", "per", "through", "to", "toward", "towards",
        "under", "until", "upon", "via", "with", "within", "without",
    }
)  # fmt: skip


@dataclass(frozen=True)
class LabelReading:
    """A relation label read by word class. ``kind`` is one of:

    - ``agent``: a passive with its agent (``written by``): the tail ``verb``-ed the head;
    - ``verb``: an active verb (``writes``, ``acted in``, ``plays in club``,
      ``starred actors``) with its preposition ``prep`` and object noun ``obj``;
    - ``state``: a copula or adjective with a preposition (``married to``, ``part of``);
      ``reduced`` when it follows a noun without "that are" (``the people married to X``);
    - ``role``: a noun with a preposition (``member of``, ``capital of``);
    - ``noun``: a noun phrase (``spouse``, ``place of death``; ``genre`` from
      ``has genre``, ``language`` from ``in language``, ``age`` from ``is aged``).
    """

    kind: str
    words: str
    verb: str = ""
    past: bool = False
    prep: str = ""
    obj: str = ""
    noun: str = ""
    plural: bool = False
    pred: str = ""
    reduced: bool = False


@lru_cache(maxsize=4096)
def _lemmas(word: str) -> dict[str, tuple[str, ...]]:
    from lemminflect import getAllLemmas

    return dict(getAllLemmas(word))


@lru_cache(maxsize=4096)
def inflect_verb(lemma: str, tag: str) -> str:
    """``lemma`` in the Penn tag's form (``write``, ``VBD`` -> ``wrote``); an irregular
    verb missing from the lexicon keeps its lemma rather than failing."""
    from lemminflect import getInflection

    if lemma == "be":
        return {"VBZ": "is", "VBP": "are", "VBD": "was", "VBN": "been"}.get(tag, "be")
    forms = getInflection(lemma, tag=tag)
    return forms[0] if forms else lemma


def _verb_tags(word: str) -> tuple[str, set[str]] | None:
    """(lemma, the verb tags ``word`` has among VB, VBZ, VBD, VBN, VBG); None if the
    lexicon has no verb reading of it."""
    lemmas = _lemmas(word).get("VERB")
    if not lemmas:
        return None
    lemma = lemmas[0]
    tags = {t for t in ("VB", "VBZ", "VBD", "VBN", "VBG") if inflect_verb(lemma, t) == word}
    return lemma, tags or {"VB"}


def is_plural_noun(word: str) -> bool:
    """``tags``, ``actors``, ``children``: a noun whose lemma differs from it."""
    from lemminflect import getInflection

    nouns = _lemmas(word).get("NOUN")
    if not nouns or nouns[0] == word:
        return False
    return word in (getInflection(nouns[0], tag="NNS") or ())


def _noun(words: Sequence[str], label: str) -> LabelReading:
    """A noun phrase; its head (the word before "of", else the last) sets its number."""
    head = words[words.index("of") - 1] if "of" in words[1:] else words[-1]
    return LabelReading("noun", label, noun=" ".join(words), plural=is_plural_noun(head.lower()))


def _reads_as_verb(word: str, rest: Sequence[str]) -> tuple[str, bool] | None:
    """(lemma, past) when ``word`` opens a label as an active verb, else None."""
    found = _verb_tags(word)
    if found is None:
        return None
    lemma, tags = found
    classes = _lemmas(word)
    nouny = "NOUN" in classes or "ADJ" in classes
    if "VBZ" in tags:  # "writes"; "plays" alone is a noun, "plays in club" a verb
        return (lemma, False) if (rest or not nouny) else None
    if "VBD" in tags:  # "wrote", "acted in"; "married to" and "based in" are states
        return None if "ADJ" in classes else (lemma, True)
    if "VBN" in tags or "VBG" in tags:  # "written", "born in": a state, not an action
        return None
    return None if nouny else (lemma, False)  # "cite"; "release year" is a noun


def _words(label: str) -> list[str]:
    """The label's words, lower case but for acronyms; a lone ``s`` that a name's
    ``_s`` left (Freebase ``spouse_s``) dropped."""
    words = re.findall(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?", label)
    # A name all in capitals (``PLACE_OF_BIRTH``, ``SPOUSE``) is no acronym; one
    # capital word the lexicon does not know (``ISBN``) is.
    shouting = all(w.isupper() or w.isdigit() for w in words) and (
        len(words) > 1 or bool(words and _lemmas(words[0].lower()))
    )
    words = [w if (w.isupper() and len(w) > 1 and not shouting) else w.lower() for w in words]
    while len(words) > 1 and words[-1] == "s":
        words.pop()
    return words


def read_label(label: str) -> LabelReading:
    """The word-class reading of a relation label (its words, as
    :func:`ark.graph.relation_label` gives them or a described schema states them)."""
    words = _words(label)
    text = " ".join(words) or label
    if not words:
        return LabelReading("noun", text, noun=text)
    copula = len(words) > 1 and words[0] in _COPULAS
    if copula:
        words = words[1:]
    first, rest = words[0], words[1:]
    # "written by", "is directed by": the tail is the agent of the verb.
    if len(words) >= 2 and words[-1] == "by":
        found = _verb_tags(words[-2])
        if found and found[1] & {"VBN", "VBD"}:
            return LabelReading("agent", text, verb=found[0], prep="by")
    if rest and first in _HAVE:  # "has genre", "with tag"
        return _noun(rest, text)
    if rest and first in PREPOSITIONS and rest[0] not in PREPOSITIONS:  # "in language"
        return _noun(rest, text)
    if copula and not rest:
        # "is aged": a participle whose verb is a noun too reads as that noun (age).
        found = _verb_tags(first)
        if found and found[0] != first and "NOUN" in _lemmas(found[0]):
            return _noun([found[0]], text)
        return LabelReading("state", text, pred=first, reduced=found is not None)
    verb = None if copula else _reads_as_verb(first, rest)
    if verb is not None:
        prep, obj = "", list(rest)
        if obj and obj[0] in PREPOSITIONS:
            prep, obj = obj[0], obj[1:]
        obj_plural = bool(obj) and is_plural_noun(obj[-1])
        return LabelReading(
            "verb", text, verb=verb[0], past=verb[1], prep=prep, obj=" ".join(obj),
            plural=obj_plural,
        )  # fmt: skip
    if rest and words[-1] in PREPOSITIONS:
        head, inflected = words[-2], {"VBZ", "VBD", "VBN", "VBG"}
        head_verb = _verb_tags(head)
        if ("NOUN" in _lemmas(head) or not _lemmas(head)) and not (
            head_verb and head_verb[1] & inflected
        ):
            # "member of", "capital of", "is part of": a role held in the tail.
            return LabelReading("role", text, noun=" ".join(words[:-1]), prep=words[-1])
        # "married to", "born in", "is located in": a state of the head.
        participle = _verb_tags(first) is not None or "ADJ" in _lemmas(first)
        return LabelReading("state", text, pred=" ".join(words), reduced=participle)
    return _noun(words, text)
