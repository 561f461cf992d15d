"""Evaluation: the evaluation API (:func:`evaluate`, :class:`Evaluation`), the one
resumable runner and its run store, metrics (node measures as STaRK's, passage recall as
HippoRAG's, answers' EM and F1 as SQuAD's), baselines and reports. The question sets
it runs over (``Query``, ``load_metaqa``...) are ``ark.datasets``'s."""

from ark.eval._answer_record import answer_record, scored_text
from ark.eval._evaluation import Evaluation, RaySettings, candidate_mask, evaluate
from ark.eval._lock import RunLockedError
from ark.eval._methods import (
    BM25Method,
    DenseMethod,
    Method,
    MethodOutput,
    RetrieverMethod,
    evidence_passages,
)
from ark.eval._ray import MethodSpec, RayMethod
from ark.eval._runner import run_queries, run_resumable
from ark.eval._runstore import RunStore, read_records
from ark.eval._summary import summarize_run
from ark.eval.metrics import (
    aggregate,
    evaluate_query,
    exact_match,
    f1_score,
    normalize_answer,
    passage_recall_at_k,
)

__all__ = [
    "BM25Method",
    "DenseMethod",
    "Evaluation",
    "Method",
    "MethodOutput",
    "MethodSpec",
    "RayMethod",
    "RaySettings",
    "RetrieverMethod",
    "RunLockedError",
    "RunStore",
    "aggregate",
    "answer_record",
    "candidate_mask",
    "evaluate",
    "evaluate_query",
    "evidence_passages",
    "exact_match",
    "f1_score",
    "normalize_answer",
    "passage_recall_at_k",
    "read_records",
    "run_queries",
    "run_resumable",
    "scored_text",
    "summarize_run",
]
