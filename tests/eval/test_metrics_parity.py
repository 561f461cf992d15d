"""Parity with stark_qa's own Evaluator on the same predictions (when installable).

stark_qa's package __init__ pulls in its dataset loaders (pandas, huggingface_hub,
...), so the evaluator module is loaded from its file; it needs torch and
torchmetrics. Scores are strictly positive and decreasing, with the fill-in value
(min - 1) kept above zero, because torchmetrics >= 1.8 ignores relevant items
scored <= 0 for MRR and recall.
"""

import importlib.util
import random

import numpy as np
import pytest

from ark.eval.metrics import evaluate_query

torch = pytest.importorskip("torch", reason="stark_qa's evaluator needs torch")
pytest.importorskip("torchmetrics", reason="stark_qa's evaluator needs torchmetrics")
spec = importlib.util.find_spec("stark_qa")
if spec is None or not spec.submodule_search_locations:
    pytest.skip("stark-qa is not installed", allow_module_level=True)
_path = f"{spec.submodule_search_locations[0]}/evaluator.py"
_module_spec = importlib.util.spec_from_file_location("stark_qa_evaluator", _path)
assert _module_spec is not None and _module_spec.loader is not None
_module = importlib.util.module_from_spec(_module_spec)
_module_spec.loader.exec_module(_module)
Evaluator = _module.Evaluator

METRICS = ["hit@1", "hit@5", "recall@20", "mrr"]


def theirs(candidates: list[int], ranking: list[int], gold: set[int]) -> dict[str, float]:
    scores = {node: float(len(ranking) - i + 1) for i, node in enumerate(ranking)}
    ev = Evaluator(candidates)
    return ev(scores, torch.LongTensor(sorted(gold)), metrics=METRICS)


@pytest.mark.parametrize("seed", range(40))
def test_same_values_as_stark_evaluator(seed):
    rng = random.Random(seed)
    n = 60
    candidates = sorted(rng.sample(range(n), rng.randint(30, 60)))
    mask = np.zeros(n, dtype=bool)
    mask[candidates] = True
    gold = set(rng.sample(candidates, rng.randint(1, 6)))
    # Gold answers outside the candidates (off STaRK's own data this happens): STaRK
    # drops them — the recall denominator counts candidates only. (Its evaluator
    # indexes a mask of size max(candidates) + 1, so they stay below that.)
    outside = [i for i in range(max(candidates)) if i not in candidates]
    if outside and seed % 2 == 0:
        gold |= set(rng.sample(outside, min(len(outside), rng.randint(1, 4))))
    # Predictions: candidates (some gold), in random order; a few predictions only.
    # (Even seeds: at least 20 predictions, so Recall@20 — where gold outside the
    # candidates changes the denominator — is always compared.)
    ranking = rng.sample(candidates, rng.randint(20 if seed % 2 == 0 else 1, 25))
    ours = evaluate_query(ranking, gold, candidates=mask, mode="stark")
    ref = theirs(candidates, ranking, gold)
    # Where a measure reaches into the tied fill-ins (a cutoff beyond the predictions,
    # or MRR with no gold predicted), STaRK's value depends on how torch orders equal
    # scores; only the rest is defined, and there the two must agree.
    defined = {
        "hit@1": len(ranking) >= 1,
        "hit@5": len(ranking) >= 5,
        "recall@20": len(ranking) >= 20,
        "mrr": bool(gold & set(ranking)),
    }
    compared = [m for m in METRICS if defined[m]]
    assert compared
    for m in compared:
        assert ours[m] == pytest.approx(ref[m], abs=1e-6), (m, ranking, gold)


def test_strict_mode_differs_only_by_the_fill_in():
    candidates = list(range(10))
    mask = np.ones(10, dtype=bool)
    ranking, gold = [3, 4, 5, 6, 7], {5}
    strict = evaluate_query(ranking, gold, candidates=mask)
    assert strict == pytest.approx(theirs(candidates, ranking, gold))


def test_gold_outside_the_candidates_is_not_counted():
    candidates = list(range(0, 20, 2))  # even nodes only
    mask = np.zeros(20, dtype=bool)
    mask[candidates] = True
    ranking, gold = [4, 6, 8, 10, 12, 14, 16, 18, 0, 2], {4, 6, 5, 7}  # 5, 7: not candidates
    ours = evaluate_query(ranking, gold, candidates=mask, mode="stark")
    assert ours["recall@20"] == 1.0  # 2 of the 2 gold candidates, not 2 of 4
    assert ours == pytest.approx(theirs(candidates, ranking, gold))
