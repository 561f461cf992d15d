"""The work directory of an ingestion: extractions cached per chunk, and the output.

``extractions.jsonl`` is append-only: one line per chunk extracted, written and
flushed as soon as the extraction is back, keyed by a hash of the extractor's id and
the chunk's text (so the same text under the same model and prompt version is never
extracted twice, whatever document or position it comes from, and a different chunk
size reuses every chunk that did not change). A run killed mid-write leaves at most
one torn last line: reading checks each line on its own, skips (and counts) one that
does not parse and rewrites the file without it (atomically), and an append after a
line left unfinished starts on a fresh line. A chunk whose model call
*failed* (the backend, not the reply) is not written, so the next run retries it.

``passages.jsonl`` (the generic passages format that ``ark index build --format
passages`` reads) and ``ingest.json`` (the report) are written whole, to a temporary
file then renamed over the old one, so neither is ever seen half-written.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import IO, Any

from ark._files import open_append, write_atomic
from ark._lock import RunLock
from ark._safe import dumps
from ark.errors import ArkError
from ark.ingest._extraction import Extraction

__all__ = ["WorkDir", "chunk_key"]

EXTRACTIONS = "extractions.jsonl"
PASSAGES = "passages.jsonl"
REPORT = "ingest.json"


def chunk_key(extractor_id: str, text: str) -> str:
    """The cache key of ``text`` extracted by ``extractor_id``."""
    digest = hashlib.sha256()
    digest.update(extractor_id.encode("utf-8"))
    digest.update(b"\0")
    digest.update(text.encode("utf-8"))
    return digest.hexdigest()


LOCK = "ingest.lock"
#: What ARK writes in a work directory; anything else there is the user's.
OWN_FILES = (EXTRACTIONS, PASSAGES, REPORT, LOCK)


def _foreign(path: Path) -> list[str]:
    """The entries of an existing work directory ARK did not write: names it does not
    use, or its own names holding something else (a report that is not an ingest's, a
    cache whose first line is not a cached extraction)."""
    out = []
    for entry in sorted(path.iterdir()):
        if entry.name.startswith(".") and entry.name.endswith(".tmp"):
            continue  # a temporary of ours a kill left behind
        if entry.name not in OWN_FILES or entry.is_symlink() or not entry.is_file():
            out.append(entry.name)
    ours = False  # an ingest's report or cache is there
    for name, check in ((REPORT, _is_report), (EXTRACTIONS, _is_cache)):
        if name not in out and (path / name).exists():
            if check(path / name):
                ours = True
            else:
                out.append(name)
    if (path / PASSAGES).exists() and not ours:
        out.append(PASSAGES)  # passages with no report or cache of an ingest beside
    return sorted(set(out))


def _is_report(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and {"extractor", "chunks", "work_dir"} <= data.keys()


def _is_cache(path: Path) -> bool:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as f:
            first = f.readline(1 << 20)
    except OSError:
        return False
    if not first.strip():
        return True
    try:
        record = json.loads(first)
    except ValueError:
        return False  # a torn first line would be the whole file: not a cache of ours
    return isinstance(record, dict) and "key" in record and "extractor" in record


class WorkDir:
    """The cache and outputs of one ingestion (see the module). An existing directory
    must hold nothing but ARK's own files (it is refused, naming the others: the
    passages file and report are replaced whole); :meth:`lock` keeps a second ingest
    out while this one writes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise ArkError(f"work directory {self.path} is not a directory")
        if self.path.is_dir() and (foreign := _foreign(self.path)):
            shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
            raise ArkError(
                f"work directory {self.path} holds files ARK did not write ({shown}); an "
                "ingest replaces its passages and report, so choose an empty or new "
                "--work-dir (or the one an earlier ingest made)"
            )
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ArkError(
                f"cannot create work directory {self.path}: {exc.strerror or exc}"
            ) from None
        self.extractions_path = self.path / EXTRACTIONS
        self.passages_path = self.path / PASSAGES
        self.report_path = self.path / REPORT
        self.damaged_lines = 0
        self._out: IO[str] | None = None
        self._lock = RunLock(
            self.path,
            LOCK,
            advice="wait for that ingest to finish or stop it, or choose another --work-dir",
        )

    def lock(self) -> None:
        """Hold the directory until :meth:`close` (:class:`ark._lock.RunLockedError`
        at once while another live ingest holds it; a dead one's lock is taken over)."""
        self._lock.acquire()

    def load(self) -> dict[str, Extraction]:
        """Every cached extraction by key; torn or foreign lines are skipped, counted
        in :attr:`damaged_lines`."""
        cached: dict[str, Extraction] = {}
        self.damaged_lines = 0
        if not self.extractions_path.exists():
            return cached
        good: list[str] = []
        with self.extractions_path.open("r", encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    key = record["key"]
                    extraction = Extraction.from_dict(record)
                    if not isinstance(key, str):
                        raise TypeError(key)
                except (ValueError, KeyError, TypeError, AttributeError):
                    self.damaged_lines += 1
                    continue
                cached[key] = extraction
                good.append(line if line.endswith("\n") else line + "\n")
        if self.damaged_lines:  # keep the cache clean: the torn line is gone for good
            write_atomic(self.extractions_path, "".join(good))
        return cached

    def append(self, key: str, chunk_id: str, extractor_id: str, extraction: Extraction) -> None:
        """Record one chunk's extraction, flushed at once (a kill loses nothing
        already appended)."""
        if self._out is None:
            self._out = self._open_for_append()
        record: dict[str, Any] = {"key": key, "chunk": chunk_id, "extractor": extractor_id}
        record.update(extraction.to_dict())
        self._out.write(dumps(record) + "\n")  # a lone surrogate cannot crash the write
        self._out.flush()

    def _open_for_append(self) -> IO[str]:
        path = self.extractions_path
        torn = False
        if path.exists() and path.stat().st_size:
            with path.open("rb") as f:
                f.seek(-1, os.SEEK_END)
                torn = f.read(1) != b"\n"
        out = open_append(path)
        if torn:  # a killed run's last line: end it, so the next record is whole
            out.write("\n")
        return out

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None
        self._lock.release()
