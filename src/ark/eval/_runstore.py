"""A run directory that survives crashes: append-only JSONL, one record per query.

Each record is written with one ``write`` of a whole line followed by ``fsync``, so a
run killed at any instant (SIGKILL included) leaves complete records plus at most one
partial last line. Resuming drops that partial line, keeps every complete record,
and skips those queries: nothing is lost and nothing is written twice. Trajectories
no kept record refers to (in flight at the kill) are dropped too, so the trajectory
file matches the records exactly.

A line damaged in the middle (invalid UTF-8, broken JSON, not a record) is skipped
and reported, never allowed to hide the records after it: resuming moves it to
``results.jsonl.bad`` (or ``trajectories.jsonl.bad``) and redoes its query.

Resuming also redoes the queries that failed (unless ``retry_failed=False``) and
those whose trajectories are missing or damaged; their old records and trajectories
are moved to ``results.jsonl.redone`` and ``trajectories.jsonl.redone``.

One writer at a time: :meth:`RunStore.start` takes an exclusive lock on the
directory (``run.lock``, see ``ark.eval._lock``) until :meth:`RunStore.close`. Should
that lock not hold (a file system without locks), readers still see one record per
query: the first record of a query wins, and a later duplicate is ignored (and
dropped, with its trajectories, on resume).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from ark._files import open_append, write_atomic
from ark._safe import dumps
from ark.errors import ArkError
from ark.eval._lock import RunLock
from ark.trajectory import Trajectory

RESULTS_FILE = "results.jsonl"
TRAJECTORIES_FILE = "trajectories.jsonl"
CONFIG_FILE = "config.json"


class RunStore:
    """A run directory: ``start`` it (taking its lock), ``append``, then ``close``."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.results = self.root / RESULTS_FILE
        self.trajectories = self.root / TRAJECTORIES_FILE
        self.lock = RunLock(self.root)
        #: Damaged lines found when resuming: (file name, 1-based line number).
        self.skipped: list[tuple[str, int]] = []
        #: Queries resuming redoes, by why: ``failed`` (the record says so) and
        #: ``missing_trajectories`` (some of its trajectories are gone or damaged).
        self.redone: dict[str, list[str]] = {"failed": [], "missing_trajectories": []}

    # -- starting and resuming ------------------------------------------------------------

    def start(
        self, config: dict[str, Any], *, resume: bool, retry_failed: bool = True
    ) -> dict[str, dict[str, Any]]:
        """Lock the directory and prepare it; returns the records already done (when
        resuming), less those to redo (see :attr:`redone`). Raises
        :class:`~ark.eval.RunLockedError` while another process writes it."""
        created = not self.root.exists()
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ArkError(f"cannot use {self.root} as a run directory: {exc}") from None
        try:
            self.lock.acquire()
            try:
                return self._start(config, resume, retry_failed)
            except PermissionError as exc:  # a read-only file in a writable directory
                raise ArkError(
                    f"cannot write the run directory {self.root}: {exc.filename} is "
                    f"read-only ({exc.strerror}); a run can be resumed only where it can "
                    "be written"
                ) from None
        except BaseException:
            self.close()
            if created:
                with contextlib.suppress(OSError):  # nothing left by a run that never began
                    self.root.rmdir()
            raise

    def close(self) -> None:
        """Release the directory to other writers (also on exit, however abrupt)."""
        self.lock.release()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _start(
        self, config: dict[str, Any], resume: bool, retry_failed: bool
    ) -> dict[str, dict[str, Any]]:
        config_path = self.root / CONFIG_FILE
        if self.results.exists() and not resume:
            raise ArkError(
                f"{self.root} already holds a run; pass --resume to continue it, "
                "or choose another --out directory"
            )
        if resume and config_path.exists():
            try:
                old = json.loads(config_path.read_text(encoding="utf-8"))
                if not isinstance(old, dict):
                    raise ValueError("not a JSON object")
            except ValueError as exc:  # invalid UTF-8 or JSON
                raise ArkError(
                    f"cannot resume {self.root}: {CONFIG_FILE} is damaged ({exc}); "
                    "start the run again in another --out"
                ) from None
            changed = config_differences(old, config)
            if changed:
                raise ArkError(
                    f"cannot resume {self.root}: settings differ from the original run "
                    f"({'; '.join(changed)}); use the same settings or another --out"
                )
        config_path.write_text(dumps(config, indent=2), encoding="utf-8")
        if not resume:
            self._recover_trajectories({}, {})
            return {}
        return self._recover(retry_failed)

    def _recover(self, retry_failed: bool) -> dict[str, dict[str, Any]]:
        """Keep the first complete record of each query unless it is to be redone."""
        trajectories = self._read_trajectories()
        have = {(_key(t.get("id")), _key(t.get("query_id"))) for _, t in trajectories}
        done: dict[str, dict[str, Any]] = {}
        redo: dict[str, dict[str, Any]] = {}
        kept: list[bytes] = []
        dropped: list[bytes] = []
        if self.results.exists():
            bad: list[tuple[int, bytes]] = []
            for raw, record in _complete_records(self.results, bad, key="query_id"):
                qid = record["query_id"]
                if qid in done or qid in redo:  # a duplicate: the first record wins
                    continue
                ids = record.get("trajectory_ids")
                if retry_failed and record.get("status") == "failed":
                    self.redone["failed"].append(qid)
                elif isinstance(ids, list) and not all(
                    isinstance(i, str) and (i, qid) in have for i in ids
                ):
                    self.redone["missing_trajectories"].append(qid)
                else:
                    done[qid] = record
                    kept.append(raw)
                    continue
                redo[qid] = record
                dropped.append(raw)
            self._set_aside(self.results, dropped, ".redone")
            self._rewrite(self.results, kept, bad)
        self._recover_trajectories(done, redo, trajectories)
        return done

    def _read_trajectories(self) -> list[tuple[bytes, dict[str, Any]]]:
        """The readable trajectory lines; damaged ones are moved to ``.bad`` now, so
        a record that needs them is redone."""
        if not self.trajectories.exists():
            return []
        bad: list[tuple[int, bytes]] = []
        lines = list(_complete_records(self.trajectories, bad))
        self._rewrite(self.trajectories, [raw for raw, _ in lines], bad)
        return lines

    def _recover_trajectories(
        self,
        done: dict[str, dict[str, Any]],
        redo: dict[str, dict[str, Any]],
        lines: list[tuple[bytes, dict[str, Any]]] | None = None,
    ) -> None:
        """Keep exactly the trajectories the kept records name (each once); those of
        redone records go to ``.redone``; the rest (in flight at a kill, or written by
        a duplicate record) are dropped."""
        if lines is None:
            lines = self._read_trajectories()
        if not lines:
            return
        wanted = _trajectory_owners(done)
        aside = _trajectory_owners(redo)
        kept, dropped, seen = [], [], set()
        for raw, t in lines:
            tid, qid = _key(t.get("id")), _key(t.get("query_id"))
            if _claims(wanted, tid, qid) and (tid is None or tid not in seen):
                seen.add(tid)
                kept.append(raw)
            elif _claims(aside, tid, qid):
                dropped.append(raw)
        self._set_aside(self.trajectories, dropped, ".redone")
        self._rewrite(self.trajectories, kept, [])

    def _set_aside(self, path: Path, lines: list[bytes], suffix: str) -> None:
        if lines:
            with path.with_name(path.name + suffix).open("ab") as f:
                f.write(b"".join(lines))

    def _rewrite(self, path: Path, kept: list[bytes], bad: list[tuple[int, bytes]]) -> None:
        """Replace ``path`` by its kept lines (atomically); damaged ones are moved aside."""
        if bad:
            self.skipped += [(path.name, line) for line, _ in bad]
            self._set_aside(
                path, [raw if raw.endswith(b"\n") else raw + b"\n" for _, raw in bad], ".bad"
            )
        data = b"".join(kept)
        if path.stat().st_size == len(data):
            return  # nothing to drop: leave the file as it is
        write_atomic(path, data)

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
        write_atomic(path, dumps(data, indent=2))
        return path


