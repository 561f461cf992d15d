"""Questions from relation paths: general templates over the schema's names.

Nothing here is written for one dataset: a hop is phrased from its relation and
target type names (several phrasings each), and ``--templates FILE`` replaces or
extends the phrasings for a graph whose names read badly.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ark.errors import ArkError


@dataclass(frozen=True)
class Hop:
    """One step of a path: a relation followed in a direction to a node type."""

    relation: str
    direction: str  # "out": current -relation-> next; "in": next -relation-> current
    target_type: str


def _words(name: str) -> str:
    return name.replace("_", " ").strip()


def _noun(name: str) -> str:
    """A relation as a noun: its words without a leading verb ("has genre" -> "genre")."""
    words = _words(name).split()
    if len(words) > 1 and words[0].lower() in {"has", "have", "is", "in", "of"}:
        words = words[1:]
    return " ".join(words)


def _plural(word: str) -> str:
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


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
    words = _words(name).lower().split()
    if len(words) > 1 and words[-1] == "by":
        return "passive"
    if len(words) > 1 and words[0] in {"has", "have", "is", "in", "of"}:
        return "attribute"
    return "noun"


FRAMES = ["Which are {p}?", "What are {p}?", "Find {p}.", "List {p}.", "{p}?"]
INTERSECTION = [
    "the {T} linked to both {x1} (by {r1}) and {x2} (by {r2})",
    "the {T} linked to {x1} by {r1} and to {x2} by {r2}",
]


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


def hop_phrase(hop: Hop, x: str, rng: random.Random, templates: dict[str, Any]) -> str:
    per_rel = (templates.get("relations") or {}).get(hop.relation) or {}
    options = (
        per_rel.get(hop.direction)
        or templates.get(hop.direction)
        or SHAPED_TEMPLATES[relation_shape(hop.relation)][hop.direction]
    )
    return rng.choice(options).format(
        x=x, T=_plural(hop.target_type), r=_words(hop.relation), n=_noun(hop.relation)
    )


def chain_question(
    anchor: str, anchor_type: str, hops: Sequence[Hop], rng: random.Random, templates: dict
) -> str:
    phrase = f"{anchor_type} {anchor}" if rng.random() < 0.3 else anchor
    for hop in hops:
        phrase = hop_phrase(hop, phrase, rng, templates)
    frame = rng.choice(templates.get("frames") or FRAMES)
    text = frame.format(p=phrase)
    return text[0].upper() + text[1:]
