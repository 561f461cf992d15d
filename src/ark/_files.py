"""One way to write a file: nothing half-written, no link followed, the usual mode.

Why: a file written in place is torn by a kill, and one opened by name follows a
symbolic link planted there (a ``view.html.tmp`` link made ``ark view`` overwrite its
target; an ``extractions.jsonl`` link got an ingest's cache appended to it, issue 67).
:func:`write_atomic` writes a temporary sibling created exclusively (``O_EXCL``:
it is never an existing file or link), fsyncs it, gives it the mode a new file gets
under the user's umask (``mkstemp`` makes 0600) and renames it over the target, which
replaces a link rather than writing through it. :func:`open_append` opens a log for
appending without following a link (``O_NOFOLLOW``).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ark.errors import ArkError

__all__ = [
    "atomic_writer",
    "file_mode",
    "finish_temporary",
    "open_append",
    "temporary_beside",
    "write_atomic",
]


def file_mode() -> int:
    """The mode ``open()`` gives a new file under this process's umask (0644 usually)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path``: all of it or, after a crash,
    nothing new; a link at ``path`` is replaced, never written through."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, file_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def temporary_beside(path: str | Path) -> Path:
    """A new, empty file beside ``path`` created exclusively (never an existing file or
    link), for a writer that opens its output by name (``gguf.GGUFWriter``); rename it
    over ``path`` when done (:func:`finish_temporary`), unlink it on failure."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    return Path(tmp)


def finish_temporary(tmp: Path, path: str | Path) -> None:
    """``tmp`` (from :func:`temporary_beside`) fsynced, given the usual mode and renamed
    over ``path``."""
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.chmod(tmp, file_mode())
    os.replace(tmp, path)


@contextlib.contextmanager
def atomic_writer(path: str | Path, encoding: str = "utf-8") -> Iterator[IO[str]]:
    """A text file to stream ``path``'s content into: a temporary created exclusively,
    renamed over ``path`` when the block ends without an error (else removed)."""
    tmp = temporary_beside(path)
    try:
        with open(tmp, "w", encoding=encoding) as f:
            yield f
            f.flush()
        finish_temporary(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def open_append(path: str | Path, encoding: str = "utf-8") -> IO[str]:
    """``path`` opened to append text (created if missing), refusing a symbolic link
    or anything but a regular file there with an :class:`ArkError` naming it."""
    path = Path(path)
    # O_NONBLOCK: a FIFO planted there fails at once instead of waiting for a reader.
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK
    flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if path.is_symlink():
            raise ArkError(f"{path} is a symbolic link: ARK does not write through one") from None
        raise ArkError(f"cannot write {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ArkError(f"{path} is not a regular file: ARK writes its logs to files only")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "a", encoding=encoding)
