"""An on-disk cache of model responses, so re-running an evaluation costs no model call.

``CachedChatModel(inner, dir)`` wraps any :class:`ChatModel`. A response is stored
under the sha256 of everything that determines it: the model's identity (its name,
backend, and for a local model the sha256 of its weights and of any adapter — see
``cache_identity()``), the messages, the tool specs, any further request options (a
response schema, for instance) and the sampling parameters and seed. A request at
temperature > 0 without a seed is random by design, so it is never served from the
cache nor stored in it.

An OpenAI-compatible server is named by its model name, its URL and what it says
about the model on ``/v1/models`` (llama.cpp's server gives the parameter count and
file size, vLLM the model path); each stored reply keeps the ``system_fingerprint``
it came with, and once a live reply in this process carries another one, stored
replies of the old fingerprint are asked again and replaced. The limit: a server
that says nothing about its weights (or a run answered wholly from the cache, which
never sees a fresh fingerprint) cannot tell a new checkpoint served under the same
name; clear that model's entries (``ark llm-cache clear --model NAME``) after
changing one.

The store is one SQLite database in write-ahead-log mode, so several processes (the
agents of ``--concurrency``, Ray workers on one machine) read and write it at once; a
writer waits for another instead of failing. SQLite's locks need a local disk: on a
network file system give each machine its own cache directory. A cache that cannot be
read or written (a damaged file, a full disk) is bypassed with one warning: queries
are answered by the model, never failed by the cache (see :class:`LLMCache`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import sqlite3
import threading
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ark.errors import ArkError
from ark.llm._types import ChatModel, Completion, Message, Usage

#: The cache's file in its directory (``--llm-cache DIR``): what ``ark llm-cache`` looks for.
CACHE_FILE = "llm-cache.sqlite3"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created REAL NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0,
    last_hit REAL
)
"""


def model_identity(llm: Any) -> dict[str, Any]:
    """What names the weights behind ``llm``: its ``cache_identity()`` if it has one."""
    ident = getattr(llm, "cache_identity", None)
    if callable(ident):
        return dict(ident())
    return {"backend": type(llm).__qualname__, "name": getattr(llm, "name", "")}


def cacheable(temperature: float, seed: int | None) -> bool:
    """Greedy decoding, or sampling with a fixed seed, gives the same reply again."""
    return seed is not None or temperature <= 0


def request_key(
    identity: dict[str, Any],
    messages: Sequence[Message],
    tools: Sequence[dict[str, Any]],
    *,
    temperature: float,
    max_tokens: int | None,
    seed: int | None,
    options: dict[str, Any] | None = None,
) -> str:
    """sha256 of a canonical JSON of the whole request."""
    payload = {
        "model": identity,
        "messages": [m.to_dict() for m in messages],
        "tools": list(tools),
        "temperature": float(temperature),
        "max_tokens": max_tokens,
        "seed": seed,
        "options": options or {},
    }
    # ASCII escapes: a lone surrogate from a model must hash, not raise.
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CacheWarning(RuntimeWarning):
    """The response cache could not be read or written and is bypassed."""


