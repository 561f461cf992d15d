"""LLM backends behind one async protocol: OpenAI-compatible servers and a local model.

This package holds the protocol (``ChatModel``, ``Message``, ``Completion``...), the
OpenAI-compatible client, the response cache and ``ModelSettings``; the llama.cpp
engine is its own subpackage, :mod:`ark.llm.local`, imported only when a local model
is built (``import ark.llm`` loads neither it nor llama.cpp).

``make_chat_model()`` picks the backend: an OpenAI-compatible endpoint when a base URL
is given (``--base-url``, ``ARK_BASE_URL`` or ``OPENAI_BASE_URL``) or an OpenAI key is
set with a model name; otherwise the local in-process model (no key, no network),
with one KV cache per conversation when ``local_states=True`` (or ``ARK_LOCAL_STATES=1``),
or decoding concurrent calls (parallel agents) in one batch when ``parallel=True`` (or
``ARK_LOCAL_PARALLEL=1``). ``ModelSettings`` holds its arguments and the response
cache as data, the one place ``ark ask``, ``ark eval``, ``ark distill collect`` and the
Ray workers build their model from; it sits here, beside ``make_chat_model``, because
``ModelSettings.build`` calls it (in a module of its own it would import this one back).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ark.llm._cache import (
    CACHE_FILE,
    CachedChatModel,
    CacheWarning,
    LLMCache,
    with_llm_cache,
)
from ark.llm._types import (
    CallProfile,
    ChatModel,
    Completion,
    LLMError,
    Message,
    SlowBuildWarning,
    ToolCall,
    Usage,
    parse_json_reply,
)

__all__ = [
    "CACHE_FILE",
    "CacheWarning",
    "CachedChatModel",
    "CallProfile",
    "ChatModel",
    "Completion",
    "LLMCache",
    "LLMError",
    "Message",
    "ModelSettings",
    "SlowBuildWarning",
    "ToolCall",
    "Usage",
    "make_chat_model",
    "parse_json_reply",
    "uses_local_model",
    "with_llm_cache",
]


def _endpoint(base_url: str | None, use_env: bool) -> str | None:
    """The endpoint given, else the one the environment configures (``use_env``)."""
    if use_env:
        return base_url or os.environ.get("ARK_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
    return base_url


def _is_model_file(model: str) -> bool:
    """Whether ``model`` names a local GGUF (a path, or a packaged model's name)."""
    return model.endswith(".gguf") or model in ("0.5b", "1.5b") or os.path.isfile(model)


def uses_local_model(
    model: str | None = None, base_url: str | None = None, *, use_env: bool = True
) -> bool:
    """Whether :func:`make_chat_model` with these arguments gives the local model (no
    endpoint given or configured, and no served model named): the commands a newcomer
    types first choose their defaults by it."""
    if _endpoint(base_url, use_env) is not None:
        return False
    if model is None:
        return True
    return _is_model_file(model) or not (use_env and "OPENAI_API_KEY" in os.environ)


def make_chat_model(
    model: str | None = None,
    base_url: str | None = None,
    *,
    request_timeout: float | None = None,
    max_retries: int | None = None,
    use_env: bool = True,
    **kwargs: Any,
) -> ChatModel:
    """The backend for ``model``/``base_url``; the local model when neither points away.

    ``request_timeout`` (seconds per model call) and ``max_retries`` reach either
    backend. ``use_env=False`` ignores ``ARK_BASE_URL``/``OPENAI_BASE_URL`` and the key
    (``ark demo`` promises no network unless ``--base-url`` is given). A model name
    that is neither a ``.gguf`` file nor servable (no key, no base URL) is refused
    rather than read as a path. ``parallel=True`` picks the local backend that decodes
    parallel agents' calls in one batch (``LocalBatchedChatModel``); None reads
    ``ARK_LOCAL_PARALLEL``. ``kv_cache`` (local only: a directory, or False for off;
    None reads ``ARK_KV_CACHE``) is where the system prompt's evaluated state is kept
    between processes (see :mod:`ark.llm.local`).
    """
    parallel = kwargs.pop("parallel", None)  # local only: a server batches on its own
    kv_cache = kwargs.pop("kv_cache", None)  # local only: the system prompt's state on disk
    if parallel is None:
        parallel = os.environ.get("ARK_LOCAL_PARALLEL", "0") not in ("", "0")
    base_url = _endpoint(base_url, use_env)
    if not uses_local_model(model, base_url, use_env=use_env):
        from ark.llm._openai import OpenAIChatModel

        if model is None:
            model = os.environ.get("ARK_MODEL") if use_env else None
        if model is None:
            raise LLMError("an OpenAI-compatible endpoint needs a model name: pass --model")
        if request_timeout is not None:
            kwargs["timeout"] = request_timeout
        if max_retries is not None:
            kwargs["max_retries"] = max_retries
        return OpenAIChatModel(model=model, base_url=base_url, **kwargs)
    if model is not None and not _is_model_file(model):
        raise LLMError(
            f"--model {model!r} is not a .gguf file, and no OpenAI-compatible endpoint is "
            "configured: set OPENAI_API_KEY (OpenAI) or pass --base-url URL (any "
            "OpenAI-compatible server) to use a served model"
        )
    from ark.llm.local import LocalBatchedChatModel, LocalChatModel, LocalStatesChatModel

    if request_timeout is not None:
        kwargs["request_timeout"] = request_timeout
    if max_retries is not None:
        kwargs["max_retries"] = max_retries
    if kv_cache is not None:
        kwargs["kv_cache"] = kv_cache
    states = kwargs.pop("local_states", None)
    if parallel:  # parallel agents decoded together, one sequence each
        return LocalBatchedChatModel(model_path=model, **kwargs)
    if states is None:
        states = os.environ.get("ARK_LOCAL_STATES", "0") not in ("", "0")
    if states:  # one KV cache per conversation (parallel agents on one local model)
        return LocalStatesChatModel(model_path=model, **kwargs)
    return LocalChatModel(model_path=model, **kwargs)


@dataclass(frozen=True)
class ModelSettings:
    """The arguments of :func:`make_chat_model` plus the response cache.

    Plain data (it travels to Ray workers by pickle). ``options`` are backend keyword
    arguments such as ``lora_path`` (an adapter) or ``n_threads`` (llama.cpp).
    """

    model: str | None = None
    base_url: str | None = None
    request_timeout: float | None = None
    max_retries: int | None = None
    #: Local model: decode parallel agents' calls together (None: ``ARK_LOCAL_PARALLEL``).
    parallel: bool | None = None
    #: False ignores ``ARK_BASE_URL``/``OPENAI_BASE_URL`` and the key (``ark demo``).
    use_env: bool = True
    #: Directory of the on-disk response cache (None: no cache).
    llm_cache: str | Path | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def kwargs(self) -> dict[str, Any]:
        """The keyword arguments of ``make_chat_model`` (the cache is not one of them)."""
        return {
            "model": self.model,
            "base_url": self.base_url,
            "request_timeout": self.request_timeout,
            "max_retries": self.max_retries,
            **({"parallel": self.parallel} if self.parallel is not None else {}),
            **({"use_env": False} if not self.use_env else {}),
            **self.options,
        }

    def build(self) -> ChatModel:
        """The model, behind the response cache when ``llm_cache`` is set."""
        return with_llm_cache(make_chat_model(**self.kwargs()), self.llm_cache)
