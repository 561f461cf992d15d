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
names is ignored (and removed by the next update or ``compact``). Before the first
segment is renamed into place an empty manifest is committed, so that a manifest
missing beside committed-looking segments is damage, not a killed first update.

``ark index describe`` commits the described schema the same way: a new
``described-NNNNNN.json`` named (with its size and sha256) by a new manifest
generation; the base's ``meta.json`` is never rewritten after its build (the
manifest's ``base`` is its sha256).

The manifest carries its own ``checksum``: the sha256 of its canonical JSON without
that key, covering every segment entry, the type and relation names and the counts;
an edited or truncated manifest is refused on open and by ``ark index verify``.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from ark._files import write_atomic
from ark.errors import IndexFormatError
from ark.graph import NodeTypeSummary, RelationSummary, Schema, descriptor_text
from ark.index._seg_bm25 import SegmentedBM25
from ark.index._seg_graph import SegmentedGraph
from ark.index._seg_stats import Stats, delta_index
from ark.index._verify import (
    file_checksums,
    sample_params,
    sample_problems,
    sampled_digests,
    sha256_of,
)

MANIFEST = "segments.json"
SEGMENTS_DIR = "segments"
MANIFEST_FORMAT = "ark-segments"
MANIFEST_VERSION = 2
#: Manifest versions this ARK reads: 1 (before the checksum) and 2.
READABLE_VERSIONS = (1, 2)
DESCRIBED_PREFIX = "described-"
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


