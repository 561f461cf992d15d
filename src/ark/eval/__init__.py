"""Evaluation: the evaluation API (:func:`evaluate`, :class:`Evaluation`), the one
resumable runner and its run store, metrics, baselines and reports."""

from ark.datasets import Query, load_jsonl, load_metaqa, load_stark_qa, sample
from ark.eval._evaluation import Evaluation, RaySettings, candidate_mask, evaluate
from ark.eval._lock import RunLockedError
from ark.eval._methods import (
    ArkMethod,
    BM25Method,
    DenseMethod,
    Method,
    MethodOutput,
    RetrieverMethod,
)
from ark.eval._runner import run_queries, run_resumable
from ark.eval._runstore import RunStore, read_records
from ark.eval._summary import summarize_run
from ark.eval.metrics import aggregate, evaluate_query

#: The former name of :func:`summarize_run` (kept for code that imported it).
summarize = summarize_run

__all__ = [
    "ArkMethod",
    "BM25Method",
    "DenseMethod",
    "Evaluation",
    "Method",
    "MethodOutput",
    "Query",
    "RaySettings",
    "RetrieverMethod",
    "RunLockedError",
    "RunStore",
    "aggregate",
    "candidate_mask",
    "evaluate",
    "evaluate_query",
    "load_jsonl",
    "load_metaqa",
    "load_stark_qa",
    "read_records",
    "run_queries",
    "run_resumable",
    "sample",
    "summarize",
    "summarize_run",
]
