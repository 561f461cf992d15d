"""The one resumable runner: a method over a list of questions, one record per question
as soon as it finishes, resumable after any crash (``ark.eval._runstore``).

:func:`run_resumable` is the loop every run shares — ``ark eval`` through
:func:`run_queries`, which scores each answer, and teacher collection
(``ark.distill.collect``), which records trajectories only; each brings its record
and its summary.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from ark._safe import clean_text
from ark.cost import PriceTable, query_cost
from ark.datasets import Query
from ark.eval._answer_record import scored_text
from ark.eval._methods import Method, MethodOutput
from ark.eval._runstore import RunStore
from ark.eval._summary import summarize_run, summary_markdown
from ark.eval.metrics import (
    ANSWER_MEASURES,
    ANSWER_PASSAGE_MEASURES,
    MEASURES,
    PASSAGE_MEASURES,
    evaluate_query,
    filter_to_candidates,
    score_answer,
    score_passages,
)
from ark.profile import query_profile

ProgressFn = Callable[[int, int], None]


class RunItem(Protocol):
    """What the runner needs of a question: an id unique in the run, and its text (a
    dataset's :class:`ark.datasets.Query` and :class:`ark.distill.collect.Question`
    both are one)."""

    @property
    def id(self) -> str: ...

    @property
    def text(self) -> str: ...


Record = dict[str, Any]


async def run_resumable(
    questions: Sequence[RunItem],
    method: Method,
    store: RunStore,
    config: dict[str, Any],
    *,
    record: Callable[[Any, MethodOutput, float], Record],
    summarize: Callable[[list[Record]], dict[str, Any]],
    markdown: Callable[[dict[str, Any]], str] | None = None,
    resume: bool = False,
    concurrency: int = 1,
    progress: ProgressFn | None = None,
    retry_failed: bool = True,
) -> dict[str, Any]:
    """Run ``method`` on every question not yet recorded in ``store``; returns the summary.

    ``record(question, output, wall_s)`` makes the line appended (fsynced) with the
    question's trajectories as soon as it finishes; ``summarize`` turns all records, in
    question order, into ``summary.json`` (plus ``redone``: what resuming redid), and
    ``markdown`` into ``summary.md``. A method that raises fails its question only.
    The store is locked against other writers until this returns or raises.
    """
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        raise ValueError("query ids must be unique")
    done = store.start(config, resume=resume, retry_failed=retry_failed)
    try:
        todo = [q for q in questions if q.id not in done]
        finished = len(questions) - len(todo)
        if progress:
            progress(finished, len(questions))
        lock = asyncio.Lock()
        sem = asyncio.Semaphore(max(1, concurrency))

        async def one(q: RunItem) -> None:
            nonlocal finished
            async with sem:
                t0 = time.perf_counter()
                try:
                    out = await method(q.id, q.text)
                except Exception as exc:  # a method bug must not lose the rest of the run
                    out = MethodOutput(ranking=[], error=f"{type(exc).__name__}: {exc}")
                wall = time.perf_counter() - t0
            line = record(q, out, wall)
            async with lock:
                store.append(line, out.trajectories)
                done[q.id] = line
                finished += 1
                if progress:
                    progress(finished, len(questions))

        await asyncio.gather(*(one(q) for q in todo))
        summary = summarize([done[i] for i in ids])
        redone = redone_counts(store, ids)
        if any(redone.values()):
            summary["redone"] = redone
        store.write_json("summary.json", summary)
        if markdown is not None:
            text = clean_text(markdown(summary))
            (store.root / "summary.md").write_text(text, encoding="utf-8")
        return summary
    finally:
        store.close()  # other writers may have the directory now


async def run_queries(
    queries: Sequence[Query],
    method: Method,
    store: RunStore,
    config: dict[str, Any],
    *,
    resume: bool = False,
    concurrency: int = 1,
    mode: str = "strict",
    candidates: np.ndarray | None = None,
    n_nodes: int | None = None,
    progress: ProgressFn | None = None,
    prices: PriceTable | None = None,
    retry_failed: bool = True,
) -> dict[str, Any]:
    """Evaluate ``method`` on ``queries``, writing records to ``store``; returns the summary.

    ``candidates`` (a boolean mask over nodes) restricts what is scored; the method
    may visit any node. Queries already recorded (when resuming) are not redone,
    except those that failed (unless ``retry_failed`` is false) and those whose
    trajectories are missing or damaged; the summary's ``redone`` counts them.
    ``prices`` turns each query's tokens into USD (``ark.cost``). The store is locked
    against other writers while this runs, and released when it returns or raises.
    """

    def record(q: Query, out: MethodOutput, wall: float) -> Record:
        cost = query_cost(out.trajectories, prices)  # also fills each trajectory's cost
        line = make_record(q, out, wall, mode, candidates, n_nodes)
        line["cost"] = cost
        line["profile"] = query_profile(out.trajectories)  # where the time went, by phase
        return line

    def summarize(records: list[Record]) -> dict[str, Any]:
        summary = summarize_run(records, config, prices)
        if store.skipped:  # damaged lines found when resuming (their queries were redone)
            summary["damaged_lines"] = [list(s) for s in store.skipped]
        return summary

    return await run_resumable(
        queries,
        method,
        store,
        config,
        record=record,
        summarize=summarize,
        markdown=summary_markdown,
        resume=resume,
        concurrency=concurrency,
        progress=progress,
        retry_failed=retry_failed,
    )


def redone_counts(store: RunStore, ids: Sequence[str]) -> dict[str, int]:
    """How many of ``ids`` resuming redid: ``failed`` ones and those whose
    trajectories were ``missing`` or damaged."""
    wanted = set(ids)
    return {
        "failed": sum(q in wanted for q in store.redone["failed"]),
        "missing_trajectories": sum(q in wanted for q in store.redone["missing_trajectories"]),
    }


def make_record(
    q: Query,
    out: MethodOutput,
    wall_s: float,
    mode: str,
    candidates: np.ndarray | None,
    n_nodes: int | None = None,
) -> dict[str, Any]:
    if out.error is not None:
        status = "failed"
    elif not q.gold and not q.by_answer:
        status = "no_gold"
    else:
        status = "ok"
    metrics = None
    passages: list[int] = []
    if q.supporting and status != "failed":
        found = out.passages if out.passages is not None else out.ranking
        passages = filter_to_candidates(found, candidates)
    if q.gold:
        # A failed query is scored on an empty ranking: a failure counts as a miss,
        # whatever partial list the method had (ARK: every agent failed; the lists of
        # agents that failed are never fused).
        if status == "failed":  # zero in both modes (stark mode would fill candidates in)
            metrics = {m: 0.0 for m in MEASURES}
            if q.supporting:
                metrics.update({m: 0.0 for m in PASSAGE_MEASURES})
                if q.answer_passage is not None:
                    metrics.update({m: 0.0 for m in ANSWER_PASSAGE_MEASURES})
            if q.answers and out.answer is not None:
                metrics.update({m: 0.0 for m in ANSWER_MEASURES})
        else:
            # Over documents the gold nodes are the supporting passages, and the list
            # a reader gets is the passage list recall reads: Hit@k and MRR score that
            # list too, so that "a supporting passage first" means the same for BM25
            # (whose ranking is its passages) and for an agent (whose ranking leads
            # with the entity it answers).
            ranked = passages if q.supporting else out.ranking
            metrics = evaluate_query(
                ranked, q.gold, candidates=candidates, mode=mode, n_nodes=n_nodes
            )
            if q.supporting:
                metrics.update(score_passages(passages, q.supporting, q.answer_passage))
            if q.answers and out.answer is not None:
                metrics.update(score_answer(scored_text(out.answer), q.answers))
    elif q.by_answer and out.answer is not None:
        # No gold node is known: the written answer is all there is to score (a failed
        # query scores zero, as above).
        if status == "failed":
            metrics = {m: 0.0 for m in ANSWER_MEASURES}
        else:
            metrics = score_answer(scored_text(out.answer), q.answers)
    extra: dict[str, Any] = {}
    if q.supporting:  # a question over documents: the passages recall read, the answer
        extra["passages"] = passages
        extra["supporting"] = [sorted(group) for group in q.supporting]
    if out.answer is not None:
        extra["answer"] = out.answer
        extra["gold_answers"] = list(q.answers)
    return {
        "query_id": q.id,
        "query": q.text,
        "qtype": q.qtype,
        "status": status,
        "error": out.error,
        "ranking": out.ranking,
        "gold": sorted(q.gold),
        "missing_answers": list(q.missing),
        "metrics": metrics,
        "wall_s": round(wall_s, 4),
        "prompt_tokens": out.prompt_tokens,
        "completion_tokens": out.completion_tokens,
        "trajectory_ids": [t.id for t in out.trajectories],
        **extra,
    }
