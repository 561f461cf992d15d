"""Moved to :mod:`ark.datasets` (question sets are dataset adapters, not evaluation);
these names stay importable from here for code written before the move."""

from ark.datasets import (
    Query,
    default_metaqa_dir,
    default_split,
    load_dataset,
    load_jsonl,
    load_metaqa,
    load_stark_qa,
    sample,
)

__all__ = [
    "Query",
    "default_metaqa_dir",
    "default_split",
    "load_dataset",
    "load_jsonl",
    "load_metaqa",
    "load_stark_qa",
    "sample",
]
