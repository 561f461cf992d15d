"""Typed graphs as columnar arrays, their schema summary, and loaders."""

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
from ark.graph._graph import DIRECTION_NAMES, IN, OUT, Graph, Neighborhood, descriptor_text
from ark.graph._labels import NameLabel, relation_label, split_words, type_label
from ark.graph._loaders import KNOWN_SCHEMAS, detect_format, load_graph, properties_to_text
from ark.graph._schema import NodeTypeSummary, RelationSummary, Schema
from ark.graph._stark import (
    CANDIDATE_TYPES,
    STARK_META_FILE,
    convert_stark,
    read_stark_meta,
    stark_candidate_types,
)

__all__ = [
    "CANDIDATE_TYPES",
    "DIRECTION_NAMES",
    "IN",
    "KNOWN_SCHEMAS",
    "OUT",
    "STARK_META_FILE",
    "DescribedSchema",
    "Graph",
    "NameLabel",
    "Neighborhood",
    "NodeTypeSummary",
    "RelationDoc",
    "RelationSummary",
    "Schema",
    "TypeDoc",
    "convert_stark",
    "describe_from_names",
    "descriptor_text",
    "detect_format",
    "is_described_schema_file",
    "load_graph",
    "merge_described",
    "properties_to_text",
    "read_schema_file",
    "read_stark_meta",
    "relation_label",
    "split_words",
    "stark_candidate_types",
    "type_label",
    "with_layer",
]
