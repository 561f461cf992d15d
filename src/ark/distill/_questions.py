"""Questions from relation paths: general templates over the described schema.

Nothing here is written for one dataset: a hop is phrased from its relation's label
and, half the time, one of its noun aliases (``spouse`` for
``__people__person__spouse``, ``club`` for ``plays_in_club``), a stored reverse as
its forward relation read the other way, and the target type's label made plural by
``inflect``. ``--templates FILE`` replaces or extends the phrasings.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ark.errors import ArkError
from ark.graph import DescribedSchema


@dataclass(frozen=True)
class Hop:
    """One step of a path: a relation followed in a direction to a node type."""

    relation: str
    direction: str  # "out": current -relation-> next; "in": next -relation-> current
    target_type: str


def _spaced(name: str) -> str:
    """A schema name as words: its underscores as spaces (``has_genre`` -> ``has genre``);
    not ``ark.linking._words``, which compares a question's words by lemma."""
    return name.replace("_", " ").strip()


def _noun(name: str) -> str:
    """A relation as a noun: its words without a leading verb ("has genre" -> "genre")."""
    words = _spaced(name).split()
    if len(words) > 1 and words[0].lower() in {"has", "have", "is", "in", "of"}:
        words = words[1:]
    return " ".join(words)


def _plural(phrase: str) -> str:
    """The phrase with its last word made plural (``person`` -> ``people``); a word
    already plural (``votes``) is kept."""
    import inflect

    engine = inflect.engine()
    head, _, last = phrase.rpartition(" ")
    if not last or engine.singular_noun(last):
        return phrase
    return f"{head} {engine.plural_noun(last)}".strip()


def _is_noun_phrase(phrase: str) -> bool:
    """A phrase that reads as a noun (``club``, ``national team``): its last word can be
    a noun and is no function word (``plays in`` and ``years old`` are not)."""
    from lemminflect import getAllLemmas

    from ark.linking import STOPWORDS, tokens

    words = tokens(phrase)
    if not words or words[-1] in STOPWORDS:
        return False
    parts = getAllLemmas(words[-1])
    return "NOUN" in parts and "ADJ" not in parts


def hop_words(
    hop: Hop, described: DescribedSchema | None, rng: random.Random
) -> tuple[str, str, str, str]:
    """(relation words, relation as a noun, direction, target type words) for phrasing
    a hop: the label (a reverse copy reads as its forward relation, the other way) and a
    noun alias in place of the noun (always when the label is a phrase such as ``plays
    in club``, else half the time)."""
    words, direction = _spaced(hop.relation), hop.direction
    noun, target = _noun(hop.relation), hop.target_type
    doc = described.relation(hop.relation) if described else None
    if doc is not None:
        if doc.inverse_of and (forward := described.relation(doc.inverse_of)) is not None:
            doc, direction = forward, ("in" if direction == "out" else "out")
        words = noun = doc.label
        if relation_shape(words) != "noun":
            noun = _noun(words)
        nouns = [a for a in doc.aliases if _is_noun_phrase(a)]
        # A label of several words that is no passive ("plays in club") reads badly as
        # a noun: a noun alias ("club") then always; otherwise half the time.
        wordy = len(doc.label.split()) > 1 and relation_shape(doc.label) != "passive"
        if nouns and (wordy or rng.random() < 0.5):
            noun = rng.choice(nouns)
        kind = described.type(hop.target_type)
        target = kind.label if kind is not None else target
    return words, noun, direction, target


#: General phrasings of one hop applied to a phrase ``{x}``; ``{T}`` is the plural of
#: the target type, ``{r}`` the relation in words, ``{n}`` the relation as a noun.
#: They are chosen by the shape of the relation's name, which is what keeps nested
#: hops readable ("the genre of the movies directed by X", not "the movies linked
#: to X by directed by"): a passive verb ("directed_by"), an attribute ("has_genre",
#: "in_language") or a plain noun ("starred_actors"). Nothing here names one dataset.
SHAPED_TEMPLATES: dict[str, dict[str, list[str]]] = {
    "passive": {
        "in": ["the {T} {r} {x}", "the {T} that were {r} {x}"],
        "out": ["the {T} that {x} was {r}", "the {T} who {x} is {r}"],
    },
    "attribute": {
        "in": ["the {T} whose {n} is {x}", "the {T} with {n} {x}"],
        "out": ["the {n} of {x}", "the {T} that are the {n} of {x}"],
    },
    "noun": {
        "in": ["the {T} whose {n} include {x}", "the {T} that have {x} among their {n}"],
        "out": ["the {n} of {x}", "the {T} that are the {n} of {x}"],
    },
}


