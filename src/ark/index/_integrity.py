"""The whole-index check and repair a user runs (``ark index verify``, ``ark index
repair``): open the index, then every recorded checksum and the full structure
(:func:`verify_index`); re-anchor an updated index's manifest on its base
(:func:`repair_index`). The checks themselves, which opening also runs, are
:mod:`ark.index._verify`'s; these sit above the store, since they open the index.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from ark._files import write_atomic
from ark.errors import IndexFormatError
from ark.index._dirs import META_FILE, update_lock
from ark.index._segments import (
    MANIFEST,
    commit_manifest,
    read_described_bytes,
    read_manifest,
    segment_problems,
)
from ark.index._store import open_index
from ark.index._verify import sha256_of, structure_problems


def verify_index(path: str | Path) -> dict[str, Any]:
    """Every check: open (sizes, structure), then every recorded checksum and the full
    structure. Returns ``{"index", "ok", "problems", "files", "bytes", "seconds"}``."""
    root = Path(path)
    started = time.perf_counter()
    problems: list[str] = []
    checked, size = 0, 0
    try:
        index = open_index(root, check_samples=False)  # the full checksums below say more
    except IndexFormatError as exc:
        problems = [str(exc)]
        try:  # name the damaged segment file, when that is what failed
            manifest = read_manifest(root)
            if manifest is not None:
                problems += segment_problems(root, manifest, full=True)
        except (IndexFormatError, OSError, KeyError, TypeError):
            pass
        return _report(root, problems, 0, 0, started)
    sums: dict[str, str] = index.meta.get("checksums") or {}
    if not sums:
        problems.append(
            f"{root / META_FILE} records no checksums (built by an older ARK); rebuild the "
            "index to make it verifiable"
        )
    for name, expected in sorted(sums.items()):
        file = root / name
        if not file.is_file():
            problems.append(f"{name} is missing")
            continue
        checked += 1
        size += file.stat().st_size
        if sha256_of(file) != expected:
            problems.append(f"{name} does not match its checksum (damaged or replaced)")
    graph, bm25 = index.graph, index.bm25

    try:  # its checksum (open checked it; the file may have changed since)
        manifest = read_manifest(root)
        read_described_bytes(root, manifest)
    except IndexFormatError as exc:
        problems.append(str(exc))
        manifest = None
    if manifest is not None:
        checked += 1
        size += (root / MANIFEST).stat().st_size
    if "segments" in index.meta:  # updates: the base as built, then each segment
        manifest = manifest or {"segments": []}
        problems += segment_problems(root, manifest, full=True)
        for entry in manifest["segments"]:
            checked += len(entry["files"])
            size += sum(entry["files"].values())
        problems += delta_problems(graph)
        graph, bm25 = graph.base, bm25.base
    problems += structure_problems(graph, bm25, full=True)
    try:  # opening leaves the vocabulary to the first query; verify reads it
        _ = bm25.vocab
    except (OSError, ValueError) as exc:
        problems.append(f"the BM25 vocabulary could not be read ({exc})")
    return _report(root, problems, checked, size, started)


def delta_problems(graph: Any) -> list[str]:
    """Out-of-range entries in what the segments hold (opening checks edge ends)."""
    problems = []
    entries = len(graph.base.adj_node)
    if len(graph.removed_entries) and (
        graph.removed_entries.min() < 0 or graph.removed_entries.max() >= entries
    ):
        problems.append(f"a segment removes adjacency entries outside 0..{entries - 1}")
    if len(graph.d_code) and graph.d_code.max() >= 2 * len(graph.relation_names):
        problems.append("a segment's edge has an unknown relation code")
    if len(graph.node_type) and int(np.max(graph.node_type)) >= len(graph.node_type_names):
        problems.append("a segment's node has an unknown type code")
    return problems


def _report(root: Path, problems: list[str], files: int, size: int, t0: float) -> dict[str, Any]:
    return {
        "index": str(root),
        "ok": not problems,
        "problems": problems,
        "files": files,
        "bytes": size,
        "seconds": round(time.perf_counter() - t0, 3),
    }


#: Keys that ``ark index describe`` of ARK before issue 42 wrote into the base's
#: ``meta.json`` (the merged snapshot's meta), which made every later update refuse it.
_SNAPSHOT_KEYS = ("segments", "base_counts")


def repair_index(path: str | Path) -> dict[str, Any]:
    """Repair what can be repaired from what is intact, under the writers' lock:
    today, a base ``meta.json`` overwritten with an updated snapshot's meta (by
    ``ark index describe`` before it committed through the manifest). The base's own
    meta is restored from it (its counts and names are recorded there as
    ``base_counts`` and the names' prefixes; the base's data files were never
    changed) and the manifest re-anchored on it, so every update is kept. Returns
    ``{"index", "repaired": [...], "ok", "problems"}`` (``verify_index`` after)."""
    import hashlib
    import json

    root = Path(path)
    repaired: list[str] = []
    with update_lock(root):
        meta_path = root / META_FILE
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise IndexFormatError(f"{meta_path} cannot be read ({exc}); not repairable") from None
        manifest = read_manifest(root)
        if (
            isinstance(meta, dict)
            and all(k in meta for k in _SNAPSHOT_KEYS)
            and isinstance(meta.get("base_counts"), dict)
            and manifest is not None
        ):
            base_counts = meta["base_counts"]
            restored = {k: v for k, v in meta.items() if k not in _SNAPSHOT_KEYS}
            restored["counts"] = base_counts
            restored["node_type_names"] = list(meta["node_type_names"])[
                : int(base_counts["node_types"])
            ]
            restored["relation_names"] = list(meta["relation_names"])[
                : int(base_counts["relations"])
            ]
            text = json.dumps(restored, indent=2).encode("utf-8")
            write_atomic(meta_path, text)
            manifest["base"] = hashlib.sha256(text).hexdigest()
            commit_manifest(root, manifest)
            repaired.append(
                f"{META_FILE} held an updated snapshot's meta (written by an earlier `ark "
                "index describe`): the base's meta restored and the manifest re-anchored; "
                f"{len(manifest['segments'])} update segment(s) kept"
            )
    report = verify_index(root)
    return {"index": str(root), "repaired": repaired, **report}
