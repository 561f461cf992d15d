"""LLM backends behind one async protocol: OpenAI-compatible servers and a local model.

``make_chat_model()`` picks the backend: an OpenAI-compatible endpoint when a base URL
is given (``--base-url``, ``ARK_BASE_URL`` or ``OPENAI_BASE_URL``) or an OpenAI key is
set with a model name; otherwise the local in-process model (no key, no network).
"""

from __future__ import annotations

import os
from typing import Any

from ark.llm._types import (
    ChatModel,
    Completion,
    LLMError,
    Message,
    ToolCall,
    Usage,
    parse_json_reply,
)

__all__ = [
    "ChatModel",
    "Completion",
    "LLMError",
    "Message",
    "ToolCall",
    "Usage",
    "make_chat_model",
    "parse_json_reply",
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
    from ark.llm._local import LocalChatModel

    return LocalChatModel(model_path=model, **kwargs)
