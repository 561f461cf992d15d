"""The persisted index directory: build once, open (memory-mapped) many times.

Layout of ``INDEX_DIR``::

    meta.json        format version, counts, source checksum, BM25 settings, file sizes,
                     the sha256 of every file (checked by ``ark index verify``) and its
                     sampled digest (checked on every open)
    schema.json      node types and relations with counts
    described.json   relations and types with labels, descriptions, aliases, examples
                     (from the names, ``ark index describe`` and ``--schema FILE``)
    nodes.arrow      Arrow IPC file: name, text (memory-mapped)
    node_type.npy    type code per node (int16; int32 past 32,768 types)
    indptr.npy       CSR row pointers (int64, N + 1) over both edge directions
    adj_node.npy     neighbor of each adjacency entry (int32)
    adj_code.npy     relation code * 2 + direction (0 out, 1 in) (int16; int32 past
                     16,384 relations)
    bm25/            a bm25s index (``bm25s.BM25.load`` opens it too)

Opening reads only ``meta.json``, ``schema.json``, the vocabulary and a sample of each
file's blocks (its sampled digest); every array is memory-mapped, so opening a
multi-GB index takes a fraction of a second. See ``docs/index-integrity.md``.
"""

from __future__ import annotations

import hashlib
import io
import json
import mmap
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from ark.errors import ArkError, IndexFormatError
from ark.graph import (
    DescribedSchema,
    Graph,
    Schema,
    SourceFormat,
    TableLayout,
    descriptor_text,
    detect_format,
    is_described_schema_file,
    load_graph,
    merge_described,
    postgres_where,
    read_schema_file,
    read_source_meta,
)
from ark.index._bm25 import BM25Index, BM25Params, ProgressFn, build_bm25
from ark.index._dirs import (  # noqa: F401 - re-exported: tests and _dense use them here
    FORMAT_NAME,
    META_FILE,
    STALE_AFTER_S,
    _check_writable_target,
    _chmod_as_umask,
    _exchange,
    _hold,
    is_ark_index_dir,
    remove_stale_builds,
    update_lock,
)
from ark.index._params import bm25_problem, token_pattern_problem
from ark.index._segments import (
    MANIFEST,
    commit_manifest,
    empty_manifest,
    meta_digest,
    open_snapshot,
    read_described_bytes,
    read_manifest,
    remove_unnamed_described,
    write_described_file,
)
from ark.index._tokenize import TOKEN_PATTERN, Tokenizer, TokenizerConfig, TokenizerSettingsError
from ark.index._verify import (
    check_structure,
    file_checksums,
    sample_params,
    sample_problems,
    sampled_digests,
)

FORMAT_VERSION = 1
SCHEMA_FILE = "schema.json"
DESCRIBED_FILE = "described.json"
NODES_FILE = "nodes.arrow"
ARRAY_FILES = ("node_type.npy", "indptr.npy", "adj_node.npy", "adj_code.npy")
BM25_DIR = "bm25"

REBUILD_HINT = "rebuild it with `ark index build SOURCE -o {path}`"


_T = TypeVar("_T")
_MEMO_LOCK = threading.Lock()


@dataclass
class Index:
    """An opened index: the graph, its BM25 index and its metadata."""

    path: Path
    graph: Graph
    bm25: BM25Index
    meta: dict[str, Any]

    def memo(self, key: str, build: Callable[[], _T]) -> _T:
        """The value ``build()`` gives, made once per opened index and ``key``.

        Why: what readers derive from an index (a linker, the question readings, the
        chain search's step table) costs seconds to make and is the same for every
        question; an opened index is one snapshot (an update or describe since is
        another opening), so it is the right owner. Thread-safe: concurrent agents of
        one retrieval get one value (``build`` may run twice under a race; the first
        stored wins)."""
        memo: dict[str, Any] = self.__dict__.setdefault("_memo", {})
        if key in memo:
            return memo[key]  # type: ignore[no-any-return]
        value = build()
        with _MEMO_LOCK:
            return memo.setdefault(key, value)  # type: ignore[no-any-return]

    @property
    def schema(self) -> Schema:
        return self.graph.schema

    @property
    def described(self) -> DescribedSchema:
        """The described schema (the one the manifest names, else ``described.json``;
        an index built before it existed gets the one its names give). An opened index
        parses the bytes it read when it was opened, so a describe, compact or rebuild
        committed since does not change what it says. Parsed once."""
        cached = self.__dict__.get("_described")
        if cached is None:
            raw = self.__dict__.get("_described_bytes")
            file = self.path / DESCRIBED_FILE
            if raw is None and "_described_bytes" not in self.__dict__ and file.is_file():
                raw = file.read_bytes()  # an Index made in memory (a build's result)
            if raw is not None:
                try:
                    cached = DescribedSchema.from_dict(json.loads(raw.decode("utf-8")))
                except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
                    raise IndexFormatError(
                        f"the described schema of {self.path} is malformed ({exc}); run "
                        "`ark index describe` again or rebuild with --schema"
                    ) from None
            else:
                cached = DescribedSchema.from_names(self.schema, self.graph)
            cached = _with_new_names(cached, self.schema)
            self.__dict__["_described"] = cached
        return cached

    @property
    def base_digest(self) -> str:
        """Which build of the index this is: the sha256 of the base's ``meta.json`` as
        read when the index was opened (as on disk now, for an index made in memory).
        A rebuild or compact changes it, an update or describe does not, so what is
        keyed by it (a manifest, ``ark index describe``'s resume file) is never read
        against another build."""
        return self.__dict__.get("_base_digest") or meta_digest(self.path)


