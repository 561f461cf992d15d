"""Questions from relation paths: each step phrased by the word class of its label.

A sampled path is a list of :class:`RelationStep` (relation, direction, target type).
Each step is said the way its label reads in English (:mod:`ark.distill._wordclass`):
a verb ("what does X write", "who writes X"), a passive with its agent ("who wrote X",
"the movies written by X"), a state ("who is X married to"), a role ("what is X a
member of") or a noun ("what is the spouse of X", "whose spouse is X"). The label is
the described schema's (``ark index describe`` or a schema file, whose words win) and
otherwise the name's own words (:func:`ark.graph.relation_label`: the last segment of
``people.person.spouse_s``, camelCase split, an ``_inverse``/``~`` copy read as its
forward relation the other way); half the time a noun alias of the described schema
replaces it (``spouse`` for ``__people__person__spouse``). Target types are made plural
by ``inflect``. Nested steps are noun phrases ("the genre of the movies directed by
X"); the last step is, half the time, a direct question. ``--templates FILE`` replaces
or extends the phrasings. Nothing here is written for one dataset's names.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ark.distill._wordclass import LabelReading, inflect_verb, is_plural_noun, read_label
from ark.errors import ArkError
from ark.graph import DescribedSchema, relation_label


@dataclass(frozen=True)
class RelationStep:
    """One step of a sampled relation path: a relation followed in a direction to a
    node type (not :class:`ark.Hop`, a step of an answer's evidence path)."""

    relation: str
    direction: str  # "out": current -relation-> next; "in": next -relation-> current
    target_type: str


def _spaced(name: str) -> str:
    """A schema name as words: its underscores as spaces (``has_genre`` -> ``has genre``);
    not ``ark.words``, which compares a question's words by lemma."""
    return name.replace("_", " ").strip()


def _plural(phrase: str) -> str:
    """The phrase with its last word made plural (``person`` -> ``people``); a word
    already plural (``votes``) is kept."""
    import inflect

    engine = inflect.engine()
    head, _, last = phrase.rpartition(" ")
    if not last or engine.singular_noun(last):
        return phrase
    return f"{head} {engine.plural_noun(last)}".strip()


def _singular(phrase: str) -> str:
    """The phrase with a plural last word made singular (``tags`` -> ``tag``)."""
    import inflect

    head, _, last = phrase.rpartition(" ")
    one = inflect.engine().singular_noun(last) if last else False
    return f"{head} {one}".strip() if one else phrase


def _article(noun: str) -> str:
    import inflect

    return inflect.engine().a(noun)


def _is_noun_phrase(phrase: str) -> bool:
    """A phrase that reads as a noun (``club``, ``national team``): its last word can be
    a noun and is no function word (``plays in`` and ``years old`` are not)."""
    from lemminflect import getAllLemmas

    from ark.words import STOPWORDS, tokens

    words = tokens(phrase)
    if not words or words[-1] in STOPWORDS:
        return False
    parts = getAllLemmas(words[-1])
    return "NOUN" in parts and "ADJ" not in parts


#: Words whose type names people: a question about them asks "who", not "which".
PERSON_TYPES = frozenset({"person", "people", "human", "individual"})


@dataclass(frozen=True)
class StepWords:
    """A step as it is phrased: the label's reading, the direction it is read in (a
    stored reverse reads as its forward relation the other way) and the target type's
    label."""

    reading: LabelReading
    direction: str
    target: str


def step_words(
    step: RelationStep, described: DescribedSchema | None, rng: random.Random
) -> StepWords:
    """How ``step`` is phrased: the described label read by word class (or the name's
    words), a stored reverse flipped to its forward relation, and half the time a noun
    alias of the described schema in place of the label."""
    direction, target, aliases = step.direction, step.target_type, ()
    flip = "in" if direction == "out" else "out"
    doc = described.relation(step.relation) if described else None
    if doc is not None:
        forward = described.relation(doc.inverse_of) if doc.inverse_of else None
        if forward is not None:
            doc, direction = forward, flip
        elif doc.inverse and doc.label == relation_label(step.relation).text:
            direction = flip  # ``writes_inverse`` with no ``writes``: its words, reversed
        label, aliases = doc.label, doc.aliases
        kind = described.type(step.target_type)
        target = kind.label if kind is not None else target
    else:
        name = relation_label(step.relation)
        label, direction = name.text, (flip if name.inverse else direction)
    reading = read_label(label)
    nouns = [a for a in aliases if _is_noun_phrase(a)]
    if nouns and rng.random() < 0.5:
        noun = rng.choice(nouns)
        last = noun.split()[-1].lower()
        reading = LabelReading("noun", noun, noun=noun, plural=is_plural_noun(last))
    return StepWords(reading, direction, target)


def _slots(words: StepWords, x: str, x_plural: bool, anchor: bool = True) -> dict[str, str]:
    """The placeholders of a phrasing (see :data:`NOUN_PHRASES`); ``anchor``: ``x`` is
    a name, not a phrase of its own."""
    r = words.reading
    past = r.past or r.kind == "agent"
    v = r.verb or "be"
    noun = r.noun or r.obj or r.words
    return {
        "x": x,
        "T": _plural(words.target),
        "r": r.words,
        "n": noun,
        "ns": _singular(noun),
        "np": _plural(noun),
        "an": _article(noun),
        "has": "include" if r.plural else "is",
        "v": v,
        "vx": inflect_verb(v, "VBD" if past else ("VBP" if x_plural else "VBZ")),
        "vs": inflect_verb(v, "VBD" if past else "VBZ"),
        "vt": inflect_verb(v, "VBD" if past else "VBP"),
        "vn": inflect_verb(v, "VBN"),
        "do": "did" if past else ("do" if x_plural else "does"),
        "be": "are" if x_plural else "is",
        "was": "were" if x_plural else "was",
        "p": r.prep,
        # The object noun before a name ("wear number 20"), not a plural one ("star
        # Jane Doe", not "star actors Jane Doe") nor before a phrase ("play for the
        # country of X", not "play for country the country of X").
        "o": r.obj if r.obj and not r.plural and anchor else "",
        "O": r.obj or _plural(words.target),
        "pred": r.pred,
    }


#: Noun phrases for one step applied to the phrase so far ``{x}``, by the label's
#: word class and the direction (``out``: the answers are the relation's tails).
#: Placeholders: ``{T}`` the target type, plural; ``{r}`` the label; ``{n}``/``{ns}``/
#: ``{np}``/``{an}`` its noun as given, singular, plural, with an article; ``{has}``
#: "is" or "include" by the noun's number; ``{v}``, ``{vx}`` (agreeing with ``{x}``),
#: ``{vs}``/``{vt}`` (agreeing with a singular/plural subject), ``{vn}`` (participle)
#: the verb; ``{do}``, ``{be}``, ``{was}`` agreeing with ``{x}``; ``{p}`` the
#: preposition, ``{o}``/``{O}`` the object noun (``{O}``: else the target type),
#: ``{pred}`` a state's words. Empty slots leave no double spaces.
NOUN_PHRASES: dict[str, dict[str, list[str]]] = {
    "agent": {
        "out": ["the {T} that {vs} {x}", "the {T} that {x} {was} {vn} by"],
        "in": ["the {T} {vn} by {x}", "the {T} that {x} {vs}"],
    },
    "verb": {
        "out": ["the {O} that {x} {vx} {p}"],
        "in": ["the {T} that {vt} {p} {o} {x}"],
    },
    "state": {
        "out": ["the {T} that {x} {be} {pred}"],
        "in": ["the {T} that are {pred} {x}"],
    },
    "role": {
        "out": ["the {T} that {x} {be} {an} {p}"],
        "in": ["the {np} {p} {x}", "the {T} that are {np} {p} {x}"],
    },
    "noun": {
        "out": ["the {n} of {x}", "the {T} that are the {n} of {x}"],
        "in": ["the {T} whose {n} {has} {x}", "the {T} with {ns} {x}"],
    },
}

#: One constraint of an intersection as a relative clause after "the {T}" (same
#: placeholders as :data:`NOUN_PHRASES`): two of them joined by "and" make "the
#: players that play in club X and whose age is 27", phrased like the chains. Each is
#: a full clause ("that were directed by X", not "directed by X"), so that any two join.
CLAUSES: dict[str, dict[str, list[str]]] = {
    "agent": {"out": ["that {vs} {x}"], "in": ["that were {vn} by {x}", "that {x} {vs}"]},
    "verb": {"out": ["that {x} {vx} {p}"], "in": ["that {vt} {p} {o} {x}"]},
    "state": {"out": ["that {x} {be} {pred}"], "in": ["that are {pred} {x}"]},
    "role": {"out": ["that {x} {be} {an} {p}"], "in": ["that are {np} {p} {x}"]},
    "noun": {"out": ["that are the {n} of {x}"], "in": ["whose {n} {has} {x}", "with {ns} {x}"]},
}


def _options(words: StepWords, table: dict[str, dict[str, list[str]]], anchor: bool) -> list[str]:
    """The table's phrasings for a step and those its reading alone allows: a passive
    for a plain transitive verb ("the papers cited by X"), the object noun alone
    ("the club of X"), a reduced relative for a participle ("the people married to
    X"), plurals "among their tags", a possessive after a name ("X's spouse")."""
    r, d = words.reading, words.direction
    options = [t for t in table[r.kind][d] if anchor or "{ns} {x}" not in t]
    clause = table is CLAUSES
    lead = "" if clause else "the {T} "
    if r.kind == "verb":
        if d == "out" and not r.prep and not r.obj:
            options.append(lead + ("that were {vn} by {x}" if clause else "{vn} by {x}"))
        if d == "out" and r.obj and not clause:
            options.append("the {O} of {x}")
        if d == "in" and r.prep and r.obj:
            options.append(lead + "that {vt} {p} {x}")
    if r.kind == "state" and d == "in" and r.reduced and not clause:
        options.append(lead + "{pred} {x}")
    if r.kind == "noun" and d == "in":
        among = "with {x} among their {n}" if r.plural else "that have {x} as their {n}"
        options.append(lead + among)
    if r.kind == "noun" and d == "out" and anchor:
        options.append("that are {x}'s {n}" if clause else "{x}'s {n}")
    return options


def _fill(template: str, slots: dict[str, str]) -> str:
    return " ".join(template.format(**slots).split())


def _is_person(target: str) -> bool:
    words = target.lower().split()
    return bool(words) and words[-1] in PERSON_TYPES


def _wh(words: StepWords, rng: random.Random) -> tuple[str, bool]:
    """How a question asks for the answers: "who", "which movies" or "what"; and
    whether the verb after it is plural ("which movies star X", "who stars in X")."""
    target = words.target
    if _is_person(target):
        return ("who", False) if rng.random() < 0.7 else (f"which {_plural(target)}", True)
    if not target or target.lower() == "entity":
        return "what", False
    return f"{rng.choice(['which', 'what'])} {_plural(target)}", True


def direct_question(
    words: StepWords, x: str, x_plural: bool, rng: random.Random, anchor: bool = False
) -> str:
    """The last step as a question of its own: "Who wrote X?", "What does X write?",
    "What club does X play in?", "Who is X married to?", "What is the spouse of X?",
    "Whose spouse is X?"."""
    r, d = words.reading, words.direction
    s = _slots(words, x, x_plural, anchor)
    wh, many = _wh(words, rng)
    subject_verb = s["vt"] if many else s["vs"]
    be = "are" if many else "is"
    if r.kind == "agent":
        q = f"{wh} {s['vs']} {x}" if d == "out" else f"{wh} did {x} {s['v']}"
    elif r.kind == "verb" and d == "out":
        what = f"{rng.choice(['what', 'which'])} {r.obj}" if r.obj else wh
        q = f"{what} {s['do']} {x} {s['v']} {r.prep}"
    elif r.kind == "verb":
        q = f"{wh} {subject_verb} {r.prep} {s['o']} {x}"
    elif r.kind == "state":
        q = f"{wh} {s['be']} {x} {r.pred}" if d == "out" else f"{wh} {be} {r.pred} {x}"
    elif r.kind == "role" and d == "out":
        q = f"{wh} {s['be']} {x} {s['an']} {r.prep}"
    elif r.kind == "role":
        q = f"{'who' if _is_person(words.target) else 'what'} are the {s['np']} {r.prep} {x}"
    elif d == "out":
        head = "who" if _is_person(words.target) else "what"
        noun = f"{x}'s {s['n']}" if anchor and rng.random() < 0.3 else f"the {s['n']} of {x}"
        q = f"{head} {'are' if r.plural else 'is'} {noun}"
    elif _is_person(words.target) and rng.random() < 0.5:
        q = f"whose {s['n']} {s['has']} {x}"
    else:
        their = "their" if many or wh == "who" else "its"
        among = "among" if r.plural else "as"
        q = f"{wh} {'have' if many else 'has'} {x} {among} {their} {s['n']}"
    return " ".join(q.split()) + "?"


def load_templates(path: str | Path | None) -> dict[str, Any]:
    """``--templates FILE``: JSON with optional ``in``/``out`` lists (general phrasings),
    ``frames``, and per-relation overrides ``{"relations": {"rel": {"in": [...],
    "out": [...]}}}``; placeholders ``{x}`` (the phrase so far), ``{T}`` (target type, plural),
    ``{r}`` (relation in words), ``{n}`` (relation as a noun) and the others of
    :data:`NOUN_PHRASES`; frames: ``{p}``."""
    if path is None:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ArkError(f"{path}: not a readable JSON templates file ({exc})") from exc
    if not isinstance(data, dict):
        raise ArkError(f"{path}: templates must be a JSON object")
    return data


def _given(step: RelationStep, words: StepWords, templates: dict[str, Any]) -> list[str]:
    per_rel = (templates.get("relations") or {}).get(step.relation) or {}
    return per_rel.get(step.direction) or templates.get(words.direction) or []


def hop_phrase(
    step: RelationStep,
    x: str,
    rng: random.Random,
    templates: dict[str, Any],
    described: DescribedSchema | None = None,
    x_plural: bool = False,
) -> str:
    """One step as a noun phrase over the phrase so far ``x``."""
    return _noun_phrase(step, x, x_plural, rng, templates, described, anchor=False)[0]


def _noun_phrase(
    step: RelationStep,
    x: str,
    x_plural: bool,
    rng: random.Random,
    templates: dict[str, Any],
    described: DescribedSchema | None,
    anchor: bool,
    final: bool = True,
) -> tuple[str, bool]:
    """(the phrase, whether it is plural): "the {T} ..." and "the {np} ..." are;
    "the {n} of X" and "the {O} that X ..." take the noun's number. A phrase another
    step goes on from is the short one ("the age of X", not "the entities that are the
    age of X": "whose age is the age of X" reads, the other does not); one whose type
    and noun are one word says it once ("the genre of X", not "the genres that are the
    genre of X")."""
    words = step_words(step, described, rng)
    options = _given(step, words, templates) or [
        t
        for t in _options(words, NOUN_PHRASES, anchor)
        if (final and not _same_head(words)) or not t.startswith("the {T} that are the")
    ]
    template = rng.choice(options)
    plural = template.startswith(("the {T}", "the {np}")) or words.reading.plural
    return _fill(template, _slots(words, x, x_plural, anchor)), plural


def _head(phrase: str) -> str:
    return _singular(phrase.lower()).rpartition(" ")[2]


def _same_head(words: StepWords) -> bool:
    """Whether the step's noun and its target type end in the same word (a relation
    named for what it leads to: ``genre`` to a genre, ``release year`` to a year)."""
    r = words.reading
    noun = r.noun or r.obj or r.words
    return bool(noun) and _head(noun) == _head(words.target)


def _capital(text: str) -> str:
    return text[0].upper() + text[1:]


def chain_question(
    anchor: str,
    anchor_type: str,
    hops: Sequence[RelationStep],
    rng: random.Random,
    templates: dict,
    described: DescribedSchema | None = None,
) -> str:
    """A chain of steps from ``anchor`` as one question: each step a noun phrase over
    the one before, the last one half the time a direct question ("Who directed the
    movies written by X?"), else framed ("Which are ...?", "List ...")."""
    kind = described.type(anchor_type) if described else None
    label = kind.label if kind is not None else anchor_type
    typed = rng.random() < 0.3 and label != "entity"
    phrase = f"{label} {anchor}" if typed else anchor
    plural = False
    for i, step in enumerate(hops):
        last = i == len(hops) - 1
        # A typed name ("tag X") is a phrase, not a bare name: no "with tag tag X".
        name = i == 0 and not typed
        if last and rng.random() < 0.5:
            words = step_words(step, described, rng)
            if not _given(step, words, templates):
                return _capital(direct_question(words, phrase, plural, rng, anchor=name))
        phrase, plural = _noun_phrase(
            step, phrase, plural, rng, templates, described, anchor=name, final=last
        )
    frame = rng.choice(templates.get("frames") or (FRAMES if plural else SINGULAR_FRAMES))
    return _capital(frame.format(p=phrase))


#: Frames around a plural phrase ("the movies ...") and a singular one ("the club ...").
FRAMES = ["Which are {p}?", "What are {p}?", "Find {p}.", "List {p}.", "{p}?"]
SINGULAR_FRAMES = ["What is {p}?", "Which is {p}?", "Find {p}.", "Name {p}.", "{p}?"]


def intersection_question(
    anchors: Sequence[str],
    hops: Sequence[RelationStep],
    rng: random.Random,
    templates: dict,
    described: DescribedSchema | None = None,
) -> str:
    """Two constraints on one target set (``hops[i]`` leads from ``anchors[i]`` to
    it), each phrased as a clause by its label's word class or a noun alias: "Which
    are the players that play in club X and whose age is 27?"."""
    clauses, target = [], ""
    for anchor, step in zip(anchors, hops, strict=True):
        words = step_words(step, described, rng)
        template = rng.choice(_options(words, CLAUSES, anchor=True))
        clauses.append(_fill(template, _slots(words, anchor, False)))
        target = words.target
    if rng.random() < 0.5:
        clauses.reverse()
    phrase = f"the {_plural(target)} {' and '.join(clauses)}"
    frame = rng.choice(templates.get("frames") or FRAMES)
    return _capital(frame.format(p=phrase))


__all__ = [
    "CLAUSES",
    "FRAMES",
    "NOUN_PHRASES",
    "SINGULAR_FRAMES",
    "RelationStep",
    "StepWords",
    "chain_question",
    "direct_question",
    "hop_phrase",
    "intersection_question",
    "load_templates",
    "step_words",
]
