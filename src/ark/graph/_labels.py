"""Readable labels from the names graphs give their relations and node types.

Graphs name relations in many shapes: ``directed_by``, ``playsFor``,
``people.person.spouse``, Freebase paths ``__people__person__spouse``, STaRK's
``author___affiliated_with___institution``, and reverse copies ``plays_in_club_inverse``.
A label is the words a person would read: the last segment of a path, the middle of a
STaRK triple, camelCase and snake_case split, and the reverse direction recognised so
that a relation and its inverse share one meaning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Markers of a relation stored in the reverse direction (``x_inverse``, ``~x``, ``x-1``).
_INVERSE_SUFFIX = re.compile(r"(?:[_\-. ](?:inverse|inv|reverse|rev)|Inverse|Reverse|-1)$")
_INVERSE_PREFIX = re.compile(r"^(?:~|(?:inverse|reverse)[_\-. ])")


@dataclass(frozen=True, slots=True)
class NameLabel:
    """What a relation's name says: its words, whether it is stored reversed, and the
    node types a STaRK-style name carries (``author___writes___paper``)."""

    words: tuple[str, ...]
    inverse: bool = False
    source_hint: str | None = None
    target_hint: str | None = None

    @property
    def text(self) -> str:
        return " ".join(self.words)


#: A run of letters (any script: ``prédécesseur`` is one word, not ``pr d cesseur``)
#: or of digits.
_RUN = re.compile(r"[^\W\d_]+|\d+")


def _camel_parts(run: str) -> list[str]:
    """A run of letters split where its case says a word starts: ``villeDépart`` at
    the capital after a small letter, ``HTMLParser`` before the capital that opens a
    small-letter word. ``str.isupper``/``islower`` know every script's case, which an
    ``[A-Z]`` class does not (``ÉtatMembre``)."""
    parts: list[str] = []
    start = 0
    for i in range(1, len(run)):
        prev, here = run[i - 1], run[i]
        nxt = run[i + 1] if i + 1 < len(run) else ""
        if here.isupper() and (prev.islower() or (prev.isupper() and nxt.islower())):
            parts.append(run[start:i])
            start = i
    parts.append(run[start:])
    return parts


def split_words(name: str) -> list[str]:
    """The words of an identifier: ``camelCase``, ``snake_case``, dots, slashes, dashes
    and digits split, in any script; case folded except for all-caps acronyms."""
    words = [part for run in _RUN.findall(name) for part in _camel_parts(run)]
    return [w if (w.isupper() and len(w) > 1) else w.lower() for w in words]


def relation_label(name: str) -> NameLabel:
    """The label of a relation name (see the module docstring for the shapes read)."""
    raw = name.strip()
    inverse = False
    for pattern in (_INVERSE_SUFFIX, _INVERSE_PREFIX):
        stripped = pattern.sub("", raw)
        if stripped and stripped != raw:
            raw, inverse = stripped, True
    source = target = None
    parts = [p for p in raw.split("___") if p]
    if len(parts) == 3:  # STaRK: source___relation___target
        source, raw, target = (" ".join(split_words(p)) for p in parts)
    # A path (Freebase ``a.b.c`` or ``__a__b__c``, or ``a/b/c``): its last segment.
    segments = [s for s in re.split(r"__|[./]", raw) if s.strip("_")]
    if len(segments) > 1:
        raw = segments[-1]
    words = tuple(split_words(raw)) or tuple(split_words(name)) or (name,)
    return NameLabel(words, inverse, source, target)


def type_label(name: str) -> str:
    """A node type's name in words (``gene/protein`` -> ``gene protein``)."""
    return " ".join(split_words(name)) or name
