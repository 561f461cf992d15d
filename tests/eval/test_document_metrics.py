"""Passage recall (HippoRAG's), exact match and F1 (SQuAD's), each on cases worked out
by hand, and how they join a run's summary."""

import pytest

from ark.eval.metrics import (
    aggregate,
    answer_passage_at_k,
    exact_match,
    f1_score,
    normalize_answer,
    passage_recall_at_k,
    score_answer,
    score_passages,
)


def test_passage_recall_counts_supporting_paragraphs_in_the_top_k():
    supporting = [{10}, {20}, {30}]
    assert passage_recall_at_k([10, 99, 20], supporting, 2) == pytest.approx(1 / 3)
    assert passage_recall_at_k([10, 99, 20], supporting, 5) == pytest.approx(2 / 3)
    assert passage_recall_at_k([], supporting, 5) == 0.0
    assert passage_recall_at_k([10, 20], [], 5) == 0.0


def test_a_paragraph_cut_in_chunks_counts_once_and_a_missing_one_stays_in_the_denominator():
    # paragraph A is chunks 6 and 7; B is node 0; C is not in the index (empty group)
    supporting = [{6, 7}, {0}, set()]
    assert passage_recall_at_k([7, 6, 0], supporting, 2) == pytest.approx(1 / 3)
    assert passage_recall_at_k([7, 6, 0], supporting, 3) == pytest.approx(2 / 3)
    assert score_passages([0, 7], supporting) == {
        "recall@2": pytest.approx(2 / 3),
        "recall@5": pytest.approx(2 / 3),
    }


def test_the_answer_passage_counts_when_in_the_top_k_and_only_when_known():
    supporting = [{6, 7}, {0}, {3}]  # the answer's paragraph, {3}, is the last hop's
    scores = score_passages([0, 7, 9, 1, 2, 3], supporting, answer_passage={3})
    assert scores["answer@2"] == 0.0 and scores["answer@5"] == 0.0  # sixth
    assert score_passages([3, 0], supporting, answer_passage={3})["answer@2"] == 1.0
    # a chunk of the answer's paragraph counts; a paragraph the index lacks never does
    assert answer_passage_at_k([9, 7], {6, 7}, 2) == 1.0
    assert answer_passage_at_k([9, 7], set(), 2) == 0.0
    assert "answer@5" not in score_passages([3], supporting)  # unknown: not scored


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("The Tarsk County!", "tarsk county"),
        ("  an  Apple,  a pear ", "apple pear"),
        ("Anne of the Island", "anne of island"),  # articles are whole words only
        ("St.-Louis's (1901)", "stlouiss 1901"),  # ASCII punctuation removed, not spaced
        ("", ""),
    ],
)
def test_squad_normalisation(text, normal):
    assert normalize_answer(text) == normal


def test_exact_match_takes_the_best_gold_string():
    assert exact_match("the Tarsk County.", ["Tarsk County"]) == 1.0
    assert exact_match("Tarsk", ["Tarsk County"]) == 0.0
    assert exact_match("Tarsk", ["Tarsk County", "Tarsk"]) == 1.0  # an alias
    assert exact_match("", ["Tarsk County"]) == 0.0


def test_f1_on_hand_worked_cases():
    # tarsk county velmar vs tarsk county: P = 2/3, R = 1, F1 = 0.8
    assert f1_score("Tarsk County, Velmar", ["Tarsk County"]) == pytest.approx(0.8)
    # county vs tarsk county: P = 1, R = 1/2, F1 = 2/3
    assert f1_score("a county", ["Tarsk County"]) == pytest.approx(2 / 3)
    # repeated tokens count once each side: county county vs county: P = 1/2, R = 1
    assert f1_score("county county", ["county"]) == pytest.approx(2 / 3)
    # a token twice on both sides is two in common: P = 2/3, R = 1, F1 = 0.8
    assert f1_score("Bora Bora island", ["Bora Bora"]) == pytest.approx(0.8)
    # the maximum over the gold strings (here the alias gives 1)
    assert f1_score("Tarsk", ["Tarsk County", "Tarsk"]) == pytest.approx(1.0)
    assert f1_score("Port Selby", ["Tarsk County"]) == 0.0
    assert f1_score("", ["Tarsk County"]) == 0.0
    assert f1_score("the", ["the"]) == 0.0  # nothing left after normalising
    assert score_answer("Tarsk County, Velmar", ["Tarsk County"]) == {
        "em": 0.0,
        "f1": pytest.approx(0.8),
    }


def test_aggregate_reports_the_new_measures_only_when_every_query_has_them():
    base = {"hit@1": 1.0, "hit@5": 1.0, "recall@20": 1.0, "mrr": 1.0}
    both = [
        {**base, "recall@2": 0.5, "recall@5": 1.0, "em": 0.0, "f1": 0.5},
        {**base, "recall@2": 0.0, "recall@5": 0.5, "em": 1.0, "f1": 1.0},
    ]
    out = aggregate(both)
    assert list(out) == ["hit@1", "hit@5", "recall@20", "mrr", "recall@2", "recall@5", "em", "f1"]
    assert out["recall@2"] == pytest.approx(25.0) and out["f1"] == pytest.approx(75.0)
    assert set(aggregate([base, both[0]])) == set(base)
