"""Hand-checked metric values (STaRK's definitions) and the two ranking modes."""

import numpy as np
import pytest

from ark.eval.metrics import (
    aggregate,
    evaluate_query,
    filter_to_candidates,
    hit_at_k,
    recall_at_k,
    reciprocal_rank,
)


def test_hit_at_k():
    assert hit_at_k([5, 3, 9], {9}, 1) == 0.0
    assert hit_at_k([5, 3, 9], {9}, 3) == 1.0
    assert hit_at_k([], {1}, 5) == 0.0


def test_recall_divides_by_the_number_of_gold_answers():
    gold = set(range(100, 130))  # 30 answers
    ranking = [100, 101, 1, 2]
    assert recall_at_k(ranking, gold, 20) == pytest.approx(2 / 30)  # not 2 / 20
    assert recall_at_k([7, 8], {7, 8}, 20) == 1.0
    assert recall_at_k([7], set(), 20) == 0.0


def test_reciprocal_rank_over_the_full_ranking():
    ranking = list(range(1000))
    assert reciprocal_rank(ranking, {499}) == pytest.approx(1 / 500)  # no cutoff
    assert reciprocal_rank([3, 1, 2], {1, 2}) == pytest.approx(0.5)  # first gold
    assert reciprocal_rank([3], {4}) == 0.0


def test_non_candidates_and_duplicates_are_dropped_before_scoring():
    candidates = np.array([False, True, True, True, False])
    assert filter_to_candidates([4, 0, 1, 1, 3, 99], candidates) == [1, 3]
    m = evaluate_query([4, 0, 2], {2}, candidates=candidates)
    assert m["hit@1"] == 1.0 and m["mrr"] == 1.0  # 4 and 0 are not candidates


def test_strict_mode_gives_no_credit_for_unretrieved_answers():
    m = evaluate_query([], {3}, n_nodes=5)
    assert m == {"hit@1": 0.0, "hit@5": 0.0, "recall@20": 0.0, "mrr": 0.0}


def test_stark_mode_fills_in_unpredicted_candidates():
    # Predicted [4]; candidates 0..5 fill in behind it in index order.
    m = evaluate_query([4], {2}, mode="stark", n_nodes=6)
    assert m["hit@1"] == 0.0 and m["hit@5"] == 1.0  # ranking 4, 0, 1, 2, ...
    assert m["mrr"] == pytest.approx(1 / 4)
    assert m["recall@20"] == 1.0
    candidates = np.array([True, False, True])
    m = evaluate_query([], {2}, mode="stark", candidates=candidates)
    assert m["mrr"] == pytest.approx(1 / 2)  # ranking 0, 2


def test_multiple_answers_and_ties_in_aggregate():
    per_query = [
        evaluate_query([1, 2, 3], {2, 3}, n_nodes=4),  # hit@1 0, hit@5 1, R@20 1, MRR .5
        evaluate_query([3], {3}, n_nodes=4),  # all 1
    ]
    agg = aggregate(per_query)
    assert agg == pytest.approx({"hit@1": 50.0, "hit@5": 100.0, "recall@20": 100.0, "mrr": 75.0})
    assert aggregate([]) == {"hit@1": 0.0, "hit@5": 0.0, "recall@20": 0.0, "mrr": 0.0}


def test_unknown_mode():
    with pytest.raises(ValueError, match="unknown mode"):
        evaluate_query([1], {1}, mode="lenient", n_nodes=2)
