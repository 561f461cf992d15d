"""What an extractor finds in one chunk, and the checks every extractor's output passes.

An :class:`Extraction` is the entities a chunk names and the ``[subject, relation,
object]`` triples it states, the relation a free-text phrase. Both extractors (the
model's and the fast one) produce it; the work directory stores it; the passages file
carries it into the graph (:mod:`ark.graph._documents` fixes how).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ark.graph import entity_key, relation_key

__all__ = ["Extraction", "Extractor", "clean_extraction"]


@dataclass(slots=True)
class Extraction:
    """Entities and triples of one chunk; ``ok=False`` when the extractor's reply was
    unusable (the chunk stays a passage, with nothing extracted). ``dropped`` counts
    the items thrown away: triples that are malformed (not three non-empty strings),
    names longer than :data:`MAX_NAME_CHARS`, items past the reply's bounds. ``cut``:
    the reply was cut at its token limit and holds what was complete before the cut."""

    entities: list[str] = field(default_factory=list)
    triples: list[list[str]] = field(default_factory=list)
    ok: bool = True
    error: str | None = None
    dropped: int = 0
    cut: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"ok": self.ok, "entities": self.entities, "triples": self.triples}
        if self.error:
            d["error"] = self.error
        if self.dropped:
            d["dropped"] = self.dropped
        if self.cut:
            d["cut"] = True
        if self.prompt_tokens or self.completion_tokens:
            d["prompt_tokens"] = self.prompt_tokens
            d["completion_tokens"] = self.completion_tokens
            d["llm_s"] = round(self.llm_s, 4)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Extraction:
        return cls(
            entities=[str(e) for e in d.get("entities") or []],
            triples=[[str(x) for x in t] for t in d.get("triples") or []],
            ok=bool(d.get("ok", True)),
            error=d.get("error"),
            dropped=int(d.get("dropped", 0)),
            cut=bool(d.get("cut", False)),
            prompt_tokens=int(d.get("prompt_tokens", 0)),
            completion_tokens=int(d.get("completion_tokens", 0)),
            llm_s=float(d.get("llm_s", 0.0)),
        )


class Extractor(Protocol):
    """Finds entities and relations in chunks. ``id`` names everything that changes
    the result (the model, the prompt's version, the NLP pipeline's version): it is
    part of each chunk's cache key, so a cached extraction is reused only by the
    same extractor."""

    id: str


#: The longest entity name or relation phrase kept (characters): a name is a few
#: words of its passage, whatever a server sends (issue 67).
MAX_NAME_CHARS = 300


def _text(value: Any) -> str:
    if not isinstance(value, str) or len(value) > 4 * MAX_NAME_CHARS:
        return ""  # not a name (or far too long to be one): dropped before any work
    text = " ".join(value.split())
    return text if len(text) <= MAX_NAME_CHARS else ""


def clean_extraction(entities: Iterable[Any], triples: Iterable[Any]) -> Extraction:
    """Entities and triples as the graph takes them: strings with spaces collapsed,
    one spelling per :func:`entity_key` (the first), a triple's two ends added to the
    entities, repeated triples once. A triple that is not three non-empty strings,
    whose relation has no letters or digits, or whose subject and object are one
    entity is dropped and counted, as is a name over :data:`MAX_NAME_CHARS`."""
    names: dict[str, str] = {}

    def add(name: str) -> str:
        return names.setdefault(entity_key(name), name)

    dropped = 0
    for e in entities:
        name = _text(e)
        if name:
            add(name)
        elif isinstance(e, str) and e.strip():
            dropped += 1  # a name too long to be one
    kept: dict[tuple[str, str, str], list[str]] = {}
    for t in triples:
        parts = [_text(x) for x in t] if isinstance(t, list | tuple) and len(t) == 3 else []
        if len(parts) != 3 or not all(parts) or not any(c.isalnum() for c in parts[1]):
            dropped += 1
            continue
        if entity_key(parts[0]) == entity_key(parts[2]):  # joins nothing to anything
            dropped += 1
            continue
        s, r, o = add(parts[0]), parts[1], add(parts[2])
        kept.setdefault((entity_key(s), relation_key(r), entity_key(o)), [s, r, o])
    return Extraction(list(names.values()), list(kept.values()), dropped=dropped)