def manifest_checksum(manifest: dict[str, Any]) -> str:
    """sha256 of the manifest's canonical JSON without its ``checksum`` key: whatever
    it names (segments, their order and files, names, counts, the described schema)."""
    body = {k: v for k, v in manifest.items() if k != "checksum"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def read_manifest(root: Path) -> dict[str, Any] | None:
    """The committed manifest (None: no update or describe was ever committed), its
    checksum checked. A manifest missing while ``segments/`` holds committed-looking
    segments is refused: the updates would silently vanish."""
    path = root / MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        lost = committed_looking(root)
        if lost:
            raise IndexFormatError(
                f"{path} is missing but {root / SEGMENTS_DIR} holds {len(lost)} committed-"
                f"looking segment(s) ({', '.join(lost[:3])}{', ...' if len(lost) > 3 else ''})"
                f": the updates cannot be opened without it. Restore {MANIFEST} from a "
                f"backup, or remove {root / SEGMENTS_DIR} to go back to the index as built "
                "(dropping its updates)"
            ) from None
        return None
    except UnicodeDecodeError as exc:
        raise IndexFormatError(f"{path} is corrupted ({exc}); run `ark index verify`") from None
    try:
        manifest = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise IndexFormatError(f"{path} is corrupted ({exc}); run `ark index verify`") from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise IndexFormatError(f"{path} is not an ARK segment manifest")
    version = manifest.get("version")
    if version not in READABLE_VERSIONS:
        raise IndexFormatError(
            f"{path} has segment format version {version}, this ARK reads "
            f"{', '.join(map(str, READABLE_VERSIONS))}; compact the index with the ARK "
            "that wrote it"
        )
    if version != 1 and manifest.get("checksum") != manifest_checksum(manifest):
        raise IndexFormatError(
            f"{path} does not match its checksum: it was edited or damaged after its "
            "commit (segments, names or counts changed); restore it from a backup"
        )
    if not isinstance(manifest.get("segments"), list):
        raise IndexFormatError(f"{path} has no list of segments")
    return manifest


def committed_looking(root: Path) -> list[str]:
    """Names in ``segments/`` an update commits (``NNNNNN``), sorted."""
    try:
        return sorted(
            p.name for p in (root / SEGMENTS_DIR).iterdir() if p.name.isdigit() and p.is_dir()
        )
    except (FileNotFoundError, NotADirectoryError):
        return []


def empty_manifest(base_digest: str, generation: int = 0) -> dict[str, Any]:
    """A manifest that names no segment (committed before the first segment lands,
    and by ``describe`` of an index never updated)."""
    return {
        "format": MANIFEST_FORMAT,
        "version": MANIFEST_VERSION,
        "base": base_digest,
        "generation": generation,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "segments": [],
    }


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
    """The one commit point of every change to an index after its build: the
    manifest, checksummed, written beside, fsynced and renamed over ``segments.json``
    (then the directory fsynced). Called with the update lock held."""
    manifest["version"] = MANIFEST_VERSION
    manifest["checksum"] = manifest_checksum(manifest)
    write_atomic(root / MANIFEST, json.dumps(manifest, indent=1))
    _fsync(root)


def write_described_file(root: Path, generation: int, text: str) -> dict[str, Any]:
    """Write a described schema as ``described-NNNNNN.json`` (fsynced, renamed into
    place); returns its manifest entry. Nothing names it until the manifest commits."""
    name = f"{DESCRIBED_PREFIX}{generation:06d}.json"
    data = text.encode("utf-8")
    write_atomic(root / name, data)
    _fsync(root)
    return {"file": name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def remove_unnamed_described(root: Path, keep: str | None) -> None:
    """Remove described files no manifest names any more (readers read theirs when
    they open). Called with the update lock held, after a commit."""
    for p in root.glob(f"{DESCRIBED_PREFIX}*.json"):
        if p.name != keep:
            p.unlink(missing_ok=True)
    for p in root.glob(f".{DESCRIBED_PREFIX}*.tmp"):
        p.unlink(missing_ok=True)


def read_described_bytes(root: Path, manifest: dict[str, Any] | None) -> bytes | None:
    """The bytes of the described schema the manifest names (None: it names none),
    checked against its recorded size and sha256."""
    entry = (manifest or {}).get("described")
    if entry is None:
        return None
    try:
        file = root / entry["file"]
        if "/" in entry["file"] or not entry["file"].startswith(DESCRIBED_PREFIX):
            raise ValueError(f"bad file name {entry['file']!r}")
        data = file.read_bytes()
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise IndexFormatError(
            f"{root / MANIFEST} names a described schema that cannot be read ({exc})"
        ) from None
    if len(data) != entry.get("bytes") or hashlib.sha256(data).hexdigest() != entry.get("sha256"):
        raise IndexFormatError(
            f"{file} does not match its size or checksum in {root / MANIFEST} (damaged or "
            "replaced); run `ark index describe` again"
        )
    return data


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


def open_snapshot(
    base: Any,
    manifest: dict[str, Any],
    *,
    base_digest: str | None = None,
    check_samples: bool = True,
    pin: bool = True,
) -> Any:
    """The :class:`~ark.index.Index` of base + the manifest's segments.

    ``base_digest``: the sha256 of the ``meta.json`` bytes the base was opened from
    (compared with the manifest's, so that a base swapped meanwhile is never mixed
    with another base's segments). ``pin``: read every segment's postings now, so
    that a compact or rebuild committed before the first query cannot change what
    this snapshot answers; a writer holding the update lock leaves them to the first
    query (nothing can replace them under it)."""

    root = base.path
    digest = base_digest if base_digest is not None else meta_digest(root)
    if manifest.get("base") != digest:
        raise IndexFormatError(
            f"{root / MANIFEST} belongs to another build of this index (the index was "
            "rebuilt or compacted meanwhile); reopen it"
        )
    problems = segment_problems(root, manifest, full=False) if check_samples else []
    if problems:
        raise IndexFormatError(f"{root} is corrupted: {'; '.join(problems)}")
    dirs = [root / SEGMENTS_DIR / e["name"] for e in manifest["segments"]]
    segs = [load_segment(d, postings=pin) for d in dirs]
    if pin:
        return assemble(base, manifest, segs)

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
    return type(base)(base.path, graph, bm25, meta)


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
