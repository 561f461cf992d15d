"""A run directory that survives crashes: append-only JSONL, one record per query.

Each record is written with one ``write`` of a whole line followed by ``fsync``, so a
run killed at any instant (SIGKILL included) leaves complete records plus at most one
partial last line. Resuming drops that partial line, keeps every complete record,
and skips those queries: nothing is lost and nothing is written twice. Trajectories
of queries that have no record yet (in flight at the kill) are dropped too, so the
trajectory file matches the records exactly.
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
            old = json.loads(config_path.read_text(encoding="utf-8"))
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
        good_bytes = 0
        for raw, record in _complete_records(self.results):
            done.setdefault(record["query_id"], record)
            good_bytes += len(raw)
        _truncate(self.results, good_bytes)
        return done

    def _recover_trajectories(self, done: set[str]) -> None:
        if not self.trajectories.exists():
            return
        kept = [raw for raw, t in _complete_records(self.trajectories) if t.get("query_id") in done]
        tmp = self.trajectories.with_suffix(".tmp")
        tmp.write_bytes(b"".join(kept))
        os.replace(tmp, self.trajectories)

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
_RESUME_MAY_CHANGE = {"concurrency", "resume", "out", "started"}


def _append_lines(path: Path, lines: list[str]) -> None:
    data = ("\n".join(lines) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _truncate(path: Path, size: int) -> None:
    if path.stat().st_size != size:
        with path.open("r+b") as f:
            f.truncate(size)


def _complete_records(path: Path) -> Iterator[tuple[bytes, dict[str, Any]]]:
    """Complete JSON lines of a file, up to the first partial or unreadable one (a
    record cut by a kill mid-write is always last)."""
    with path.open("rb") as f:
        for raw in f:
            if not raw.endswith(b"\n"):
                return
            try:
                yield raw, json.loads(raw)
            except json.JSONDecodeError:
                return


def read_records(run_dir: str | Path) -> list[dict[str, Any]]:
    """The complete records of a run (a trailing partial line is ignored)."""
    path = Path(run_dir) / RESULTS_FILE
    if not path.exists():
        raise ArkError(f"{run_dir} is not a run directory (no {RESULTS_FILE})")
    return [record for _, record in _complete_records(path)]
