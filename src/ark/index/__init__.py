"""The persisted index: graph arrays plus a BM25 index over node text."""

from ark.index._bm25 import BM25Index, BM25Params, build_bm25, score_nodes
from ark.index._compact import compact_index, live_edges, read_remap
from ark.index._dense import (
    DEFAULT_DENSE_MODEL,
    DenseEncoder,
    DenseIndex,
    build_dense,
    open_dense,
)
from ark.index._dirs import is_ark_index_dir
from ark.index._encoder import EncoderChoice, dense_available, linking_encoder, shared_encoder
from ark.index._integrity import repair_index, verify_index
from ark.index._store import (
    FORMAT_VERSION,
    Index,
    build_index,
    open_index,
    save_described,
    snapshot_stamp,
)
from ark.index._sync import sync_index
from ark.index._tokenize import Tokenizer, TokenizerConfig
from ark.index._update import Removal, add_to_index, remove_from_index, update_index

__all__ = [
    "DEFAULT_DENSE_MODEL",
    "FORMAT_VERSION",
    "BM25Index",
    "BM25Params",
    "DenseEncoder",
    "DenseIndex",
    "EncoderChoice",
    "Index",
    "Removal",
    "Tokenizer",
    "TokenizerConfig",
    "add_to_index",
    "build_bm25",
    "build_dense",
    "build_index",
    "compact_index",
    "dense_available",
    "is_ark_index_dir",
    "linking_encoder",
    "live_edges",
    "open_dense",
    "open_index",
    "read_remap",
    "remove_from_index",
    "repair_index",
    "save_described",
    "score_nodes",
    "shared_encoder",
    "snapshot_stamp",
    "sync_index",
    "update_index",
    "verify_index",
]
