"""Retrieval and answer measures, one per function: node measures exactly as STaRK's
evaluator defines them, passage recall as HippoRAG's, answer scores as SQuAD's.

Each takes a ranked list of node indices and the set of gold node indices and
returns a value in [0, 1]; :func:`aggregate` averages per-query values in percent.

* ``hit_at_k``: 1 if any gold node is in the top k.
* ``recall_at_k``: gold nodes in the top k divided by the number of gold nodes
  (STaRK divides by |gold|, not by min(k, |gold|)); with candidates, only gold
  nodes that are candidates count, as in STaRK's evaluator.
* ``reciprocal_rank``: 1 / rank of the first gold node over the whole ranking, 0 if
  none is ranked (STaRK's MRR has no cutoff).

Two ways to turn a method's output into the ranking scored:

* ``strict`` (default): the method's own list, filtered to candidates; nodes it did
  not retrieve are simply absent.
* ``stark``: STaRK's evaluator fills every candidate the method did not predict in
  with ``min(score) - 1`` and ranks all candidates, so unretrieved candidates tie
  behind the predictions. torchmetrics sorts scores with a (non-stable) descending
  sort, so the order among tied candidates is an implementation detail; here it is
  ascending node index, and a method that returns few nodes can get credit for
  answers it never retrieved — which is why ``strict`` is the default.

Over documents (MuSiQue, HotpotQA), two more pairs, reported beside the four above:

* ``passage_recall_at_k`` (``recall@2``, ``recall@5``): HippoRAG's recall — the share
  of a question's supporting passages among the first k retrieved passages. A
  supporting paragraph is a group of passage nodes (one node, or the chunks it was cut
  into) and counts as retrieved when any node of its group is among the k; one the
  index lacks (an empty group) stays in the denominator, never retrieved.
* ``answer_passage_at_k`` (``answer@2``, ``answer@5``), where the question file says
  which supporting paragraph states the answer (MuSiQue's decomposition: its last
  step's paragraph): 1 when that paragraph is among the first k passages. Recall counts
  every hop alike; a reader can only answer when this one is in what it reads, so this
  is the retrieval figure an answer's F1 follows.
* ``exact_match`` and ``f1`` (``em``, ``f1``): SQuAD's — both strings normalised
  (lower case, ASCII punctuation removed, the articles a/an/the removed, whitespace
  collapsed), EM 1 when equal, F1 over their bags of tokens; the maximum over the
  gold strings (the answer and its aliases).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Collection, Iterable, Sequence

import numpy as np

MEASURES = ("hit@1", "hit@5", "recall@20", "mrr")
#: Passage recall at these k, HippoRAG's (questions over documents).
PASSAGE_KS = (2, 5)
PASSAGE_MEASURES = tuple(f"recall@{k}" for k in PASSAGE_KS)
#: Whether the passage stating the answer is among the first k (where it is known).
ANSWER_PASSAGE_MEASURES = tuple(f"answer@{k}" for k in PASSAGE_KS)
#: Scores of a written answer (``--answer``).
ANSWER_MEASURES = ("em", "f1")
#: Every measure a run may report, in the order tables show them.
ALL_MEASURES = (*MEASURES, *PASSAGE_MEASURES, *ANSWER_PASSAGE_MEASURES, *ANSWER_MEASURES)

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def hit_at_k(ranking: Sequence[int], gold: Collection[int], k: int) -> float:
    return float(any(node in gold for node in ranking[:k]))


def recall_at_k(ranking: Sequence[int], gold: Collection[int], k: int) -> float:
    if not gold:
        return 0.0
    return len(set(ranking[:k]) & set(gold)) / len(gold)


def reciprocal_rank(ranking: Sequence[int], gold: Collection[int]) -> float:
    for rank, node in enumerate(ranking, start=1):
        if node in gold:
            return 1.0 / rank
    return 0.0


def passage_recall_at_k(
    passages: Sequence[int], supporting: Sequence[Collection[int]], k: int
) -> float:
    """Share of the supporting paragraphs (each a group of passage nodes) that have a
    node among the first ``k`` of ``passages``; 0 with no supporting paragraph."""
    if not supporting:
        return 0.0
    top = set(passages[:k])
    return sum(1 for group in supporting if top.intersection(group)) / len(supporting)


def answer_passage_at_k(passages: Sequence[int], group: Collection[int], k: int) -> float:
    """1 when a node of ``group`` (the paragraph stating the answer: its node, or its
    chunks) is among the first ``k`` of ``passages``; 0 otherwise, and for an empty
    group (the index lacks that paragraph)."""
    return float(bool(set(passages[:k]).intersection(group)))


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, golds: Iterable[str]) -> float:
    """1 when the normalised prediction equals a normalised gold string, else 0."""
    guess = normalize_answer(prediction)
    return float(any(guess == normalize_answer(g) for g in golds))


def f1_score(prediction: str, golds: Iterable[str]) -> float:
    """SQuAD's token F1 of the prediction against the best-matching gold string."""
    guess = normalize_answer(prediction).split()
    best = 0.0
    for gold in golds:
        truth = normalize_answer(gold).split()
        same = sum((Counter(guess) & Counter(truth)).values())
        if same:
            precision, recall = same / len(guess), same / len(truth)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


