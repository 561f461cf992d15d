"""The local engine: llama.cpp running a packaged GGUF model in-process, behind the
:class:`~ark.llm.ChatModel` protocol (no key, no network).

Three backends, each a :class:`LocalChatModel` underneath: the plain one (one
conversation at a time), :class:`LocalStatesChatModel` (one KV cache per
conversation, so parallel agents stop re-reading each other's prompts) and
:class:`LocalBatchedChatModel` (parallel agents' calls decoded in one batch).
``ark.llm.make_chat_model`` picks one and imports this package only then, so
``import ark.llm`` loads neither this engine nor llama.cpp; nothing here imports
``llama_cpp`` before a model is built either, so the model files, the chat template
and the caches' statistics can be read without it.

Behind this face, private modules hold the engineering a 0.5B-1.5B model needs to
call tools fast and reliably on a CPU: the tool-call grammar and its lazy sampler
(``_lazy_grammar.py``), prompt-lookup decoding (``_lookup.py``) with format drafts
(``_skeleton.py``), the chat template's fixes (``_chat_format.py``), KV snapshots in
memory (``_kv_state.py``) and on disk (``_kv_disk.py``), the CPU-instruction check of
the installed build (``_build.py``), the packaged model files (``_model_files.py``)
and a LoRA adapter's recorded metadata (``_adapters.py``). Only the engine imports
them; everything else uses the names below.
"""

from __future__ import annotations

from ark.llm.local._adapters import adapter_metadata
from ark.llm.local._batched import BatchStats, LocalBatchedChatModel
from ark.llm.local._build import UnusableBuildError, build_report
from ark.llm.local._chat_format import ChatTemplate, fix_call_braces, template_message
from ark.llm.local._kv_disk import KVCacheWarning, kv_cache_dir, kv_cache_stats
from ark.llm.local._model import LocalChatModel, json_grammar, tool_call_grammar
from ark.llm.local._model_files import (
    LOCAL_MODELS,
    MODEL_FILE,
    MODEL_SHA256,
    cache_dir,
    ensure_model_file,
    file_sha256,
    local_model_path,
)
from ark.llm.local._states import LocalStatesChatModel, StateStats

__all__ = [
    "LOCAL_MODELS",
    "MODEL_FILE",
    "MODEL_SHA256",
    "BatchStats",
    "ChatTemplate",
    "KVCacheWarning",
    "LocalBatchedChatModel",
    "LocalChatModel",
    "LocalStatesChatModel",
    "StateStats",
    "UnusableBuildError",
    "adapter_metadata",
    "build_report",
    "cache_dir",
    "ensure_model_file",
    "file_sha256",
    "fix_call_braces",
    "json_grammar",
    "kv_cache_dir",
    "kv_cache_stats",
    "local_model_path",
    "template_message",
    "tool_call_grammar",
]
