"""The run directory's lock (``run.lock``): :mod:`ark._lock`, which an ingest's work
directory shares."""

from ark._lock import LOCK_FILE, RunLock, RunLockedError

__all__ = ["LOCK_FILE", "RunLock", "RunLockedError"]
