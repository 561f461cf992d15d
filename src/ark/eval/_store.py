"""A run directory that survives crashes: append-only JSONL, one record per query.

Each record is written with one ``write`` of a whole line followed by ``fsync``, so a
run killed at any instant (SIGKILL included) leaves complete records plus at most one
partial last line. Resuming drops that partial line, keeps every complete record,
and skips those queries: nothing is lost and nothing is written twice. Trajectories
of queries that have no record yet (in flight at the kill) are dropped too, so the
trajectory file matches the records exactly.

A line damaged in the middle (invalid UTF-8, broken JSON, not a record) is skipped
and reported, never allowed to hide the records after it: resuming moves it to
``results.jsonl.bad`` (or ``trajectories.jsonl.bad``) and redoes its query.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ark._safe import dumps
from ark.errors import ArkError
from ark.trajectory import Trajectory

RESULTS_FILE = "results.jsonl"
TRAJECTORIES_FILE = "trajectories.jsonl"
CONFIG_FILE = "config.json"


class RunStore:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.results = self.root / RESULTS_FILE
        self.trajectories = self.root / TRAJECTORIES_FILE
        #: Damaged lines found when resuming: (file name, 1-based line number).
        self.skipped: list[tuple[str, int]] = []

    # -- starting and resuming ------------------------------------------------------------

    def start(self, config: dict[str, Any], *, resume: bool) -> dict[str, dict[str, Any]]:
        """Prepare the directory; returns the records already done (when resuming)."""
        config_path = self.root / CONFIG_FILE
        if self.results.exists() and not resume:
            raise ArkError(
                f"{self.root} already holds a run; pass --resume to continue it, "
                "or choose another --out directory"
            )
        if resume and config_path.exists():
            try:
                old = json.loads(config_path.read_text(encoding="utf-8"))
            except ValueError as exc:  # invalid UTF-8 or JSON
                raise ArkError(
                    f"cannot resume {self.root}: {CONFIG_FILE} is damaged ({exc}); "
                    "start the run again in another --out"
                ) from None
            changed = sorted(
                k for k in config if k not in _RESUME_MAY_CHANGE and old.get(k) != config.get(k)
            )
            if changed:
                raise ArkError(
                    f"cannot resume {self.root}: settings differ from the original run "
                    f"({', '.join(changed)}); use the same settings or another --out"
                )
        self.root.mkdir(parents=True, exist_ok=True)
        config_path.write_text(dumps(config, indent=2), encoding="utf-8")
        done = self._recover_results() if resume else {}
        self._recover_trajectories(set(done))
        return done

    def _recover_results(self) -> dict[str, dict[str, Any]]:
        done: dict[str, dict[str, Any]] = {}
        if not self.results.exists():
            return done
        bad: list[tuple[int, bytes]] = []
        kept = []
        for raw, record in _complete_records(self.results, bad, key="query_id"):
            if record["query_id"] not in done:
                done[record["query_id"]] = record
                kept.append(raw)
        self._rewrite(self.results, kept, bad)
        return done

    def _recover_trajectories(self, done: set[str]) -> None:
        if not self.trajectories.exists():
            return
        bad: list[tuple[int, bytes]] = []
        kept = [
            raw for raw, t in _complete_records(self.trajectories, bad) if t.get("query_id") in done
        ]
        self._rewrite(self.trajectories, kept, bad)

    def _rewrite(self, path: Path, kept: list[bytes], bad: list[tuple[int, bytes]]) -> None:
        """Replace ``path`` by its kept lines (atomically); damaged ones are moved aside."""
        if bad:
            self.skipped += [(path.name, line) for line, _ in bad]
            aside = path.with_name(path.name + ".bad")
            with aside.open("ab") as f:
                f.write(b"".join(raw if raw.endswith(b"\n") else raw + b"\n" for _, raw in bad))
        data = b"".join(kept)
        if not bad and path.stat().st_size == len(data):
            return  # nothing to drop: leave the file as it is
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)

    # -- writing ------------------------------------------------------------------------

    def append(self, record: dict[str, Any], trajectories: list[Trajectory]) -> None:
        """Trajectories first, then the record: a record always has its trajectories."""
        if trajectories:
            _append_lines(
                self.trajectories,
                [dumps(t.to_dict()) for t in trajectories],
            )
        _append_lines(self.results, [dumps(record)])

    def write_json(self, name: str, data: Any) -> Path:
        path = self.root / name
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(dumps(data, indent=2), encoding="utf-8")
        os.replace(tmp, path)
        return path


#: Settings that may differ when resuming (they do not change what a query computes).
_RESUME_MAY_CHANGE = {"concurrency", "resume", "out", "started", "llm_cache", "ray"}


def _append_lines(path: Path, lines: list[str]) -> None:
    data = ("\n".join(lines) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _complete_records(
    path: Path, bad: list[tuple[int, bytes]] | None = None, key: str | None = None
) -> Iterator[tuple[bytes, dict[str, Any]]]:
    """The complete, readable JSON-object lines of a file. A last line without its
    newline (cut by a kill mid-write) is dropped; a damaged line elsewhere is skipped
    and, with its 1-based number, appended to ``bad``. ``key``: a field a line must
    have to count as readable."""
    with path.open("rb") as f:
        for lineno, raw in enumerate(f, start=1):
            if not raw.endswith(b"\n"):
                return
            if not raw.strip():
                continue
            try:
                value = json.loads(raw.decode("utf-8"))
            except (ValueError, RecursionError):  # invalid UTF-8 or JSON
                value = None
            if isinstance(value, dict) and (key is None or isinstance(value.get(key), str)):
                yield raw, value
            elif bad is not None:
                bad.append((lineno, raw))


def read_records(run_dir: str | Path, skipped: list[int] | None = None) -> list[dict[str, Any]]:
    """The complete records of a run (a trailing partial line is ignored; the numbers
    of damaged lines, which are skipped, are appended to ``skipped``)."""
    path = Path(run_dir) / RESULTS_FILE
    if not path.exists():
        raise ArkError(f"{run_dir} is not a run directory (no {RESULTS_FILE})")
    bad: list[tuple[int, bytes]] = []
    records = [record for _, record in _complete_records(path, bad, key="query_id")]
    if skipped is not None:
        skipped += [line for line, _ in bad]
    return records
