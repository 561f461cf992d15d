"""Replacing an index directory safely: a build (or compact) writes beside it and
swaps it in; what a killed build left behind is told apart from a live one by a lock.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: stale build directories are told apart by age only
    fcntl = None  # type: ignore[assignment]

from ark.errors import ArkError

FORMAT_NAME = "ark-index"
META_FILE = "meta.json"


@contextmanager
def update_lock(path: Path) -> Iterator[None]:
    """Hold ``.NAME.lock`` beside the index for as long as the block runs: every
    writer of an index (build, describe, add, remove, compact) takes it, so that no
    two of them interleave. Beside, not inside, so that a build's or compact's
    directory swap does not change which file writers lock. The lock file is opened
    without following a symlink and must be a regular file (it is never truncated or
    written: a link planted there cannot make ARK touch another file)."""
    if fcntl is None:
        yield
        return
    path = Path(path)
    lock = path.parent / f".{path.name}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666)
    except OSError as exc:
        raise ArkError(
            f"cannot lock {path} for writing: {lock} could not be opened ({exc.strerror}); "
            "it must be a regular file (or absent) in a writable directory"
        ) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ArkError(f"cannot lock {path}: {lock} is not a regular file; remove it")
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directories in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``),
    so that readers see the old index or the new one, never none; False where the
    system cannot (then the caller renames in two steps)."""
    if not hasattr(os, "uname") or os.uname().sysname != "Linux":
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    done = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return bool(done == 0)


#: A build's temporary directory younger than this is never removed by another build
#: (it covers the instant between creating the directory and locking it).
STALE_AFTER_S = 30.0


def _hold(directory: Path) -> int | None:
    """Lock ``directory`` for as long as the returned descriptor is open, so that other
    builds can tell a live temporary directory from one a killed build left behind.
    ``None`` where directories cannot be locked (then only age tells them apart)."""
    if fcntl is None:
        return None
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def remove_stale_builds(out: Path) -> list[Path]:
    """Remove the temporary directories (``.NAME.XXXXXXXX``, ``.NAME.old.XXXXXXXX``) that
    builds of ``out`` killed before their end left beside it; returns what was removed.

    Only directories named as a build names them, older than :data:`STALE_AFTER_S` and
    not locked by a live build are removed; a previous index parked in an ``old``
    directory is kept while ``out`` itself holds no index (the kill came between the
    two renames, so it is the only copy).
    """
    pattern = re.compile(rf"\.{re.escape(out.name)}\.(old\.)?[a-z0-9_]{{8}}")
    try:
        candidates = sorted(out.parent.iterdir())
    except OSError:
        return []
    removed = []
    now = time.time()
    for path in candidates:
        match = pattern.fullmatch(path.name)
        if match is None or path.is_symlink() or not path.is_dir():
            continue
        try:
            young = now - path.lstat().st_mtime < (STALE_AFTER_S if fcntl else 86_400.0)
        except OSError:
            continue
        if young or (match.group(1) and not is_ark_index_dir(out)):
            continue
        fd = None
        if fcntl is not None:
            fd = _hold(path)
            if fd is None:  # a live build holds it (or it cannot be opened)
                continue
        try:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
        finally:
            if fd is not None:
                os.close(fd)
    return removed


def _chmod_as_umask(directory: Path) -> None:
    """Give ``directory`` (and its subdirectories) the mode ``mkdir`` would have."""
    mask = os.umask(0)
    os.umask(mask)
    for d in [directory, *(p for p in directory.rglob("*") if p.is_dir())]:
        d.chmod(0o777 & ~mask)


def is_ark_index_dir(path: Path) -> bool:
    """Whether ``path`` is provably an ARK index: its ``meta.json`` carries the format
    marker. Only such a directory may be replaced by a build."""
    try:
        meta = json.loads((path / META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and meta.get("format") == FORMAT_NAME


def _check_writable_target(out: Path) -> None:
    if not out.exists() and not out.is_symlink():
        return
    if out.is_dir() and not out.is_symlink() and (not any(out.iterdir()) or is_ark_index_dir(out)):
        return
    raise ArkError(
        f"{out} exists and is not an ARK index; choose another output directory "
        "(an existing index is replaced, anything else is left alone)"
    )
