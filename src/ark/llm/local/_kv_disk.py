"""The evaluated system prompt's KV state on disk, so a fresh process skips evaluating it.

Why: the system prompt (tools, schema, rules) is the longest part of the first
prompt and the same for every question on one index. The first process evaluates it
once and saves the sequence's KV cells (``llama_state_seq_get_data``); every later
process loads them before its first call, far quicker than evaluating them
(``docs/decisions/local-model.md``), and evaluates only the question.

A state is valid only for the exact tokens on the exact weights, so the file name is a
hash of its key: the model's identity (weights sha256, LoRA adapter sha256 and scale,
llama.cpp version, the KV cache's element types) and the prompt's tokens. The index
enters through the tokens: the system prompt is rendered from its schema, so another
schema is another prompt; an index rebuilt with the same schema keeps its state, which
is still exact. Files are written to a temporary name and renamed (a crash never
leaves half a file under the real name), carry the key and a sha256 of the state, and
are checked on load: anything that does not match is a warning, the file is removed
and the prompt evaluated (and saved) again — never a crash.

Where: ``ARK_KV_CACHE`` (a directory; ``off`` or ``0`` turns it off), else ``kv/`` in
``ARK_CACHE_DIR``, else in ``$XDG_CACHE_HOME/ark``, else ``~/.cache/ark`` (the
platform's cache directory); a relative path is made absolute when it is read, so a
process that changes directory keeps using the same files.
``LocalChatModel(kv_cache=...)`` wins.

Size: states are tens of MB each, one per (model, system prompt), so the directory
grows with every index and model tried; after each save the least recently used files
(a load counts as a use: it touches the file) are removed until the directory holds at
most ``ARK_KV_CACHE_MAX_MB`` (default :data:`DEFAULT_MAX_MB`). ``ark llm-cache stats``
says where it is and how full.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import uuid
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ark.llm._types import Message
from ark.llm.local import _kv_state
from ark.llm.local._kv_state import common_prefix

MAGIC = b"ARK-KV-STATE 1\n"
#: Prompts shorter than this are not worth a file.
MIN_TOKENS = 32
_OFF = ("", "0", "off", "false", "no")


class KVCacheWarning(UserWarning):
    """A saved prompt state was refused (damaged, or another key); it is rebuilt."""


#: Default most megabytes of saved prompt states kept (``ARK_KV_CACHE_MAX_MB``).
DEFAULT_MAX_MB = 2048


def cache_root() -> Path:
    """ARK's cache directory: ``ARK_CACHE_DIR``, else ``$XDG_CACHE_HOME/ark`` (an
    absolute ``XDG_CACHE_HOME`` only, as the XDG specification says), else
    ``~/.cache/ark``; always absolute."""
    env = os.environ.get("ARK_CACHE_DIR")
    if env:
        return Path(env).expanduser().absolute()
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "ark"
    return Path.home() / ".cache" / "ark"


def kv_cache_dir(setting: str | Path | bool | None = None) -> Path | None:
    """The directory of saved prompt states (absolute), or None when turned off.

    ``setting``: a directory, False (off), True or None (``ARK_KV_CACHE``, else
    ``kv/`` in :func:`cache_root`).
    """
    if setting is False:
        return None
    if setting is None or setting is True:
        env = os.environ.get("ARK_KV_CACHE")
        if env is not None:
            return None if env.strip().lower() in _OFF else Path(env).expanduser().absolute()
        return cache_root() / "kv"
    return Path(setting).expanduser().absolute()


def kv_cache_max_bytes() -> int:
    """The size cap of the prompt-state directory (``ARK_KV_CACHE_MAX_MB``; a value
    that is not a positive number is the default, with a warning)."""
    raw = os.environ.get("ARK_KV_CACHE_MAX_MB")
    if raw is None:
        return DEFAULT_MAX_MB << 20
    try:
        mb = float(raw)
        if not mb > 0 or mb == float("inf"):
            raise ValueError
    except ValueError:
        warnings.warn(
            f"ARK_KV_CACHE_MAX_MB={raw!r} is not a positive number; using {DEFAULT_MAX_MB}",
            KVCacheWarning,
            2,
        )
        return DEFAULT_MAX_MB << 20
    return int(mb * (1 << 20))


def _state_files(directory: Path) -> list[tuple[float, int, Path]]:
    """(last use, size, path) of every saved state, least recently used first."""
    out = []
    try:
        entries = list(directory.glob("*.kv"))
    except OSError:
        return []
    for p in entries:
        try:
            st = p.stat()
        except OSError:
            continue
        out.append((st.st_mtime, st.st_size, p))
    return sorted(out)


def evict(directory: Path, max_bytes: int, keep: Path | None = None) -> list[Path]:
    """Remove the least recently used states until ``directory`` holds at most
    ``max_bytes`` (``keep``, the state just written, goes last); returns what went."""
    files = _state_files(directory)
    total = sum(size for _, size, _ in files)
    removed = []
    for _, size, p in sorted(files, key=lambda f: f[2] == keep):
        if total <= max_bytes:
            break
        with contextlib.suppress(OSError):
            p.unlink()
            removed.append(p)
            total -= size
    return removed


def kv_cache_stats(setting: str | Path | bool | None = None) -> dict[str, Any]:
    """Where the prompt-state cache is and how full: ``path`` (None: off), ``files``,
    ``bytes``, ``max_bytes``."""
    directory = kv_cache_dir(setting)
    files = _state_files(directory) if directory is not None else []
    return {
        "path": str(directory) if directory is not None else None,
        "files": len(files),
        "bytes": sum(size for _, size, _ in files),
        "max_bytes": kv_cache_max_bytes(),
    }


class PromptStateStore:
    """Saved KV states of prompt prefixes for one model identity, one file each."""

    def __init__(
        self, directory: Path, identity: dict[str, Any], max_bytes: int | None = None
    ) -> None:
        self.directory = directory
        self.identity = identity
        self._ident = json.dumps(identity, sort_keys=True, default=str)
        self.max_bytes = kv_cache_max_bytes() if max_bytes is None else max_bytes

    def key(self, tokens: Sequence[int]) -> str:
        """sha256 of the model identity and the tokens: the file's name."""
        digest = hashlib.sha256(self._ident.encode())
        digest.update(b"\0" + json.dumps(list(tokens)).encode())
        return digest.hexdigest()

    def path(self, tokens: Sequence[int]) -> Path:
        return self.directory / f"{self.key(tokens)}.kv"

    def load(self, tokens: Sequence[int]) -> bytes | None:
        """The saved state of exactly ``tokens`` on this model; None on a miss. A file
        that is damaged or holds another key is removed with a warning."""
        path = self.path(tokens)
        try:
            raw = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            warnings.warn(f"cannot read saved prompt state {path}: {exc}", KVCacheWarning, 2)
            return None
        problem = self._check(raw, tokens)
        if isinstance(problem, bytes):
            with contextlib.suppress(OSError):  # a use: the last to be evicted
                os.utime(path)
            return problem
        self.discard(tokens, problem)
        return None

    def _check(self, raw: bytes, tokens: Sequence[int]) -> bytes | str:
        """The state in ``raw`` if it is whole and of this key, else what is wrong."""
        if not raw.startswith(MAGIC):
            return "not a saved prompt state"
        head_end = raw.find(b"\n", len(MAGIC))
        if head_end < 0:
            return "truncated header"
        try:
            head = json.loads(raw[len(MAGIC) : head_end])
        except (ValueError, RecursionError):
            return "damaged header"
        data = raw[head_end + 1 :]
        if not isinstance(head, dict):
            return "damaged header"
        if head.get("identity") != json.loads(self._ident) or head.get("tokens") != list(tokens):
            return "saved for another model or prompt"
        if head.get("bytes") != len(data) or head.get("sha256") != hashlib.sha256(data).hexdigest():
            return "checksum mismatch (damaged or truncated)"
        return data

    def save(self, tokens: Sequence[int], data: bytes) -> Path | None:
        """Write the state atomically (temporary file, then rename); None (with a
        warning) when the directory is not writable — the run goes on without it."""
        path = self.path(tokens)
        head = {
            "identity": json.loads(self._ident),
            "tokens": list(tokens),
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        tmp = path.with_suffix(f".{uuid.uuid4().hex}.tmp")
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with tmp.open("wb") as f:
                f.write(MAGIC + json.dumps(head).encode() + b"\n")
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            warnings.warn(f"cannot save the prompt state to {path}: {exc}", KVCacheWarning, 2)
            return None
        finally:
            with contextlib.suppress(OSError):  # e.g. the directory could not be made
                tmp.unlink(missing_ok=True)
        evict(self.directory, self.max_bytes, keep=path)
        if not path.exists():
            warnings.warn(
                f"the prompt state ({len(data) / 1e6:.1f} MB) is larger than the cache's cap "
                f"({self.max_bytes / 1e6:.1f} MB, ARK_KV_CACHE_MAX_MB); not kept",
                KVCacheWarning,
                2,
            )
            return None
        return path

    def discard(self, tokens: Sequence[int], why: str) -> None:
        """Remove a refused file, saying why; the prompt is evaluated and saved again."""
        path = self.path(tokens)
        warnings.warn(
            f"saved prompt state {path.name} refused ({why}); evaluating the prompt again",
            KVCacheWarning,
            3,
        )
        path.unlink(missing_ok=True)


@dataclass(frozen=True)
class WarmStart:
    """What putting the system prompt in the KV cache cost before a call."""

    state_s: float = 0.0  # loading or saving its state
    prompt_s: float = 0.0  # evaluating it (a miss)
    evaluated: int = 0  # tokens evaluated (a miss)
    hit: bool = False  # loaded from disk


class SystemPromptStates:
    """The system prompt's KV state on disk, for one local model (``LocalChatModel``).

    Before a call whose KV cache does not hold the prompt's system turn: load its state
    from disk (a hit: only the rest is evaluated), or evaluate it first, alone, and save
    it for the next process (a miss costs the same evaluation plus one write).
    """

    def __init__(self, model: Any, directory: Path | None) -> None:
        self.model = model
        self.directory = directory
        self._store: PromptStateStore | None = None
        self._prefixes: dict[str, list[int]] = {}

    @property
    def enabled(self) -> bool:
        return self.directory is not None

    def store(self) -> PromptStateStore:
        """The store, keyed by the model's identity (hashed once, on first use)."""
        if self._store is None:
            assert self.directory is not None
            identity = {**self.model.cache_identity(), "kv": kv_layout(self.model._llm)}
            self._store = PromptStateStore(self.directory, identity)
        return self._store

    def prefix(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], prompt: Sequence[int]
    ) -> list[int] | None:
        """The tokens of ``prompt`` that the system turn alone renders to (None when
        there is no system message or it is too short to be worth a file)."""
        if not messages or messages[0].role != "system":
            return None
        memo = hashlib.sha256(
            json.dumps([messages[0].content, list(tools)], sort_keys=True).encode()
        ).hexdigest()
        if memo not in self._prefixes:
            if len(self._prefixes) > 64:
                self._prefixes.clear()
            alone = self.model.tokenize_prompt(messages[:1], tools)
            self._prefixes[memo] = alone
        alone = self._prefixes[memo]
        n = min(common_prefix(alone, prompt), len(prompt) - 1)  # one token left for logits
        return list(prompt[:n]) if n >= MIN_TOKENS else None

    def warm(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], prompt: Sequence[int]
    ) -> WarmStart:
        """Put the system prompt's state in the KV cache unless it is there already."""
        if self.directory is None:
            return WarmStart()
        prefix = self.prefix(messages, tools, prompt)
        llm = self.model._llm
        if prefix is None:
            return WarmStart()
        cached = common_prefix(llm._input_ids.tolist(), prefix)
        if cached == len(prefix):
            return WarmStart()
        store = self.store()
        started = time.perf_counter()
        data = store.load(prefix)
        if data is not None:
            if _kv_state.load_seq_state(llm, prefix, data):
                return WarmStart(state_s=time.perf_counter() - started, hit=True)
            store.discard(prefix, "llama.cpp refused the state")
            cached = 0  # the KV cache was cleared
        loaded = time.perf_counter()
        llm.n_tokens = cached  # keep the cached part; evaluate the rest of the prefix alone
        llm.eval(prefix[cached:])
        evaluated = time.perf_counter()
        if store.save(prefix, _kv_state.seq_state(llm)) is None:
            self.directory = None  # not writable: one warning, then off for this process
        return WarmStart(
            state_s=(loaded - started) + (time.perf_counter() - evaluated),
            prompt_s=evaluated - loaded,
            evaluated=len(prefix) - cached,
        )


def kv_layout(llm: Any) -> dict[str, Any]:
    """The context settings a saved state's bytes depend on (element types of K and
    V, flash attention, which transposes V); llama.cpp refuses a mismatch anyway."""
    params = getattr(llm, "context_params", None)
    names = ("type_k", "type_v", "flash_attn_type", "flash_attn")
    return {n: int(getattr(params, n)) for n in names if hasattr(params, n)}
