"""An exclusive, crash-safe lock on a directory ARK writes: a run, an ingest's work.

Two processes appending to one run would each redo the other's queries and leave
duplicate records (two ingests into one work directory each paid for every chunk);
so a writer holds ``run.lock`` (``ingest.lock``) for as long as it writes. The lock
is an OS advisory lock (``flock`` on POSIX, ``msvcrt.locking`` on Windows) on that
file, which the kernel releases when its holder exits — a ``kill -9`` included — so a
lock left behind by a dead process is simply taken over. The file names its holder
(PID, host, start time) for the error a second writer gets. Network file systems may
not honour the lock; the store is written so that it stays consistent even then
(see ``ark.eval._runstore``).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import stat
import sys
import time
import warnings
from pathlib import Path
from typing import IO, Any

from ark.errors import ArkError

LOCK_FILE = "run.lock"


class RunLockedError(ArkError):
    """Another live process holds the directory (a run's, or an ingest's work)."""

    def __init__(
        self,
        root: Path,
        holder: dict[str, Any],
        name: str = LOCK_FILE,
        advice: str = "wait for that run to finish or stop it, or choose another --out directory",
    ) -> None:
        self.root = root
        self.holder = holder
        pid = holder.get("pid")
        who = f"process {pid}" if pid else "another process"
        if holder.get("host") and holder.get("host") != socket.gethostname():
            who += f" on {holder['host']}"
        since = f" since {holder['started']}" if holder.get("started") else ""
        super().__init__(f"{root} is in use by {who}{since} (it holds {root / name}); {advice}")


class RunLock:
    """``acquire()`` fails fast with :class:`RunLockedError`; ``release()`` is idempotent."""

    def __init__(self, root: str | Path, name: str = LOCK_FILE, advice: str | None = None) -> None:
        self.root = Path(root)
        self.path = self.root / name
        self.advice = advice
        self._file: IO[bytes] | None = None

    @property
    def held(self) -> bool:
        return self._file is not None

    def acquire(self) -> None:
        if self._file is not None:
            return
        for _ in range(10):  # the file may be removed between our open and our lock
            f = self._open()
            if not _try_lock(f):
                holder = _read_holder(f)
                f.close()
                advice = {} if self.advice is None else {"advice": self.advice}
                raise RunLockedError(self.root, holder, self.path.name, **advice)
            if _same_file(f, self.path):
                break
            _unlock(f)  # a releasing holder unlinked it: lock the new file instead
            f.close()
        else:  # pragma: no cover - ten lost races in a row
            raise ArkError(f"could not lock {self.path}; try again")
        info = {"pid": os.getpid(), "host": socket.gethostname(), "started": _now()}
        f.seek(0)
        f.truncate()
        f.write(json.dumps(info).encode())
        f.flush()
        os.fsync(f.fileno())
        self._file = f

    def _open(self) -> IO[bytes]:
        """``run.lock`` opened for reading and writing, created if absent — never
        through a symbolic link (a link planted there would make ARK truncate the
        file it points to), and only if it is a regular file. Errors say what is wrong
        with the run directory instead of a traceback."""
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
        try:
            fd = os.open(self.path, flags, 0o644)
        except OSError as exc:
            if self.path.is_symlink():
                why = "is a symbolic link; ARK does not follow it (remove it)"
            elif self.path.is_dir():
                why = "is a directory, not a lock file (remove it)"
            elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                why = (
                    f"cannot be created or written ({exc.strerror}): the run directory is "
                    "read-only; a run can be resumed only where it can be written "
                    "(`ark report` and `ark view` read it as it is)"
                )
            else:
                why = f"cannot be opened ({exc.strerror})"
            raise ArkError(f"cannot lock {self.root}: {self.path} {why}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ArkError(
                    f"cannot lock {self.root}: {self.path} is not a regular file (remove it)"
                )
            return os.fdopen(fd, "r+b")
        except BaseException:
            os.close(fd)
            raise

    def release(self) -> None:
        f, self._file = self._file, None
        if f is None:
            return
        # Unlink while still holding it, so no one locks a file about to vanish.
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)
        _unlock(f)
        f.close()

    def __del__(self) -> None:  # a store dropped without close(): release, don't leak
        with contextlib.suppress(Exception):  # at interpreter exit the kernel does it
            self.release()


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _read_holder(f: IO[bytes]) -> dict[str, Any]:
    try:
        f.seek(0)
        holder = json.loads(f.read(4096).decode("utf-8"))
    except (OSError, ValueError):  # being written at this very moment, or damaged
        return {}
    return holder if isinstance(holder, dict) else {}


def _same_file(f: IO[bytes], path: Path) -> bool:
    try:
        a, b = os.fstat(f.fileno()), os.stat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(f: IO[bytes]) -> bool:
        f.seek(0)
        try:
            msvcrt.locking(f.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(f: IO[bytes]) -> None:
        f.seek(0)
        with contextlib.suppress(OSError):
            msvcrt.locking(f.fileno(), msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(f: IO[bytes]) -> bool:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        except OSError as exc:  # no locks on this file system (some NFS mounts)
            if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                raise
            warnings.warn(
                f"cannot lock {f.name} ({exc.strerror}); nothing stops a second run from "
                "writing this directory at the same time",
                RuntimeWarning,
                stacklevel=4,
            )
        return True

    def _unlock(f: IO[bytes]) -> None:
        with contextlib.suppress(OSError):
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
