"""Datasets: the question sets and graphs ARK is measured on, as adapters.

The core packages know no dataset: ``ark.graph`` loads any graph and ``ark.index``
indexes it; what is particular to MetaQA (its relation schema, its question files)
and to STaRK (conversion of its knowledge bases, the node types it scores, its QA
files) and to MuSiQue and HotpotQA (their record formats, gold passages found by
title and text) lives here, with the generic JSONL question format, the plain format of
questions over a user's own documents (``docqa:``) and the one parser of
``--dataset`` specs. A new dataset is a module here plus a case in
:func:`load_dataset`.
"""

from ark.datasets._load_dataset import (
    DOCUMENT_DATASETS,
    default_split,
    is_document_dataset,
    load_dataset,
)
from ark.datasets._passages import PassageMatcher
from ark.datasets._queries import Query, load_jsonl, name_lookup, sample
from ark.datasets.docqa import load_docqa
from ark.datasets.hotpotqa import load_hotpotqa
from ark.datasets.metaqa import METAQA_SCHEMA, default_metaqa_dir, load_metaqa
from ark.datasets.musique import load_musique
from ark.datasets.stark import (
    CANDIDATE_TYPES,
    STARK_META_FILE,
    convert_stark,
    load_stark_qa,
    read_stark_meta,
    stark_candidate_types,
)
from ark.graph import register_known_schema, register_source_meta

register_known_schema("metaqa", METAQA_SCHEMA)  # MetaQA's kb.txt gets typed nodes
register_source_meta("stark", read_stark_meta)  # an index build records stark.json

__all__ = [
    "CANDIDATE_TYPES",
    "DOCUMENT_DATASETS",
    "METAQA_SCHEMA",
    "STARK_META_FILE",
    "PassageMatcher",
    "Query",
    "convert_stark",
    "default_metaqa_dir",
    "default_split",
    "is_document_dataset",
    "load_dataset",
    "load_docqa",
    "load_hotpotqa",
    "load_jsonl",
    "load_metaqa",
    "load_musique",
    "load_stark_qa",
    "name_lookup",
    "read_stark_meta",
    "sample",
    "stark_candidate_types",
]