def score_passages(
    passages: Sequence[int],
    supporting: Sequence[Collection[int]],
    answer_passage: Collection[int] | None = None,
) -> dict[str, float]:
    """``recall@2`` and ``recall@5`` of one question's retrieved passages, and
    ``answer@2`` / ``answer@5`` when the paragraph stating the answer is known (an empty
    group: known, not in the index, never retrieved)."""
    scores = {f"recall@{k}": passage_recall_at_k(passages, supporting, k) for k in PASSAGE_KS}
    if answer_passage is not None:
        scores.update(
            {f"answer@{k}": answer_passage_at_k(passages, answer_passage, k) for k in PASSAGE_KS}
        )
    return scores


def score_answer(prediction: str, golds: Sequence[str]) -> dict[str, float]:
    """``em`` and ``f1`` of one written answer (an empty one scores 0)."""
    return {"em": exact_match(prediction, golds), "f1": f1_score(prediction, golds)}


def filter_to_candidates(ranking: Iterable[int], candidates: np.ndarray | None) -> list[int]:
    """Drop duplicates and nodes that are not candidates (``candidates``: bool mask)."""
    seen: set[int] = set()
    out = []
    for node in ranking:
        node = int(node)
        if node in seen:
            continue
        if candidates is not None and not (0 <= node < len(candidates) and candidates[node]):
            continue
        seen.add(node)
        out.append(node)
    return out


def stark_ranking(ranking: Sequence[int], candidates: np.ndarray | None, n_nodes: int) -> list[int]:
    """The full ranking STaRK's evaluator scores: predictions, then every other candidate."""
    predicted = set(ranking)
    pool = np.flatnonzero(candidates) if candidates is not None else np.arange(n_nodes)
    return list(ranking) + [int(n) for n in pool if int(n) not in predicted]


def evaluate_query(
    ranking: Sequence[int],
    gold: Collection[int],
    *,
    candidates: np.ndarray | None = None,
    mode: str = "strict",
    n_nodes: int | None = None,
) -> dict[str, float]:
    """Hit@1, Hit@5, Recall@20 and MRR of one query, in [0, 1].

    Like STaRK's evaluator, both sides are restricted to the candidates: predictions
    that are not candidates are dropped, and so are gold answers (Recall@20 divides
    by the gold answers among the candidates; with none, every measure is 0)."""
    ranked = filter_to_candidates(ranking, candidates)
    gold = set(int(g) for g in gold)
    if candidates is not None:
        gold = {g for g in gold if 0 <= g < len(candidates) and candidates[g]}
    if mode == "stark":
        if n_nodes is None and candidates is None:
            raise ValueError("stark mode needs the candidate mask or the number of nodes")
        ranked = stark_ranking(ranked, candidates, n_nodes or len(candidates))  # type: ignore[arg-type]
    elif mode != "strict":
        raise ValueError(f"unknown mode {mode!r}; use 'strict' or 'stark'")
    return {
        "hit@1": hit_at_k(ranked, gold, 1),
        "hit@5": hit_at_k(ranked, gold, 5),
        "recall@20": recall_at_k(ranked, gold, 20),
        "mrr": reciprocal_rank(ranked, gold),
    }


def aggregate(per_query: Sequence[dict[str, float]]) -> dict[str, float]:
    """Mean of each measure over queries, in percent: each measure every query has (the
    four node measures, and passage recall and answer scores over documents; questions
    scored by their answers alone have only EM and F1)."""
    if not per_query:
        return {m: 0.0 for m in MEASURES}
    measures = [m for m in ALL_MEASURES if all(m in q for q in per_query)]
    return {m: 100.0 * float(np.mean([q[m] for q in per_query])) for m in measures}
