"""From raw documents to a graph: ``ark ingest``.

Documents (JSONL, a folder of ``.txt``/``.md``, a HippoRAG or HotpotQA JSON corpus)
are cut into overlapping chunks of a bounded number of tokens; each chunk becomes a
``passage`` node, and the entities and free-text relations that an extractor finds
in it become ``entity`` nodes and edges (the layout of :mod:`ark.graph._documents`).
Two extractors: a model (the local one by default, or any OpenAI-compatible server),
and a fast one with no LLM (spaCy's entities, noun phrases and dependency parse;
``pip install 'ark-retriever[ingest]'``). Extractions are cached per chunk in a work
directory, so a killed run resumes where it stopped.

    from ark.ingest import ingest

    report = ingest("docs/", "docs.idx", extractor="fast")
    print(report.nodes, report.edges, report.relations)
"""

from ark.ingest._chunks import (
    CHUNK_TOKENS,
    OVERLAP,
    Chunk,
    chunk_document,
    chunk_documents,
    count_tokens,
)
from ark.ingest._documents import DOCUMENT_SUFFIXES, Document, DocumentSet, read_documents
from ark.ingest._extraction import Extraction, clean_extraction
from ark.ingest._fast import CO_OCCURS, PIPELINES, FastExtractor, load_pipeline
from ark.ingest._ingest import IngestReport, ProgressFn, default_work_dir, ingest
from ark.ingest._model import (
    PROMPT_VERSION,
    RESPONSE_SCHEMA,
    ModelExtractor,
    response_schema,
    salvage_json,
)

__all__ = [
    "CHUNK_TOKENS",
    "CO_OCCURS",
    "DOCUMENT_SUFFIXES",
    "OVERLAP",
    "PIPELINES",
    "PROMPT_VERSION",
    "RESPONSE_SCHEMA",
    "Chunk",
    "Document",
    "DocumentSet",
    "Extraction",
    "FastExtractor",
    "IngestReport",
    "ModelExtractor",
    "ProgressFn",
    "chunk_document",
    "chunk_documents",
    "clean_extraction",
    "count_tokens",
    "default_work_dir",
    "ingest",
    "load_pipeline",
    "read_documents",
    "response_schema",
    "salvage_json",
]
