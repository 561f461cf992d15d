"""What picks and wraps a chat model, as data: the one place ``ark ask``, ``ark eval``,
``ark distill collect`` and the Ray workers build their model from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ark.llm._cache import with_llm_cache
from ark.llm._types import ChatModel


@dataclass(frozen=True)
class ModelSettings:
    """The arguments of :func:`~ark.llm.make_chat_model` plus the response cache.

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
        from ark.llm import make_chat_model

        return with_llm_cache(make_chat_model(**self.kwargs()), self.llm_cache)