def relation_shape(name: str) -> str:
    """``passive`` (ends in "by"), ``attribute`` (starts with has/in/of/is) or ``noun``."""
    words = _spaced(name).lower().split()
    if len(words) > 1 and words[-1] == "by":
        return "passive"
    if len(words) > 1 and words[0] in {"has", "have", "is", "in", "of"}:
        return "attribute"
    return "noun"


FRAMES = ["Which are {p}?", "What are {p}?", "Find {p}.", "List {p}.", "{p}?"]

#: One constraint of an intersection as a relative clause after "the {T}" (same
#: placeholders and shapes as ``SHAPED_TEMPLATES``): two of them joined by "and" make
#: "the players whose club is X and whose country is Y", phrased like the chains.
CLAUSES: dict[str, dict[str, list[str]]] = {
    "passive": {
        "in": ["{r} {x}", "that were {r} {x}"],
        "out": ["that {x} was {r}"],
    },
    "attribute": {
        "in": ["whose {n} is {x}", "with {n} {x}"],
        "out": ["that are the {n} of {x}"],
    },
    "noun": {
        "in": ["whose {n} include {x}", "with {x} among their {n}", "with {n} {x}"],
        "out": ["that are the {n} of {x}", "that are {x}'s {n}"],
    },
}


def load_templates(path: str | Path | None) -> dict[str, Any]:
    """``--templates FILE``: JSON with optional ``in``/``out`` lists (general phrasings),
    ``frames``, and per-relation overrides ``{"relations": {"rel": {"in": [...],
    "out": [...]}}}``; placeholders ``{x}`` (the phrase so far), ``{T}`` (target type, plural),
    ``{r}`` (relation in words), ``{n}`` (relation as a noun); frames: ``{p}``."""
    if path is None:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ArkError(f"{path}: not a readable JSON templates file ({exc})") from exc
    if not isinstance(data, dict):
        raise ArkError(f"{path}: templates must be a JSON object")
    return data


def hop_phrase(
    hop: Hop,
    x: str,
    rng: random.Random,
    templates: dict[str, Any],
    described: DescribedSchema | None = None,
) -> str:
    words, noun, direction, target = hop_words(hop, described, rng)
    per_rel = (templates.get("relations") or {}).get(hop.relation) or {}
    options = (
        per_rel.get(hop.direction)
        or templates.get(direction)
        or SHAPED_TEMPLATES[relation_shape(words)][direction]
    )
    return rng.choice(options).format(x=x, T=_plural(target), r=words, n=noun)


def chain_question(
    anchor: str,
    anchor_type: str,
    hops: Sequence[Hop],
    rng: random.Random,
    templates: dict,
    described: DescribedSchema | None = None,
) -> str:
    kind = described.type(anchor_type) if described else None
    label = kind.label if kind is not None else anchor_type
    phrase = f"{label} {anchor}" if rng.random() < 0.3 and label != "entity" else anchor
    for hop in hops:
        phrase = hop_phrase(hop, phrase, rng, templates, described)
    frame = rng.choice(templates.get("frames") or FRAMES)
    text = frame.format(p=phrase)
    return text[0].upper() + text[1:]


def intersection_question(
    anchors: Sequence[str],
    hops: Sequence[Hop],
    rng: random.Random,
    templates: dict,
    described: DescribedSchema | None = None,
) -> str:
    """Two constraints on one target set (``hops[i]`` leads from ``anchors[i]`` to
    it), each phrased as a clause from its relation's label or a noun alias: "Which
    are the players whose position is Forward and whose country is Mexico?"."""
    clauses, target = [], ""
    for anchor, hop in zip(anchors, hops, strict=True):
        words, noun, direction, target = hop_words(hop, described, rng)
        options = CLAUSES[relation_shape(words)][direction]
        clauses.append(rng.choice(options).format(x=anchor, r=words, n=noun))
    if rng.random() < 0.5:
        clauses.reverse()
    phrase = f"the {_plural(target)} {' and '.join(clauses)}"
    frame = rng.choice(templates.get("frames") or FRAMES)
    text = frame.format(p=phrase)
    return text[0].upper() + text[1:]
