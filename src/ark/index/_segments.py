"""Delta segments on disk: their files, the manifest that commits them, and opening
a snapshot (base + every committed segment) as one graph and one BM25 index.

Layout inside ``INDEX_DIR`` (the base's files are untouched by updates)::

    segments.json        the manifest: which segments are live, in order, with each
                         file's size, sha256 and sampled digest, and the snapshot's
                         type and relation names, schema counts and totals
    segments/000001/     one update: its new nodes and edges, the adjacency entries,
                         delta edges and nodes it removed, and its new nodes' postings
        nodes.arrow          name, text of the new nodes
        node_type.npy        their type codes (snapshot-wide codes)
        edges.npy            added edges (src, relation, dst), node indices
        removed_entries.npy  positions in the base's adjacency arrays removed
        removed_edges.npy    ids of earlier segments' edges removed (their order)
        removed_nodes.npy    node indices removed
        postings/            vocab.json, indptr.npy, indices.npy, tf.npy, doc_len.npy

An update writes its segment under a temporary name, renames it into place, then
replaces ``segments.json`` (write to a temporary file, fsync, ``os.replace``): a
reader sees the old manifest or the new one, never a mix, and a segment no manifest
names is ignored (and removed by ``compact``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from ark.errors import IndexFormatError
from ark.graph import Schema, descriptor_text
from ark.graph._schema import NodeTypeSummary, RelationSummary
from ark.index._seg_bm25 import SegmentedBM25
from ark.index._seg_graph import SegmentedGraph
from ark.index._seg_stats import Stats, delta_index
from ark.index._verify import file_checksums, sample_params, sample_problems, sampled_digests

MANIFEST = "segments.json"
SEGMENTS_DIR = "segments"
MANIFEST_FORMAT = "ark-segments"
MANIFEST_VERSION = 1
ARRAYS = ("node_type", "edges", "removed_entries", "removed_edges", "removed_nodes")
POSTINGS = ("indptr", "indices", "tf", "doc_len")


@dataclass
class Segment:
    """One update's contents (node indices and codes are snapshot-wide)."""

    names: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    node_type: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    edges: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int64))
    removed_entries: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    removed_edges: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    removed_nodes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    vocab: dict[str, int] = field(default_factory=dict)
    postings: dict[str, np.ndarray] = field(default_factory=dict)


def meta_digest(root: Path) -> str:
    """The base a manifest belongs to: a compact's new base is another one."""
    return hashlib.sha256((root / "meta.json").read_bytes()).hexdigest()


def read_manifest(root: Path) -> dict[str, Any] | None:
    path = root / MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        manifest = json.loads(text)
    except ValueError as exc:
        raise IndexFormatError(f"{path} is corrupted ({exc}); run `ark index verify`") from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise IndexFormatError(f"{path} is not an ARK segment manifest")
    if manifest.get("version") != MANIFEST_VERSION:
        raise IndexFormatError(
            f"{path} has segment format version {manifest.get('version')}, this ARK reads "
            f"{MANIFEST_VERSION}; compact the index with the ARK that wrote it"
        )
    return manifest


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_segment(directory: Path, seg: Segment) -> dict[str, Any]:
    """Write ``seg``'s files into ``directory`` (new, empty) and fsync them; returns
    its manifest entry (file sizes, checksums, sampled digests)."""
    directory.mkdir(parents=True)
    table = pa.table(
        {
            "name": pa.array(seg.names, pa.large_string()),
            "text": pa.array(seg.texts, pa.large_string()),
        }
    )
    with (
        pa.OSFile(str(directory / "nodes.arrow"), "wb") as sink,
        ipc.new_file(sink, table.schema) as writer,
    ):
        writer.write_table(table)
    for name in ARRAYS:
        np.save(directory / f"{name}.npy", getattr(seg, name))
    post = directory / "postings"
    post.mkdir()
    (post / "vocab.json").write_text(json.dumps(seg.vocab, ensure_ascii=False), "utf-8")
    for name in POSTINGS:
        np.save(post / f"{name}.npy", seg.postings[name])
    files = sorted(p for p in directory.rglob("*") if p.is_file())
    for p in files:
        _fsync(p)
    _fsync(post)
    _fsync(directory)
    params = sample_params()
    return {
        "nodes": len(seg.names),
        "edges": len(seg.edges),
        "files": {str(p.relative_to(directory)): p.stat().st_size for p in files},
        "checksums": file_checksums(directory),
        "samples": {"params": params, "digests": sampled_digests(directory, params)},
    }