class _PinnedFile:
    """A file mapped when an index is opened and read on first use (the BM25
    vocabulary): the mapping keeps the bytes of the file as opened even when a
    compact or rebuild replaces or deletes it before that first use. Reads like the
    ``Path`` it stands for (``open``, ``str``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            self._map: mmap.mmap | None = (
                mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else None
            )

    def open(self, encoding: str = "utf-8") -> io.StringIO:
        data = self._map[:] if self._map is not None else b""
        if self._map is not None:  # read once (the caller caches what it parses)
            self._map.close()
            self._map = None
        return io.StringIO(data.decode(encoding))

    def __str__(self) -> str:
        return str(self.path)

    def __fspath__(self) -> str:
        return str(self.path)


def _with_new_names(described: DescribedSchema, schema: Schema) -> DescribedSchema:
    """``described`` plus what the names give for relations and types added by
    updates since it was written."""
    new_rels = [r for r in schema.relation_names if described.relation(r) is None]
    new_types = [t for t in schema.node_type_names if described.type(t) is None]
    if not new_rels and not new_types:
        return described
    names = DescribedSchema.from_names(schema)
    return DescribedSchema(
        (*described.relations, *(d for d in names.relations if d.name in set(new_rels))),
        (*described.types, *(d for d in names.types if d.name in set(new_types))),
        described.sources,
        described.layers,
        described.fits,
    )


def build_index(
    source: str | Path,
    out_dir: str | Path,
    *,
    fmt: SourceFormat = "auto",
    schema_file: str | Path | None = None,
    types_file: str | Path | None = None,
    tokenizer: TokenizerConfig | None = None,
    params: BM25Params | None = None,
    progress: ProgressFn | None = None,
    layout: TableLayout | None = None,
) -> Index:
    """Load ``source``, build the adjacency and BM25 index, and write ``out_dir``.

    ``layout``: the tables and columns of a database source (PostgreSQL, LadybugDB).

    Written to a temporary sibling directory and moved into place at the end, so an
    interrupted build never leaves a half-written index behind.
    """
    out = Path(out_dir)
    tokenizer = tokenizer or TokenizerConfig()
    params = params or BM25Params()
    problem = bm25_problem(params.k1, params.b) or token_pattern_problem(
        tokenizer.token_pattern, default=TOKEN_PATTERN
    )
    if problem:
        raise ArkError(f"cannot build {out}: {problem}")
    _check_writable_target(out)
    started = time.perf_counter()
    if progress:
        progress("loading graph", 0, 1)
    graph = load_graph(source, fmt, schema_file=schema_file, types_file=types_file, layout=layout)
    if progress:
        progress("loading graph", 1, 1)
    described = DescribedSchema.from_names(graph.schema, graph)
    if schema_file is not None and is_described_schema_file(schema_file):
        try:
            described = merge_described(
                described, read_schema_file(schema_file), f"file:{Path(schema_file).name}"
            )
        except ValueError as exc:
            raise IndexFormatError(f"{schema_file}: {exc}") from None
    # A converter's notes beside its tables (STaRK's), and what the loader noted (a
    # document store's layout and the triples it skipped).
    found = {**read_source_meta(source), **graph.notes}
    # Indexing and the swap hold the lock every writer of ``out`` takes: an update
    # is ordered before the build (and replaced by it) or after it (on the new
    # base), never planned on one base and committed on the other. (The source is
    # read before, so that a bad source fails fast and leaves nothing behind.)
    with update_lock(out):
        return write_index(
            graph,
            described,
            out,
            source_info=_source_info(source, fmt, graph, layout),
            tokenizer=tokenizer,
            params=params,
            extra=found or None,
            progress=progress,
            started=started,
        )


def write_index(
    graph: Graph,
    described: DescribedSchema,
    out: Path,
    *,
    source_info: dict[str, Any],
    tokenizer: TokenizerConfig,
    params: BM25Params,
    extra: dict[str, Any] | None = None,
    files: dict[str, Any] | None = None,
    progress: ProgressFn | None = None,
    started: float | None = None,
) -> Index:
    """Index ``graph`` (BM25 over its descriptors) and write it as ``out``: into a
    temporary sibling, then swapped into place (:func:`_swap_in`). ``extra`` entries
    go into ``meta.json``; ``files`` (name -> array) are saved beside the index's own
    (``compact`` writes its ``remap.npy`` so)."""
    started = time.perf_counter() if started is None else started
    tok = Tokenizer(tokenizer)
    bm25 = build_bm25(_descriptors(graph), graph.n_nodes, tok, params, progress=progress)

    out.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_builds(out)  # a killed build's temporary copy can be gigabytes
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    held = [_hold(tmp)]  # live: a concurrent build's cleanup leaves it alone
    try:
        if progress:
            progress("writing", 0, 1)
        _write_graph(graph, tmp)
        _write_described(described, tmp)
        bm25.save(tmp / BM25_DIR)
        for name, array in (files or {}).items():
            np.save(tmp / name, array)
        meta = {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "source": source_info,
            "counts": {
                "nodes": graph.n_nodes,
                "edges": graph.n_edges,
                "adjacency_entries": len(graph.adj_node),
                "node_types": len(graph.node_type_names),
                "relations": len(graph.relation_names),
                "vocabulary": len(bm25.vocab),
                "postings": len(bm25.indices),
            },
            "node_type_names": graph.node_type_names,
            "relation_names": graph.relation_names,
            "tokenizer": tokenizer.to_dict(),
            "bm25": {"method": params.method, "k1": params.k1, "b": params.b},
            "files": _file_sizes(tmp),
            "checksums": file_checksums(tmp),  # every file, whatever the layout
            # checked on every open: cheap, and catches damage that keeps the size
            "samples": {
                "params": sample_params(),
                "digests": sampled_digests(tmp, sample_params()),
            },
            "build_seconds": round(time.perf_counter() - started, 2),
        }
        meta.update(extra or {})
        (tmp / META_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")
        _chmod_as_umask(tmp)  # mkdtemp makes 0700; an index is shared like any folder
        _check_writable_target(out)  # again: it may have changed during the build
        if out.exists() and _exchange(tmp, out):
            shutil.rmtree(tmp, ignore_errors=True)  # now the previous index
        else:  # no atomic exchange here: park the previous index, then rename
            old = None
            if out.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
                held.append(_hold(old))
                os.replace(out, old / "index")
            os.replace(tmp, out)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        for fd in held:
            if fd is not None:
                os.close(fd)  # releases the lock
    remove_stale_builds(out)  # now that an index is in place, a stale old copy may go
    if progress:
        progress("writing", 1, 1)
    return Index(out, graph, bm25, meta)


def _descriptors(graph: Graph, batch: int = 50_000) -> Iterator[str]:
    """Each node's descriptor text, materialised a batch at a time to bound memory."""
    type_names = graph.node_type_names
    for start in range(0, graph.n_nodes, batch):
        stop = min(start + batch, graph.n_nodes)
        names = graph.names.slice_pylist(start, stop)
        texts = graph.texts.slice_pylist(start, stop)
        types = graph.node_type[start:stop].tolist()
        for n, t, x in zip(names, types, texts, strict=True):
            yield descriptor_text(n, type_names[t], x)


