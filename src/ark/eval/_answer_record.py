"""What a run records of an answer in words, and what its score reads: shared by the
methods that answer themselves (``_methods``) and the answer step added to any
method (``_answering``)."""

from __future__ import annotations

from typing import Any

from ark.answer import Answer

#: Statuses of :class:`ark.answer.Answer` that mean the answer step failed.
FAILED_STATUSES = ("bad_reply", "model_error")


def answer_record(answer: Answer) -> dict[str, Any]:
    """What a run records of an answer (``error`` set when the step failed)."""
    record: dict[str, Any] = {
        "text": answer.text,
        "citations": list(answer.citations),
        "answerable": answer.answerable,
        "status": answer.status,
        "reason": answer.reason,
        "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens,
    }
    if answer.citation_check:  # the citations checked against the shown nodes' text
        record["citation_check"] = answer.citation_check
    if answer.recited_from:
        record["recited_from"] = list(answer.recited_from)
    if answer.steps:  # read in steps: each lookup, and why the one call answered if it did
        record["steps"] = [dict(step) for step in answer.steps]
    if answer.status in FAILED_STATUSES:
        record["error"] = answer.reason or answer.status
    return record


def no_answer(why: str) -> dict[str, Any]:
    """The record of an answer never asked for (the retrieval failed)."""
    return {
        "text": "",
        "citations": [],
        "answerable": False,
        "status": "no_retrieval",
        "reason": why,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "error": why,
    }


def scored_text(answer: dict[str, Any]) -> str:
    """The text EM and F1 read: the answer when the model answered, else nothing (what
    a model says about missing evidence is not an answer)."""
    return str(answer["text"]) if answer.get("answerable") else ""
