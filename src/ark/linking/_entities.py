"""The nodes a question names: node names that occur in it word for word.

One BM25 query with the whole question brings candidates (a name's words are all in
the question, so it scores); a candidate counts when its name's words stand
contiguously in the question. Longer names win overlaps (``Club Leon`` over ``Leon``),
and a name made only of stopwords, or one word that is a node type's or the question's
relation word, is left out by the caller's choice of ``exclude`` positions.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from ark.linking._words import STOPWORDS, tokens

#: Candidates fetched from BM25 for one question.
CANDIDATES = 200


@dataclass(frozen=True, slots=True)
class EntityMention:
    """Node ``index`` (named ``name``) at words ``start:end`` of the question."""

    index: int
    name: str
    start: int
    end: int


def spot_entities(
    index: Any, question: str, *, exclude: Collection[int] = (), limit: int = 5
) -> list[EntityMention]:
    """Up to ``limit`` non-overlapping node names found in ``question``, in question
    order; a span touching an ``exclude`` position is skipped. For several nodes with
    one name, the one BM25 ranks first (the most specific) stands for them."""
    words = tokens(question)
    terms = index.bm25.query_terms(question)
    if not len(terms) or not words:
        return []
    docs, _ = index.bm25.top_k(terms, CANDIDATES)
    found: list[EntityMention] = []
    seen_names: set[tuple[str, ...]] = set()
    for doc in docs.tolist():
        name = index.graph.name(int(doc))
        own = tokens(name)
        key = tuple(own)
        if not own or key in seen_names or all(w in STOPWORDS for w in own):
            continue
        seen_names.add(key)
        n = len(own)
        for i in range(len(words) - n + 1):
            if list(words[i : i + n]) == own and not set(range(i, i + n)) & set(exclude):
                # One word counts as a name only as written and when it looks like one
                # (a capital or a digit): "fall" is not the film "Fall", nor "script"
                # the tag "script".
                written = name in question or name.replace("_", " ") in question
                if n > 1 or (written and any(c.isupper() or c.isdigit() for c in name)):
                    found.append(EntityMention(int(doc), name, i, i + n))
                break
    found.sort(key=lambda e: (-(e.end - e.start), e.start))
    kept: list[EntityMention] = []
    for e in found:
        if all(e.end <= k.start or e.start >= k.end for k in kept):
            kept.append(e)
    return sorted(kept[:limit], key=lambda e: e.start)
