"""The plan confidence fitted to the user's graph on its own synthetic questions.

Walks of the graph (1–3 hops and intersections, as ``ark distill synthesize`` samples
them) are put in words with the described schema; each is read, and its plan run
without a model (:func:`ark.strategies.guided.plans.run_plan`). A plan that runs to its finish
is right when every node it adds is an answer of the walk. The logistic model of
that over the plan's features (:data:`ark.strategies.guided.plans.FEATURES`) is the plan
confidence, stored in the index with the walks' count and seed and its calibration
error on a third of them held out of the fit. No question set is read.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ark.distill._paths import PathSampler, path_question
from ark.errors import ArkError
from ark.index import Index, save_described
from ark.strategies.guided.plans import (
    DEFAULT_WALKS,
    FIT_KEY,
    PlanModel,
    calibration_error,
    fit_model,
    plan_features,
    plan_question,
    reading_digest,
)
from ark.tools import MAX_CENTERS, GraphTools, ToolConfig


@dataclass(frozen=True)
class PlanSample:
    """One synthetic question and what its plan did."""

    question: str
    hops: int
    complete: bool
    right: bool
    features: dict[str, float] | None


@dataclass(frozen=True)
class PlanFit:
    """A fit and the samples it was made from."""

    model: PlanModel
    samples: list[PlanSample]
    seconds: float

    def summary(self) -> dict[str, Any]:
        return dict(self.model.info)


def plan_samples(
    index: Index,
    n: int = DEFAULT_WALKS,
    seed: int = 0,
    *,
    intersection_share: float = 0.1,
    progress: Callable[[int, int], None] | None = None,
) -> list[PlanSample]:
    """``n`` synthetic questions from walks of ``index`` (hop counts 1, 2, 3 in turn),
    each with its plan run; deterministic for a seed."""
    rng = random.Random(seed)
    sampler = PathSampler(index, rng, max_frontier=MAX_CENTERS)
    config = ToolConfig(multi_neighborhood=True)
    tools = GraphTools(index, phrase_encoder=config.phrase_encoder)
    out: list[PlanSample] = []
    seen: set[tuple[Any, ...]] = set()
    attempts = 0
    while len(out) < n:
        attempts += 1
        if attempts > 200 * n + 1000:
            raise ArkError(f"could only sample {len(out)} of {n} walks from {index.path}")
        hops = (1, 2, 3)[len(out) % 3]
        path = sampler.draw(hops, intersection_share)
        if path is None:
            continue
        key = path.key()
        if key in seen:
            continue
        seen.add(key)
        question = path_question(index, path, rng, {})
        hints, run = plan_question(index, question, tools, config)
        gold = set(path.answers)
        right = run.complete and bool(run.answer) and set(run.answer) <= gold
        features = plan_features(hints, run) if run.complete else None
        out.append(PlanSample(question, hops, run.complete, right, features))
        if progress is not None:
            progress(len(out), n)
    return out


def fit_plans(
    index: Index,
    n: int = DEFAULT_WALKS,
    seed: int = 0,
    *,
    save: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> PlanFit:
    """Fit the plan confidence of ``index`` on ``n`` synthetic questions and, with
    ``save``, store it in the index (a new described-schema generation, atomic)."""
    started = time.perf_counter()
    samples = plan_samples(index, n, seed, progress=progress)
    done = [s for s in samples if s.complete and s.features is not None]
    if len(done) < 10 or len({s.right for s in done}) < 2:
        raise ArkError(
            f"{index.path}: only {len(done)} of {len(samples)} synthetic plans ran to their "
            "finish, or they were all right or all wrong: too few to fit a confidence"
        )
    cut = (2 * len(done)) // 3
    held = fit_model([s.features for s in done[:cut]], [s.right for s in done[:cut]])  # type: ignore[misc]
    rest = done[cut:]
    held_error = calibration_error(
        [held.confidence(s.features) for s in rest],  # type: ignore[arg-type]
        [s.right for s in rest],
    )
    info = {
        "n": len(samples),
        "seed": seed,
        "complete": len(done),
        "right": sum(s.right for s in done),
        "held_out_calibration_error": round(held_error, 4),
        "reading": reading_digest(index),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    model = fit_model(
        [s.features for s in done],  # type: ignore[misc]
        [s.right for s in done],
        info=info,
    )
    if save:
        save_described(index, index.described.with_fit(FIT_KEY, model.to_dict()))
    return PlanFit(model, samples, round(time.perf_counter() - started, 3))
