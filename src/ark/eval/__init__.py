"""Evaluation: datasets, metrics, a resumable runner, baselines, and reports."""

from ark.eval._lock import RunLockedError
from ark.eval._methods import (
    ArkMethod,
    BM25Method,
    DenseMethod,
    Method,
    MethodOutput,
    RetrieverMethod,
)
from ark.eval._runner import run_queries, summarize
from ark.eval._store import RunStore, read_records
from ark.eval.datasets import Query, load_jsonl, load_metaqa, load_stark_qa, sample
from ark.eval.metrics import aggregate, evaluate_query

__all__ = [
    "ArkMethod",
    "BM25Method",
    "DenseMethod",
    "Method",
    "MethodOutput",
    "Query",
    "RetrieverMethod",
    "RunLockedError",
    "RunStore",
    "aggregate",
    "evaluate_query",
    "load_jsonl",
    "load_metaqa",
    "load_stark_qa",
    "read_records",
    "run_queries",
    "sample",
    "summarize",
]
