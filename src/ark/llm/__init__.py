"""LLM backends behind one async protocol: OpenAI-compatible servers and a local model.

``make_chat_model()`` picks the backend: an OpenAI-compatible endpoint when a base URL
is given (``--base-url``, ``ARK_BASE_URL`` or ``OPENAI_BASE_URL``) or an OpenAI key is
set with a model name; otherwise the local in-process model (no key, no network),
with one KV cache per conversation when ``local_states=True`` (or ``ARK_LOCAL_STATES=1``).
"""

from __future__ import annotations

import os
from typing import Any

from ark.llm._types import ChatModel, Completion, LLMError, Message, ToolCall, Usage

__all__ = [
    "ChatModel",
    "Completion",
    "LLMError",
    "Message",
    "ToolCall",
    "Usage",
    "make_chat_model",
]


def make_chat_model(
    model: str | None = None, base_url: str | None = None, **kwargs: Any
) -> ChatModel:
    """The backend for ``model``/``base_url``; the local model when neither points away."""
    base_url = base_url or os.environ.get("ARK_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
    remote = base_url is not None or (
        model is not None and not model.endswith(".gguf") and "OPENAI_API_KEY" in os.environ
    )
    if remote:
        from ark.llm._openai import OpenAIChatModel

        if model is None:
            model = os.environ.get("ARK_MODEL")
        if model is None:
            raise LLMError("an OpenAI-compatible endpoint needs a model name: pass --model")
        return OpenAIChatModel(model=model, base_url=base_url, **kwargs)
    states = kwargs.pop("local_states", None)
    if states is None:
        states = os.environ.get("ARK_LOCAL_STATES", "0") not in ("", "0")
    if states:  # one KV cache per conversation (parallel agents on one local model)
        from ark.llm._local_states import LocalStatesChatModel

        return LocalStatesChatModel(model_path=model, **kwargs)
    from ark.llm._local import LocalChatModel

    return LocalChatModel(model_path=model, **kwargs)
