"""Whether the cited nodes say what an answer says, read from their text.

A model cites node indices, and a small one cites what it was shown whether or not
it said so there: an answer from the model's memory came with two citations whose
passages do not hold its subject (issue 66's first hour). So a citation is checked,
not taken on the model's word: the answer's claim is the terms of its text the
question does not already have, by the index's own tokenizer (its stop words and
stemmer, so an index built with ``--stemmer`` matches "compiled" to "compiles"); the
cited nodes' texts together must hold every one of them. An answer that only repeats
the question's terms (a yes, a restated name) has no claim to check.

:func:`check_citations` applies it to an answer: citations that hold the claim stand;
where they do not, the nodes the answer step was shown that hold the missing terms
are cited instead (a model often cites the wrong one of the passages it read); where
no node shown holds them, the answer did not come from the evidence and says so
(``status="unsupported"``), keeping the model's words and, in ``recited_from``, its
citations, and citing nothing. What that costs and catches, on recorded answers:
docs/evidence.md ("Citations are checked against the text").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar

__all__ = ["Cited", "Tokenizes", "check_citations", "recited_note", "unsupported_terms"]


class Tokenizes(Protocol):
    """What the check needs of a tokenizer: :class:`ark.index.Tokenizer` has it."""

    def tokens(self, text: str) -> list[str]: ...


def unsupported_terms(
    answer: str, question: str, cited: Iterable[str], tokenizer: Tokenizes
) -> set[str]:
    """The terms of ``answer``'s claim that none of the ``cited`` texts holds (empty:
    the citations support the answer)."""
    claim = set(tokenizer.tokens(answer)) - set(tokenizer.tokens(question))
    if not claim:
        return set()
    held: set[str] = set()
    for text in cited:
        held.update(tokenizer.tokens(text))
    return claim - held


def claim_terms(answer: str, question: str, tokenizer: Tokenizes) -> set[str]:
    """The terms of ``answer`` that ``question`` does not have."""
    return set(tokenizer.tokens(answer)) - set(tokenizer.tokens(question))


class Cited(Protocol):
    """What the check reads of an answer (:class:`ark.answer.Answer` has it); it
    returns a copy with the fields :func:`check_citations` sets replaced."""

    text: str
    citations: list[int]
    answerable: bool
    nodes: list[int]


_A = TypeVar("_A", bound=Cited)


def check_citations(answer: _A, question: str, graph: Any, tokenizer: Tokenizes) -> _A:
    """``answer`` with its citations checked against the text of the nodes it was
    shown (see the module's docstring); an answer that was not given is returned as
    it is."""
    if not answer.answerable:
        return answer
    claim = claim_terms(answer.text, question, tokenizer)
    if not claim:
        return answer

    def terms(node: int) -> set[str]:
        return set(tokenizer.tokens(f"{graph.name(node)}\n{graph.text(node)}"))

    held = {c: terms(c) & claim for c in answer.citations}
    missing = claim - set().union(*held.values())
    if not missing:
        return replace(answer, citation_check="held")
    kept = [c for c, found in held.items() if found]
    added = []
    for node in answer.nodes:
        if node in held:
            continue
        found = terms(node) & missing
        if found:
            added.append(node)
            missing -= found
        if not missing:
            break
    if missing:
        words = ", ".join(sorted(missing))
        return replace(
            answer,
            citations=[],
            recited_from=list(answer.citations),
            answerable=False,
            status="unsupported",
            reason=f"no node shown holds what the answer says ({words}): it is not the evidence's",
            citation_check="unsupported",
        )
    return replace(
        answer,
        citations=kept + added,
        recited_from=list(answer.citations),
        citation_check="recited",
    )


def recited_note(recited_from: Sequence[int], cited: Sequence[int]) -> str | None:
    """The line under an answer's citations that says the model's own were replaced
    (``recited_from``), or dropped when nothing shown holds the answer (no ``cited``);
    None when they stood."""
    if not recited_from:
        return None
    nodes = ", ".join(f"[{c}]" for c in recited_from)
    above = "; the nodes above do" if cited else ""
    return f"(the model cited {nodes}, which do not hold what it says{above})"