class LLMCache:
    """The SQLite store: ``get``/``put`` by key, plus statistics and clearing.

    A cache is an optimisation, never a reason for a query to fail: if the database
    cannot be opened, read or written (damaged, locked past the timeout, disk full),
    ``get`` and ``put`` warn once (:class:`CacheWarning`), and from then on this
    instance answers every lookup with a miss and stores nothing, so callers ask the
    model instead. :attr:`error` says why. The damaged file is left in place for other
    processes that use it; ``clear()`` replaces it with an empty cache.
    """

    def __init__(self, directory: str | Path, *, timeout_s: float = 60.0) -> None:
        self.dir = Path(directory)
        if self.dir.exists() and not self.dir.is_dir():
            raise ArkError(f"--llm-cache {self.dir} is a file, not a directory")
        self.path = self.dir / CACHE_FILE
        self.timeout_s = timeout_s
        #: Why the cache is bypassed (None while it works).
        self.error: str | None = None
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._db = self._connect()
        except (sqlite3.Error, OSError) as exc:  # damaged, not ours to write, disk full
            self.bypass(exc)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(
            self.path, timeout=self.timeout_s, check_same_thread=False, isolation_level=None
        )
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(_SCHEMA)
        except sqlite3.Error:
            db.close()
            raise
        return db

    def bypass(self, exc: BaseException) -> None:
        """Stop using the database (warning once) after ``exc``."""
        if self.error is not None:
            return
        self.error = f"{type(exc).__name__}: {exc}"
        warnings.warn(
            f"the LLM cache {self.path} cannot be used ({self.error}); answering from "
            "the model without it. `ark llm-cache clear` replaces it with an empty one.",
            CacheWarning,
            stacklevel=3,
        )
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response, or None (not stored, or the cache is unusable)."""
        with self._lock:
            if self._db is None:
                return None
            try:
                row = self._db.execute(
                    "SELECT response FROM responses WHERE key = ?", (key,)
                ).fetchone()
                if row is None:
                    return None
                self._db.execute(
                    "UPDATE responses SET hits = hits + 1, last_hit = ? WHERE key = ?",
                    (time.time(), key),
                )
                value = json.loads(row[0])
                if not isinstance(value, dict) or not isinstance(value.get("message"), dict):
                    raise ValueError("a stored response is not a completion")
            except (sqlite3.Error, ValueError, TypeError, RecursionError) as exc:
                self.bypass(exc)
                return None
        return value

    def put(self, key: str, model: str, response: dict[str, Any], *, replace: bool = False) -> None:
        """First writer wins: a response already stored by another process is kept
        (``replace=True`` overwrites a stale one)."""
        usage = response.get("usage", {})
        with self._lock:
            if self._db is None:
                return
            try:
                self._db.execute(
                    f"INSERT OR {'REPLACE' if replace else 'IGNORE'} INTO responses "
                    "(key, model, response, prompt_tokens, completion_tokens, created) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        key,
                        model,
                        json.dumps(response),  # ASCII escapes: SQLite stores any model text
                        int(usage.get("prompt_tokens", 0)),
                        int(usage.get("completion_tokens", 0)),
                        time.time(),
                    ),
                )
            except sqlite3.Error as exc:
                self.bypass(exc)

    def _usable(self) -> sqlite3.Connection:
        """The connection, for the commands that inspect the cache (an error if none)."""
        if self._db is None:
            raise ArkError(
                f"the LLM cache {self.path} cannot be read ({self.error}); "
                "`ark llm-cache clear` replaces it with an empty one"
            )
        return self._db

    def stats(self) -> dict[str, Any]:
        """Entries and hits served, overall and per model, and the bytes on disk."""
        with self._lock:
            try:
                rows = (
                    self._usable()
                    .execute(
                        "SELECT model, COUNT(*), SUM(hits), SUM(prompt_tokens), "
                        "SUM(completion_tokens), SUM(hits * (prompt_tokens + completion_tokens)) "
                        "FROM responses GROUP BY model ORDER BY model"
                    )
                    .fetchall()
                )
            except sqlite3.Error as exc:
                raise ArkError(
                    f"the LLM cache {self.path} cannot be read ({type(exc).__name__}: {exc}); "
                    "`ark llm-cache clear` replaces it with an empty one"
                ) from None
        models = [
            {
                "model": m,
                "entries": n,
                "hits": h or 0,
                "prompt_tokens": p or 0,
                "completion_tokens": c or 0,
                "tokens_served_from_cache": s or 0,
            }
            for m, n, h, p, c, s in rows
        ]
        size = sum(f.stat().st_size for f in self.dir.glob(CACHE_FILE + "*") if f.is_file())
        return {
            "path": str(self.path),
            "entries": sum(m["entries"] for m in models),
            "hits": sum(m["hits"] for m in models),
            "tokens_served_from_cache": sum(m["tokens_served_from_cache"] for m in models),
            "bytes": size,
            "models": models,
        }

    def clear(self, model: str | None = None) -> int:
        """Delete every entry (or one model's); returns how many were deleted. A cache
        that cannot be read is replaced by an empty one (all of it: -1 is returned)."""
        with self._lock:
            try:
                db = self._usable()
                if model is None:
                    n = db.execute("DELETE FROM responses").rowcount
                else:
                    n = db.execute("DELETE FROM responses WHERE model = ?", (model,)).rowcount
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                db.execute("VACUUM")
                return n
            except (ArkError, sqlite3.Error) as exc:
                if model is not None:
                    raise ArkError(
                        f"the LLM cache {self.path} cannot be read ({exc}); clear all of it"
                    ) from None
            self._replace()
            return -1

    def _replace(self) -> None:
        """A damaged database gives way to an empty one (called with the lock held)."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)
        try:
            self._db = self._connect()
        except sqlite3.Error as exc:
            raise ArkError(f"cannot create an LLM cache at {self.path}: {exc}") from None
        self.error = None

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


@dataclass
class CacheCounters:
    hits: int = 0
    misses: int = 0
    uncacheable: int = 0  # temperature > 0 without a seed: passed through, not stored

    def to_dict(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "uncacheable": self.uncacheable}


class CachedChatModel:
    """A :class:`ChatModel` that answers repeated requests from an :class:`LLMCache`.

    A served response carries ``cached=True`` and the time the lookup took as its
    latency; everything else (text, tool calls and their ids, token usage, finish
    reason) is what the model returned the first time, so a re-run with the same
    seeds replays the same trajectories.
    """

    def __init__(self, inner: ChatModel, cache: LLMCache | str | Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.cache = cache if isinstance(cache, LLMCache) else LLMCache(cache)
        self.counters = CacheCounters()
        self._identity: dict[str, Any] | None = None
        #: The ``system_fingerprint`` of the model's latest live reply in this process:
        #: a stored reply made under another one is stale (asked again, replaced).
        self.fingerprint: str | None = None

    def cache_identity(self) -> dict[str, Any]:
        if self._identity is None:
            self._identity = model_identity(self.inner)
        return self._identity

    def __getattr__(self, name: str) -> Any:  # e.g. ``render`` of the local backend
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        *,
        temperature: float = 0.7,
        max_tokens: int | None = None,
        seed: int | None = None,
        **options: Any,
    ) -> Completion:
        if not cacheable(temperature, seed):
            self.counters.uncacheable += 1
            return await self.inner.complete(
                messages,
                tools,
                temperature=temperature,
                max_tokens=max_tokens,
                seed=seed,
                **options,
            )
        started = time.perf_counter()
        identity = await asyncio.to_thread(self.cache_identity)  # may hash a model file once
        key = request_key(
            identity,
            messages,
            tools,
            temperature=temperature,
            max_tokens=max_tokens,
            seed=seed,
            options=_jsonable(options),
        )
        stored = await asyncio.to_thread(self.cache.get, key)
        stale = False
        if stored is not None:
            try:
                served = completion_from_dict(stored, latency_s=time.perf_counter() - started)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a damaged entry
                self.cache.bypass(exc)
            else:
                stale = _outdated(served.system_fingerprint, self.fingerprint)
                if not stale:
                    self.counters.hits += 1
                    return served
        self.counters.misses += 1
        completion = await self.inner.complete(
            messages, tools, temperature=temperature, max_tokens=max_tokens, seed=seed, **options
        )
        if completion.system_fingerprint:
            self.fingerprint = completion.system_fingerprint
        response = completion_to_dict(completion)
        await asyncio.to_thread(self.cache.put, key, self.name, response, replace=stale)
        return completion


def _outdated(stored: str | None, current: str | None) -> bool:
    """A reply stored under one server configuration, now that another one answers."""
    return bool(stored and current and stored != current)


def _jsonable(options: dict[str, Any]) -> dict[str, Any]:
    """Request options as JSON-able values (a pydantic model or dataclass as its schema)."""
    out: dict[str, Any] = {}
    for k, v in options.items():
        if v is None:
            continue
        schema = getattr(v, "model_json_schema", None)
        out[k] = schema() if callable(schema) else v
    return json.loads(json.dumps(out, sort_keys=True, default=repr))


def completion_to_dict(c: Completion) -> dict[str, Any]:
    return {
        "message": c.message.to_dict(),
        "usage": {
            "prompt_tokens": c.usage.prompt_tokens,
            "completion_tokens": c.usage.completion_tokens,
        },
        "model": c.model,
        "latency_s": c.latency_s,
        "finish_reason": c.finish_reason,
        "data": c.data,  # a response_schema reply, parsed
        "system_fingerprint": c.system_fingerprint,
    }


def completion_from_dict(d: dict[str, Any], *, latency_s: float) -> Completion:
    usage = d.get("usage", {})
    return Completion(
        message=Message.from_dict(d["message"]),
        usage=Usage(int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))),
        model=d.get("model", ""),
        latency_s=latency_s,
        finish_reason=d.get("finish_reason", "stop"),
        cached=True,
        data=d.get("data"),
        system_fingerprint=fp if isinstance(fp := d.get("system_fingerprint"), str) else None,
    )


def with_llm_cache(llm: ChatModel, directory: str | Path | None) -> ChatModel:
    """``llm`` behind a response cache in ``directory``; ``llm`` itself when None."""
    if directory is None:
        return llm
    return CachedChatModel(llm, directory)
