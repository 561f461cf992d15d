"""Typed graphs as columnar arrays, their schema summary, and loaders."""

import warnings
from typing import Any

from ark.graph._described import (
    DescribedSchema,
    RelationDoc,
    TypeDoc,
    describe_from_names,
    is_described_schema_file,
    merge_described,
    read_schema_file,
    with_layer,
)
from ark.graph._documents import (
    ENTITY_TYPE,
    LAYOUT_VERSION,
    MENTIONS,
    PASSAGE_TYPE,
    entity_key,
    is_document_graph,
    layout_meta,
    passage_ids,
    passage_name,
    passage_text,
    relation_key,
)
from ark.graph._graph import DIRECTION_NAMES, IN, OUT, Graph, Neighborhood, descriptor_text
from ark.graph._labels import NameLabel, relation_label, split_words, type_label
from ark.graph._loaders import (
    KNOWN_SCHEMAS,
    SOURCE_FORMATS,
    detect_format,
    load_graph,
    properties_to_text,
    read_source_meta,
    register_known_schema,
    register_source_meta,
)
from ark.graph._schema import NodeTypeSummary, RelationSummary, Schema
from ark.graph._stores import load_hipporag, load_passages

__all__ = [
    "DIRECTION_NAMES",
    "ENTITY_TYPE",
    "IN",
    "KNOWN_SCHEMAS",
    "LAYOUT_VERSION",
    "MENTIONS",
    "OUT",
    "PASSAGE_TYPE",
    "SOURCE_FORMATS",
    "DescribedSchema",
    "Graph",
    "NameLabel",
    "Neighborhood",
    "NodeTypeSummary",
    "RelationDoc",
    "RelationSummary",
    "Schema",
    "TypeDoc",
    "describe_from_names",
    "descriptor_text",
    "detect_format",
    "entity_key",
    "is_described_schema_file",
    "is_document_graph",
    "layout_meta",
    "load_graph",
    "load_hipporag",
    "load_passages",
    "merge_described",
    "passage_ids",
    "passage_name",
    "passage_text",
    "properties_to_text",
    "read_schema_file",
    "read_source_meta",
    "register_known_schema",
    "register_source_meta",
    "relation_key",
    "relation_label",
    "split_words",
    "type_label",
    "with_layer",
]


#: STaRK's names, moved to ``ark.datasets`` (the graph package knows no dataset).
_MOVED = {"CANDIDATE_TYPES", "STARK_META_FILE", "convert_stark", "read_stark_meta",
          "stark_candidate_types"}  # fmt: skip
#: Names older code read from here without a warning (kept quiet for it).
_QUIET = {"STARK_META_FILE", "read_stark_meta"}


def __getattr__(name: str) -> Any:
    """The moved names, from ``ark.datasets``, with a DeprecationWarning."""
    if name not in _MOVED:
        raise AttributeError(f"module 'ark.graph' has no attribute {name!r}")
    from ark.datasets import stark

    if name not in _QUIET:
        warnings.warn(
            f"ark.graph.{name} moved to ark.datasets.{name}", DeprecationWarning, stacklevel=2
        )
    return getattr(stark, name)