def commit_manifest(root: Path, manifest: dict[str, Any]) -> None:
    """The commit point of an update: ``segments.json`` replaced atomically."""
    tmp = root / f".{MANIFEST}.tmp"
    with tmp.open("w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, root / MANIFEST)
    _fsync(root)


def load_segment(directory: Path, *, postings: bool = True) -> Segment:
    """A segment's graph part, and its postings unless ``postings`` is false (an
    update reads only the graph; the postings are read on a snapshot's first query)."""
    table = ipc.open_file(pa.memory_map(str(directory / "nodes.arrow"), "r")).read_all()
    seg = Segment(
        names=table.column("name").combine_chunks(),  # type: ignore[arg-type]
        texts=table.column("text").combine_chunks(),  # type: ignore[arg-type]
    )
    for name in ARRAYS:
        setattr(seg, name, np.load(directory / f"{name}.npy"))
    if postings:
        load_postings(directory, seg)
    return seg


def load_postings(directory: Path, seg: Segment) -> None:
    post = directory / "postings"
    seg.vocab = json.loads((post / "vocab.json").read_text(encoding="utf-8"))
    seg.postings = {name: np.load(post / f"{name}.npy") for name in POSTINGS}


def schema_from_counts(manifest: dict[str, Any]) -> Schema:
    """The snapshot's schema summary, ordered as a rebuild's ``summarize`` orders it."""
    types, rels = manifest["node_type_names"], manifest["relation_names"]
    node_types = tuple(
        NodeTypeSummary(n, int(c)) for n, c in zip(types, manifest["type_counts"], strict=True)
    )
    rows = sorted(tuple(r) for r in manifest["edge_counts"] if r[3] > 0)
    relations = [RelationSummary(rels[r], types[s], types[t], int(c)) for r, s, t, c in rows]
    present = {r.name for r in relations}
    relations += [RelationSummary(n, "?", "?", 0) for n in rels if n not in present]
    return Schema(node_types, tuple(relations))


def segment_problems(root: Path, manifest: dict[str, Any], *, full: bool) -> list[str]:
    """Missing, resized or damaged segment files (sampled digests; sha256 if ``full``)."""
    from ark.index._verify import sha256_of

    problems = []
    for entry in manifest.get("segments", []):
        directory = root / SEGMENTS_DIR / entry["name"]
        for name, size in entry["files"].items():
            file = directory / name
            rel = f"{SEGMENTS_DIR}/{entry['name']}/{name}"
            if not file.is_file():
                problems.append(f"{rel} is missing")
            elif file.stat().st_size != size:
                problems.append(f"{rel} has {file.stat().st_size} bytes, expected {size}")
            elif full and sha256_of(file) != entry["checksums"].get(name):
                problems.append(f"{rel} does not match its checksum (damaged or replaced)")
        if not full and not problems:
            problems += [
                f"{SEGMENTS_DIR}/{entry['name']}/{p}"
                for p in sample_problems(directory, entry["samples"])
            ]
    return problems


def open_snapshot(base: Any, manifest: dict[str, Any], *, check_samples: bool = True) -> Any:
    """The :class:`~ark.index.Index` of base + the manifest's segments."""

    root = base.path
    if manifest.get("base") != meta_digest(root):
        raise IndexFormatError(
            f"{root / MANIFEST} belongs to another build of this index (the index was "
            "rebuilt or compacted meanwhile); reopen it"
        )
    problems = segment_problems(root, manifest, full=False) if check_samples else []
    if problems:
        raise IndexFormatError(f"{root} is corrupted: {'; '.join(problems)}")
    dirs = [root / SEGMENTS_DIR / e["name"] for e in manifest["segments"]]
    segs = [load_segment(d, postings=False) for d in dirs]

    def postings() -> list[Segment]:
        for d, seg in zip(dirs, segs, strict=True):
            load_postings(d, seg)
        return segs

    return assemble(base, manifest, segs, postings)


def assemble(
    base: Any,
    manifest: dict[str, Any],
    segs: list[Segment],
    postings: Callable[[], list[Segment]] | None = None,
) -> Any:
    """Combine an opened base and loaded segments into one snapshot ``Index``; the
    BM25 delta is built on first use, from ``postings()`` (default: ``segs`` hold
    them)."""
    from ark.index._store import Index

    g0, b0 = base.graph, base.bm25
    n_base = g0.n_nodes
    cat = _concat
    names = _strings([s.names for s in segs])
    texts = _strings([s.texts for s in segs])
    node_type = cat([s.node_type for s in segs], np.int64)
    edges = np.concatenate([s.edges.reshape(-1, 3) for s in segs] or [np.zeros((0, 3))]).astype(
        np.int64
    )
    live_edge = np.ones(len(edges), dtype=bool)
    live_edge[cat([s.removed_edges for s in segs], np.int64)] = False
    removed_nodes = np.unique(cat([s.removed_nodes for s in segs], np.int64))
    n_total = n_base + len(node_type)
    if len(edges) and (edges[:, [0, 2]].min() < 0 or edges[:, [0, 2]].max() >= n_total):
        raise IndexFormatError(f"{base.path}: a segment's edge names a node that does not exist")
    graph = SegmentedGraph(
        g0,
        names=names,
        texts=texts,
        node_type=node_type,
        node_type_names=manifest["node_type_names"],
        relation_names=manifest["relation_names"],
        edges=edges[live_edge],
        edge_ids=np.flatnonzero(live_edge),
        removed_entries=cat([s.removed_entries for s in segs], np.int64),
        removed_nodes=removed_nodes,
        schema=schema_from_counts(manifest),
        n_edges=int(manifest["counts"]["edges"]),
    )
    dead_base = removed_nodes[removed_nodes < n_base]
    dead_delta = removed_nodes[removed_nodes >= n_base] - n_base
    n_delta = len(node_type)

    def build() -> tuple[Any, np.ndarray, dict[str, int], Stats]:
        full = postings() if postings is not None else segs
        vocab, indptr, indices, tf, doc_len = _merge_postings(full, n_delta, dead_delta)
        removed_df = _removed_df(g0, b0, dead_base)
        base_len = int(np.asarray(b0.doc_len).sum(dtype=np.int64))
        alive = np.ones(len(doc_len), dtype=bool)
        alive[dead_delta] = False
        stats = Stats(
            n_docs=n_base - len(dead_base) + int(alive.sum()),
            total_len=base_len
            - int(np.asarray(b0.doc_len)[dead_base].sum(dtype=np.int64))
            + int(doc_len[alive].sum(dtype=np.int64)),
        )
        delta = delta_index(vocab, indptr, indices, tf, doc_len, b0, removed_df, stats)
        return delta, dead_base, removed_df, stats

    bm25 = SegmentedBM25.lazy(b0, n_base, n_delta, build)
    meta = {
        **base.meta,
        "counts": {**base.meta["counts"], **manifest["counts"]},
        "base_counts": base.meta["counts"],
        "node_type_names": manifest["node_type_names"],
        "relation_names": manifest["relation_names"],
        "segments": {
            "generation": manifest["generation"],
            "live": len(segs),
            "names": [e["name"] for e in manifest["segments"]],
            "delta_edges": len(edges),
        },
    }
    return Index(base.path, graph, bm25, meta)  # type: ignore[arg-type]


def _strings(parts: list[Any]) -> pa.Array:
    """One large_string array of segments' name (or text) columns, without going
    through Python strings (a loaded segment holds Arrow arrays already)."""
    arrays = [
        p.cast(pa.large_string()) if isinstance(p, pa.Array) else pa.array(p, pa.large_string())
        for p in parts
    ]
    return pa.concat_arrays(arrays) if arrays else pa.array([], pa.large_string())


def _concat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    return (
        np.concatenate([np.asarray(p, dtype=dtype).ravel() for p in parts])
        if parts
        else np.zeros(0, dtype)
    )


def _merge_postings(
    segs: list[Segment], n_delta: int, dead: np.ndarray
) -> tuple[dict[str, int], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One term-major posting list over every delta document (documents numbered from
    0 in segment order), without the removed ones."""
    vocab: dict[str, int] = {}
    terms, docs, tfs, lens = [], [], [], []
    first = 0
    for s in segs:
        local = np.fromiter(
            (vocab.setdefault(w, len(vocab)) for w in s.vocab), np.int64, len(s.vocab)
        )
        p = s.postings
        counts = np.diff(p["indptr"])
        terms.append(np.repeat(local, counts))
        docs.append(np.asarray(p["indices"], np.int64) + first)
        tfs.append(np.asarray(p["tf"], np.uint32))
        lens.append(np.asarray(p["doc_len"], np.int64))
        first += len(s.names)
    term = _concat(terms, np.int64)
    doc = _concat(docs, np.int64)
    tf = _concat(tfs, np.uint32)
    doc_len = _concat(lens, np.int64)
    if first != n_delta or len(doc_len) != n_delta:
        raise IndexFormatError("a segment's postings do not match its nodes")
    if len(dead):
        keep = ~np.isin(doc, dead)
        term, doc, tf = term[keep], doc[keep], tf[keep]
    order = np.lexsort((doc, term))
    indptr = np.zeros(len(vocab) + 1, np.int64)
    np.cumsum(np.bincount(term, minlength=len(vocab)), out=indptr[1:])
    return vocab, indptr, doc[order].astype(np.int32), tf[order], doc_len


def _removed_df(graph: Any, bm25: Any, dead_base: np.ndarray) -> dict[str, int]:
    """How many removed base documents hold each term (their descriptors re-tokenised:
    the base keeps no forward index)."""
    out: dict[str, int] = {}
    tokens = bm25.tokenizer.tokens
    for i in dead_base.tolist():
        text = descriptor_text(graph.name(i), graph.type_name(i), graph.text(i))
        for w in set(tokens(text)):
            out[w] = out.get(w, 0) + 1
    return out