#: Settings that may differ when resuming (they do not change what a query computes).
_RESUME_MAY_CHANGE = {"concurrency", "resume", "out", "started", "llm_cache", "ray"}

#: What a setting absent from a config meant (older runs wrote ``adapter`` and
#: ``prompt`` only with an adapter; runs from before strategies, and the quality
#: benchmark's before it used the evaluation API, ran ARK's loop).
_UNWRITTEN = {"adapter": None, "prompt": "full", "strategy": "ark"}
#: Settings recorded only by newer runs: compared when both runs have them.
_RECORDED_SINCE = {"linking_encoder"}
#: Settings an older run recorded under another name: compared under the new one
#: (the answer writer was called the reader).
_RENAMED = {"answer_reader": "answer_writer"}


def config_differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Every setting, of either run, that differs (``name: before -> now``); a setting
    missing on one side differs from any value but its default."""
    new = json.loads(dumps(new))  # as it will read back: tuples are lists, and so on
    old, new = ({_RENAMED.get(k, k): v for k, v in c.items()} for c in (old, new))
    out = []
    for key in sorted((set(old) | set(new)) - _RESUME_MAY_CHANGE):
        if key in _RECORDED_SINCE and (key not in old or key not in new):
            continue  # a run from before the setting was recorded: unknown, not changed
        before = old.get(key, _UNWRITTEN.get(key))
        now = new.get(key, _UNWRITTEN.get(key))
        if before != now:
            out.append(f"{key}: {_show(before, key in old)} -> {_show(now, key in new)}")
    return out


def _show(value: Any, present: bool) -> str:
    if not present and value is None:
        return "(not set)"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _trajectory_owners(records: dict[str, dict[str, Any]]) -> set[tuple[Any, Any]]:
    """(trajectory id, query id) of each trajectory the records name; a record from
    before ``trajectory_ids`` existed claims every trajectory of its query."""
    owners: set[tuple[Any, Any]] = set()
    for qid, record in records.items():
        ids = record.get("trajectory_ids")
        if isinstance(ids, list):
            owners.update((i, qid) for i in ids if isinstance(i, str))
        else:
            owners.add((_ANY, qid))
    return owners


_ANY = object()


def _claims(owners: set[tuple[Any, Any]], tid: str | None, qid: str | None) -> bool:
    return (tid, qid) in owners or (_ANY, qid) in owners


def _key(value: Any) -> str | None:
    """An id as read from a line: a string, or None for anything else."""
    return value if isinstance(value, str) else None


def _append_lines(path: Path, lines: list[str]) -> None:
    data = ("\n".join(lines) + "\n").encode("utf-8")
    with open_append(path) as f:  # never through a link planted in the run directory
        f.buffer.write(data)
        f.flush()
        os.fsync(f.fileno())


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
    """The complete records of a run, one per query (the first, should two writers
    have both written one); a trailing partial line is ignored, and the numbers of
    damaged lines, which are skipped, are appended to ``skipped``."""
    path = Path(run_dir) / RESULTS_FILE
    if not path.exists():
        raise ArkError(f"{run_dir} is not a run directory (no {RESULTS_FILE})")
    if not path.is_file():
        raise ArkError(f"{path} is not a file")
    bad: list[tuple[int, bytes]] = []
    records: dict[str, dict[str, Any]] = {}
    try:
        found = list(_complete_records(path, bad, key="query_id"))
    except OSError as exc:
        raise ArkError(f"cannot read {path} ({exc.strerror})") from None
    for _, record in found:
        records.setdefault(record["query_id"], record)  # a duplicate: the first wins
    if skipped is not None:
        skipped += [line for line, _ in bad]
    return list(records.values())
