"""An on-disk cache of model responses, so re-running an evaluation costs no model call.

``CachedChatModel(inner, dir)`` wraps any :class:`ChatModel`. A response is stored
under the sha256 of everything that determines it: the model's identity (its name,
backend, and for a local model the sha256 of its weights and of any adapter — see
``cache_identity()``), the messages, the tool specs, any further request options (a
response schema, for instance) and the sampling parameters and seed. A request at
temperature > 0 without a seed is random by design, so it is never served from the
cache nor stored in it.

The store is one SQLite database in write-ahead-log mode, so several processes (the
agents of ``--concurrency``, Ray workers on one machine) read and write it at once; a
writer waits for another instead of failing. SQLite's locks need a local disk: on a
network file system give each machine its own cache directory.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ark.errors import ArkError
from ark.llm._types import ChatModel, Completion, Message, Usage

DB_FILE = "llm-cache.sqlite3"
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


class LLMCache:
    """The SQLite store: ``get``/``put`` by key, plus statistics and clearing."""

    def __init__(self, directory: str | Path, *, timeout_s: float = 60.0) -> None:
        self.dir = Path(directory)
        if self.dir.exists() and not self.dir.is_dir():
            raise ArkError(f"--llm-cache {self.dir} is a file, not a directory")
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / DB_FILE
        try:
            self._db = sqlite3.connect(
                self.path, timeout=timeout_s, check_same_thread=False, isolation_level=None
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise ArkError(f"{self.path} is not a usable LLM cache: {exc}") from exc
        self._lock = threading.Lock()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT response FROM responses WHERE key = ?", (key,)
            ).fetchone()
            if row is None:
                return None
            self._db.execute(
                "UPDATE responses SET hits = hits + 1, last_hit = ? WHERE key = ?",
                (time.time(), key),
            )
        return json.loads(row[0])

    def put(self, key: str, model: str, response: dict[str, Any]) -> None:
        """First writer wins: a response already stored by another process is kept."""
        usage = response.get("usage", {})
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO responses "
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

    def stats(self) -> dict[str, Any]:
        """Entries and hits served, overall and per model, and the bytes on disk."""
        with self._lock:
            rows = self._db.execute(
                "SELECT model, COUNT(*), SUM(hits), SUM(prompt_tokens), "
                "SUM(completion_tokens), SUM(hits * (prompt_tokens + completion_tokens)) "
                "FROM responses GROUP BY model ORDER BY model"
            ).fetchall()
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
        size = sum(f.stat().st_size for f in self.dir.glob(DB_FILE + "*") if f.is_file())
        return {
            "path": str(self.path),
            "entries": sum(m["entries"] for m in models),
            "hits": sum(m["hits"] for m in models),
            "tokens_served_from_cache": sum(m["tokens_served_from_cache"] for m in models),
            "bytes": size,
            "models": models,
        }

    def clear(self, model: str | None = None) -> int:
        """Delete every entry (or one model's); returns how many were deleted."""
        with self._lock:
            if model is None:
                n = self._db.execute("DELETE FROM responses").rowcount
            else:
                n = self._db.execute("DELETE FROM responses WHERE model = ?", (model,)).rowcount
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.execute("VACUUM")
        return n

    def close(self) -> None:
        with self._lock:
            self._db.close()


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
        if stored is not None:
            self.counters.hits += 1
            return completion_from_dict(stored, latency_s=time.perf_counter() - started)
        self.counters.misses += 1
        completion = await self.inner.complete(
            messages, tools, temperature=temperature, max_tokens=max_tokens, seed=seed, **options
        )
        await asyncio.to_thread(self.cache.put, key, self.name, completion_to_dict(completion))
        return completion


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
    )


def with_llm_cache(llm: ChatModel, directory: str | Path | None) -> ChatModel:
    """``llm`` behind a response cache in ``directory``; ``llm`` itself when None."""
    if directory is None:
        return llm
    return CachedChatModel(llm, directory)