def _write_graph(graph: Graph, directory: Path) -> None:
    table = pa.table({"name": graph.names.arrow, "text": graph.texts.arrow})
    with (
        pa.OSFile(str(directory / NODES_FILE), "wb") as sink,
        ipc.new_file(sink, table.schema) as writer,
    ):
        writer.write_table(table)
    np.save(directory / "node_type.npy", graph.node_type)
    np.save(directory / "indptr.npy", graph.indptr)
    np.save(directory / "adj_node.npy", graph.adj_node)
    np.save(directory / "adj_code.npy", graph.adj_code)
    (directory / SCHEMA_FILE).write_text(json.dumps(graph.schema.to_dict(), indent=2), "utf-8")


def _write_described(described: DescribedSchema, directory: Path) -> None:
    text = json.dumps(described.to_dict(), indent=1, ensure_ascii=False)
    (directory / DESCRIBED_FILE).write_text(text, encoding="utf-8")


def save_described(index: Index, described: DescribedSchema) -> None:
    """Store ``described`` as the index's described schema: a new manifest generation
    naming a new ``described-NNNNNN.json`` (written, fsynced, renamed; the manifest's
    commit is the one commit point), under the lock every writer takes. The base's
    ``meta.json`` is never touched, so the updates committed on it stay valid.
    Refused if the index was rebuilt or compacted since ``index`` was opened (its
    relations may be other ones)."""
    root = index.path
    text = json.dumps(described.to_dict(), indent=1, ensure_ascii=False)
    with update_lock(root):
        current = meta_digest(root)
        opened = index.__dict__.get("_base_digest")
        if opened is not None and opened != current:
            raise ArkError(
                f"{root} was rebuilt or compacted after it was opened; nothing was stored: "
                "run `ark index describe` again"
            )
        previous = read_manifest(root)
        if previous is None:
            manifest = empty_manifest(current, generation=1)
        else:
            if previous.get("base") != current:
                raise IndexFormatError(
                    f"{root / MANIFEST} belongs to another build of this index; run "
                    "`ark index verify`"
                )
            manifest = {
                **previous,
                "generation": int(previous["generation"]) + 1,
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
        entry = write_described_file(root, manifest["generation"], text)
        manifest["described"] = entry
        commit_manifest(root, manifest)
        remove_unnamed_described(root, entry["file"])
    index.__dict__["_described_bytes"] = text.encode("utf-8")
    index.__dict__["_described"] = _with_new_names(described, index.schema)


def _file_sizes(directory: Path) -> dict[str, int]:
    return {
        str(p.relative_to(directory)): p.stat().st_size
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def _source_info(
    source: str | Path, fmt: str, graph: Graph, layout: TableLayout | None
) -> dict[str, Any]:
    """What the index was built from: the files' path, size and digest; for a database,
    where it is (never a secret), its tables, and a digest of the graph read."""
    kind = detect_format(source) if fmt == "auto" else fmt
    if kind == "postgres":
        return {
            "path": postgres_where(str(source)),
            "format": "postgres",
            "tables": (layout or TableLayout()).to_dict(),
            "sha256": _graph_digest(graph),
        }
    source = Path(source)
    if kind == "ladybug":
        return {
            "path": str(source.resolve()),
            "format": "ladybug",
            "name_property": (layout or TableLayout()).name,
            "sha256": _graph_digest(graph),
        }
    files = sorted(p for p in source.iterdir() if p.is_file()) if source.is_dir() else [source]
    digest = hashlib.sha256()
    size = 0
    for p in files:
        digest.update(p.name.encode())
        with p.open("rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
                size += len(chunk)
    return {
        "path": str(source.resolve()),
        "format": fmt,
        "sha256": digest.hexdigest(),
        "bytes": size,
    }


def _graph_digest(graph: Graph) -> str:
    """A digest of what a graph holds (names, types, texts, edges): a database has no
    file to hash, and this changes exactly when what was read does."""
    digest = hashlib.sha256()
    for column in (graph.names.arrow, graph.texts.arrow):
        for value in column.to_pylist():
            digest.update(value.encode("utf-8", "surrogatepass") + b"\x00")
    digest.update("\x00".join(graph.node_type_names).encode())
    digest.update("\x00".join(graph.relation_names).encode())
    for array in (graph.node_type, graph.indptr, graph.adj_node, graph.adj_code):
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def snapshot_stamp(path: str | Path) -> tuple[Any, ...]:
    """What changes when an update commits or a compact or build replaces the index:
    compared between calls by a server to pick up a new snapshot (a few ``stat``s)."""
    root = Path(path)
    out: list[Any] = []
    for p in (root, root / META_FILE, root / "segments.json"):
        try:
            st = p.stat()
            out.append((st.st_ino, st.st_mtime_ns, st.st_size))
        except OSError:
            out.append(None)
    return tuple(out)


def open_index(path: str | Path, *, check_samples: bool = True, pin: bool = True) -> Index:
    """Open an index directory (its base and every committed update segment) without
    reading or re-tokenising the source.

    An update or compact committing meanwhile can make one attempt read files of two
    snapshots; such a failure is retried on the new snapshot. Otherwise as
    :func:`_open_once`. ``pin`` (default): what the index reads on first use (the
    BM25 vocabulary, update segments' postings) is mapped or read now, so that the
    opened snapshot answers the same whatever is committed after; only a writer
    holding the update lock turns it off.
    """
    root = Path(path)
    for attempt in range(4):
        stamp = snapshot_stamp(root)
        try:
            return _open_once(root, check_samples=check_samples, pin=pin)
        except IndexFormatError:
            if attempt == 3 or snapshot_stamp(root) == stamp:
                raise
            time.sleep(0.01 * (attempt + 1))
    raise AssertionError("unreachable")


def _open_once(root: Path, *, check_samples: bool = True, pin: bool = True) -> Index:
    """Open an index directory without reading or re-tokenising the source.

    Refuses, with what to do, an index that is missing, of another format version,
    or whose files do not match what ``meta.json`` recorded: sizes, structure (arrays
    in range, row pointers monotone) and, unless ``check_samples`` is false, each
    file's sampled digest (256 KiB per large file, whatever the index's size). Reading
    every byte is ``ark index verify``'s job (:func:`verify_index`).
    """
    hint = REBUILD_HINT.format(path=root)
    meta_path = root / META_FILE
    if not root.is_dir():
        raise IndexFormatError(
            f"no index at {root}: build one with `ark index build SOURCE -o {root}`"
        )
    if not meta_path.is_file():
        # Never advice to write an index there: the folder may be the user's documents.
        raise IndexFormatError(
            f"{root} is not an ARK index (no {META_FILE}): give the directory an index "
            "was written to (`ark index build SOURCE -o INDEX`, or `ark ingest DOCS -o "
            "INDEX` for documents)"
        )
    try:
        meta_bytes = meta_path.read_bytes()
        meta = json.loads(meta_bytes.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise IndexFormatError(f"{meta_path} is corrupted ({exc}); {hint}") from exc
    base_digest = hashlib.sha256(meta_bytes).hexdigest()
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
        raise IndexFormatError(f"{meta_path} is not ARK index metadata; {hint}")
    version = meta.get("format_version")
    if version != FORMAT_VERSION:
        raise IndexFormatError(
            f"{root} has index format version {version}, this ARK reads version "
            f"{FORMAT_VERSION}; {hint}"
        )
    if "base_counts" in meta and "segments" in meta:
        raise IndexFormatError(
            f"{meta_path} holds an updated snapshot's meta (written by `ark index describe` "
            "of an earlier ARK), not the base's; its updates are intact: run "
            f"`ark index verify --repair {root}` to restore it and keep them"
        )
    for name, size in meta.get("files", {}).items():
        file = root / name
        if not file.is_file():
            raise IndexFormatError(f"{root} is incomplete: {name} is missing; {hint}")
        if file.stat().st_size != size:
            raise IndexFormatError(
                f"{root} is corrupted: {name} has {file.stat().st_size} bytes, "
                f"expected {size}; {hint}"
            )
    tokenizer = _open_tokenizer(meta_path, meta, hint)
    settings = meta.get("bm25")
    problem = (
        bm25_problem(settings.get("k1"), settings.get("b"))
        if isinstance(settings, dict)
        else "the 'bm25' entry is missing or not a mapping"
    )
    if problem:
        raise IndexFormatError(f"{meta_path}: bm25: {problem}; {hint}")
    try:
        graph = _open_graph(root, meta)
        bm25 = BM25Index.load(
            root / BM25_DIR,
            tokenizer,
            BM25Params(**meta["bm25"]),
            n_docs=meta["counts"]["nodes"],
        )
        if pin and bm25._vocab_file is not None:  # read on the first query: map it now
            bm25._vocab_file = _PinnedFile(bm25._vocab_file)  # type: ignore[assignment]
        described_file = root / DESCRIBED_FILE
        described_bytes = described_file.read_bytes() if described_file.is_file() else None
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowInvalid) as exc:
        raise IndexFormatError(f"{root} could not be read ({exc}); {hint}") from exc
    counts = meta["counts"]
    if len(bm25.indptr) != counts["vocabulary"] + 1 or len(bm25.indices) != counts["postings"]:
        raise IndexFormatError(f"{root}: BM25 arrays do not match the vocabulary; {hint}")
    check_structure(root, graph, bm25, hint)  # ranges and row pointers; `verify` does all
    samples = meta.get("samples")  # absent in an index built before they were recorded
    if check_samples and samples is not None:
        problems = (
            sample_problems(root, samples)
            if isinstance(samples, dict)
            else [f"{meta_path} has a malformed 'samples' entry"]
        )
        if problems:
            raise IndexFormatError(f"{root} is corrupted: {'; '.join(problems)}; {hint}")
    index = Index(root, graph, bm25, meta)
    manifest = read_manifest(root)
    if manifest is not None:
        described_bytes = read_described_bytes(root, manifest) or described_bytes
    if manifest is not None and manifest["segments"]:
        try:
            index = open_snapshot(
                index, manifest, base_digest=base_digest, check_samples=check_samples, pin=pin
            )
        except (OSError, ValueError, KeyError, TypeError, IndexError, pa.ArrowInvalid) as exc:
            raise IndexFormatError(
                f"{root}: its update segments could not be read ({type(exc).__name__}: "
                f"{exc}); run `ark index verify`"
            ) from exc
    elif manifest is not None and manifest.get("base") != base_digest:
        raise IndexFormatError(  # (open_snapshot's check, for a manifest of no segment)
            f"{root / MANIFEST} belongs to another build of this index (the index was "
            "rebuilt or compacted meanwhile); reopen it"
        )
    index.__dict__["_base_digest"] = base_digest
    index.__dict__["_described_bytes"] = described_bytes
    index.__dict__["_manifest"] = manifest  # as committed when opened (a writer reuses it)
    return index


def _open_tokenizer(meta_path: Path, meta: dict[str, Any], hint: str) -> Tokenizer:
    """The tokenizer ``meta.json`` records; unusable settings (a pattern that does not
    compile, say) are an error naming the file, not a traceback from ``re``."""
    try:
        config = TokenizerConfig.from_dict(meta["tokenizer"])
        problem = token_pattern_problem(config.token_pattern, default=TOKEN_PATTERN)
        if problem:  # a pattern with groups, or one that can hang every query
            raise TokenizerSettingsError(problem)
        return Tokenizer(config)
    except TokenizerSettingsError as exc:
        raise IndexFormatError(f"{meta_path}: bad tokenizer setting: {exc}; {hint}") from None
    except (KeyError, TypeError, AttributeError) as exc:
        raise IndexFormatError(
            f"{meta_path}: the tokenizer settings are missing or malformed "
            f"({type(exc).__name__}: {exc}); {hint}"
        ) from None
    except ArkError as exc:  # e.g. stemming needs a package that is not installed
        raise ArkError(f"{meta_path}: {exc}") from None


def _open_graph(root: Path, meta: dict[str, Any]) -> Graph:
    counts = meta["counts"]
    arrays = {name: np.load(root / name, mmap_mode="r") for name in ARRAY_FILES}
    n, entries = counts["nodes"], counts["adjacency_entries"]
    expected = {
        "node_type.npy": n,
        "indptr.npy": n + 1,
        "adj_node.npy": entries,
        "adj_code.npy": entries,
    }
    for name, length in expected.items():
        if arrays[name].shape != (length,):
            raise ValueError(f"{name} has shape {arrays[name].shape}, expected ({length},)")
    table = ipc.open_file(pa.memory_map(str(root / NODES_FILE), "r")).read_all()
    if table.num_rows != n:
        raise ValueError(f"{NODES_FILE} has {table.num_rows} rows, expected {n}")
    schema = Schema.from_dict(json.loads((root / SCHEMA_FILE).read_text(encoding="utf-8")))
    return Graph(
        node_type=arrays["node_type.npy"],
        node_type_names=meta["node_type_names"],
        names=table.column("name"),
        texts=table.column("text"),
        relation_names=meta["relation_names"],
        indptr=arrays["indptr.npy"],
        adj_node=arrays["adj_node.npy"],
        adj_code=arrays["adj_code.npy"],
        schema=schema,
        n_edges=counts["edges"],
    )
