"""Changing an index without rebuilding it: add, remove, compact.

Each update is one new immutable segment (``_segments.py``) committed by replacing
the manifest; node indices never change until :func:`compact_index`, which rebuilds
one base from the live graph and writes ``remap.npy`` (old index -> new, -1 for a
removed node). Names are the identity: an added edge whose end names an existing node
links to it. Updates of one index are serialised by a lock file beside it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ark.errors import ArkError, GraphFormatError
from ark.graph import (
    TABLE_FORMATS,
    Graph,
    SourceFormat,
    TableLayout,
    detect_format,
    load_graph,
    text_lines,
)
from ark.index._dirs import update_lock  # re-exported: every writer's lock
from ark.index._plan import Plan, Removal, Where
from ark.index._seg_stats import check_updatable
from ark.index._segments import (
    SEGMENTS_DIR,
    commit_manifest,
    empty_manifest,
    meta_digest,
    write_segment,
)
from ark.index._store import open_index

#: Called with the name of each step of an update; tests kill the process there.
CHECKPOINT: Callable[[str], None] | None = None


def _step(name: str) -> None:
    if CHECKPOINT is not None:
        CHECKPOINT(name)


def add_to_index(
    path: str | Path,
    source: str | Path,
    *,
    fmt: SourceFormat = "auto",
    schema_file: str | Path | None = None,
    types_file: str | Path | None = None,
    layout: TableLayout | None = None,
) -> dict[str, Any]:
    """Add the nodes and edges of ``source`` (any format ``ark index build`` reads, a
    database included) as one new segment. Returns a report (counts, generation,
    seconds)."""
    started = time.perf_counter()
    delta = load_graph(source, fmt, schema_file=schema_file, types_file=types_file, layout=layout)
    loaded = time.perf_counter() - started
    typed = schema_file is not None or types_file is not None
    # tables (files or a database) name every node's type
    explicit = not typed and (
        Path(source).is_dir() or (detect_format(source) if fmt == "auto" else fmt) in TABLE_FORMATS
    )
    return update_index(
        path,
        add=delta,
        add_source=str(source),
        explicit_nodes=explicit,
        infer_types=not typed and not explicit,
        started=started,
        phases={"load source": loaded},
    )


def remove_from_index(
    path: str | Path, *, nodes_file: str | Path | None = None, edges_file: str | Path | None = None
) -> dict[str, Any]:
    """Remove the nodes named in ``nodes_file`` (one name a line) and the edges in
    ``edges_file`` (``head|relation|tail`` or tab-separated lines), with their
    edges; an unknown name is an error naming the file and line."""
    started = time.perf_counter()
    nodes: list[tuple[str, Where]] = []
    edges: list[tuple[tuple[str, str, str], Where]] = []
    if nodes_file is not None:
        for lineno, raw in text_lines(Path(nodes_file)):
            name = raw.rstrip("\r\n").strip()
            if name and not name.startswith("#"):
                nodes.append((name, (str(nodes_file), lineno)))
    if edges_file is not None:
        for lineno, raw in text_lines(Path(edges_file)):
            line = raw.rstrip("\r\n")
            if not line.strip() or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split("\t" if "\t" in line else "|")]
            if len(parts) != 3 or not all(parts):
                raise GraphFormatError(edges_file, "expected 'head|relation|tail'", lineno)
            edges.append(((parts[0], parts[1], parts[2]), (str(edges_file), lineno)))
    if not nodes and not edges:
        raise ArkError("nothing to remove: give --nodes FILE and/or --edges FILE with names")
    return update_index(path, remove=Removal(nodes, edges), started=started)


def update_index(
    path: str | Path,
    *,
    add: Graph | None = None,
    remove: Removal | None = None,
    add_source: str | None = None,
    explicit_nodes: bool = False,
    infer_types: bool = False,
    change: Callable[[Plan], None] | None = None,
    started: float | None = None,
    phases: dict[str, float] | None = None,
) -> dict[str, Any]:
    """Apply ``remove`` then ``add`` to the index at ``path`` as one atomic segment.

    ``change``: called with the plan after them, on the snapshot the segment will
    commit on (``sync`` works out its difference there). An update that changes
    nothing commits nothing: the report says ``"unchanged": true``.

    ``explicit_nodes``: ``add`` states each node's type and text (tables), so naming an
    existing node with another type or text is an error; else (triples) an existing
    name is only a reference. ``infer_types``: type new nodes of triples from the
    index's schema (relation -> its most common end types), as a build would.
    """
    root = Path(path)
    started = time.perf_counter() if started is None else started
    phases = dict(phases or {})
    clock = [time.perf_counter()]

    def lap(name: str) -> None:
        now = time.perf_counter()
        phases[name] = phases.get(name, 0.0) + now - clock[0]
        clock[0] = now

    with update_lock(root):
        _step("locked")
        lap("lock")
        # The writer reads the graph side only (the BM25 delta is built lazily) and
        # trusts the segments' sampled digests to `ark index verify` and readers.
        snap = open_index(root, check_samples=False, pin=False)
        opened = snap.__dict__["_base_digest"]
        lap("open snapshot")
        if snap.bm25.__class__.__name__ == "BM25Index" and snap.bm25.tf is None:
            raise ArkError(
                f"{root} was built before updates existed (no term counts); rebuild it "
                f"once with `ark index build SOURCE -o {root}`"
            )
        try:
            check_updatable(snap.bm25.params)
        except ValueError as exc:
            raise ArkError(f"{root}: {exc}") from None
        plan = Plan(snap)
        if remove is not None:
            plan.remove(remove)
        if add is not None:
            plan.add(add, add_source or "the added graph", explicit_nodes, infer_types)
        if change is not None:
            change(plan)
        lap("resolve names, plan")
        if plan.is_empty():
            return _unchanged(root, snap, started, phases)
        seg = plan.segment()
        lap("tokenise new nodes")
        _step("planned")
        manifest = plan.manifest()
        name = f"{manifest['generation']:06d}"
        _same_base(root, opened)
        if snap.__dict__.get("_manifest") is None:  # the first: a manifest before any segment
            commit_manifest(root, empty_manifest(opened))
        segdir = root / SEGMENTS_DIR
        segdir.mkdir(exist_ok=True)
        _remove_orphans(segdir, {e["name"] for e in manifest["segments"]})
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=segdir))
        try:
            entry = write_segment(tmp / "s", seg)
            _step("written")
            os.replace(tmp / "s", segdir / name)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        _step("renamed")
        lap("write segment")
        manifest["segments"].append({"name": name, **entry})
        try:
            _same_base(root, opened)
        except ArkError:
            shutil.rmtree(segdir / name, ignore_errors=True)
            raise
        commit_manifest(root, manifest)
        lap("commit")
        _step("committed")
    return {
        "index": str(root),
        "generation": manifest["generation"],
        "segment": name,
        "added_nodes": len(seg.names),
        "added_edges": len(seg.edges),
        "removed_nodes": len(seg.removed_nodes),
        "removed_edges": plan.removed_edge_count,
        "counts": manifest["counts"],
        "seconds": round(time.perf_counter() - started, 3),
        "phases": {k: round(v, 4) for k, v in phases.items()},
    }


def _unchanged(root: Path, snap: Any, started: float, phases: dict[str, float]) -> dict[str, Any]:
    """The report of an update with nothing to commit (a sync of an unchanged source)."""
    manifest = snap.__dict__.get("_manifest")
    counts = snap.meta["counts"]
    return {
        "index": str(root),
        "unchanged": True,
        "generation": int(manifest["generation"]) if manifest else 0,
        "segment": None,
        "added_nodes": 0,
        "added_edges": 0,
        "removed_nodes": 0,
        "removed_edges": 0,
        "counts": counts,
        "seconds": round(time.perf_counter() - started, 3),
        "phases": {k: round(v, 4) for k, v in phases.items()},
    }


def _same_base(root: Path, opened: str) -> None:
    """Refuse to commit on a base other than the one the update was planned on (its
    node indices are another build's): only a writer ignoring the lock can swap it,
    but a wrong edge must never follow."""
    try:
        current = meta_digest(root)
    except OSError:
        current = None
    if current != opened:
        raise ArkError(
            f"{root} was rebuilt or compacted while this update was planned (another "
            "writer ignored the lock); nothing was committed: run the update again"
        )


def _remove_orphans(segdir: Path, live: set[str]) -> None:
    """Remove what killed updates left in ``segments/``: every entry the current
    manifest does not name (segments are append-only until compact, so no reader's
    snapshot names one either). Only called with the update lock held."""
    for entry in segdir.iterdir():
        if entry.name not in live:
            shutil.rmtree(entry, ignore_errors=True)
