"""A stand-in for llama-cpp-python's ``Llama`` and the ctypes KV-state calls, so the
local backend's bookkeeping (profiles, prompt reuse, the state on disk) is tested
without loading a model. Tokens are the prompt's bytes; a KV state is the cached
tokens written as JSON."""

from __future__ import annotations

import json
import time
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np
import pytest

TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.role == 'system' and tools %}{% for t in tools %}{{ t | tojson }}\n{% endfor %}"
    "{% endif %}{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
REPLY = '<tool_call>\n{"name": "search_in_graph", "arguments": {"query": "x"}}\n</tool_call>'
#: Seconds the fake spends per prompt token evaluated and per token generated.
EVAL_S = 2e-5
DECODE_S = 2e-4


class FakeLlama:
    """The parts of ``llama_cpp.Llama`` the local backends use, with llama-cpp-python's
    prefix rule (``Llama.generate``): reuse the common prefix, replay the last token
    when the whole prompt is cached but its logits are not live."""

    def __init__(self, path: str, n_ctx: int = 4096, **kwargs: Any) -> None:
        self.metadata = {"tokenizer.chat_template": TEMPLATE}
        self._n_ctx = n_ctx
        self.input_ids = np.zeros(n_ctx, dtype=np.intc)
        self.n_tokens = 0
        self._requires_eval = False
        self.evaluated = 0  # prompt tokens evaluated, over all calls
        self.replies: deque[str] = deque()

    def n_ctx(self) -> int:
        return self._n_ctx

    @property
    def _input_ids(self) -> np.ndarray:
        return self.input_ids[: self.n_tokens]

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return ([1] if add_bos else []) + list(text)

    def detokenize(self, tokens: Any, prev_tokens: Any = None, special: bool = False) -> bytes:
        return bytes(int(t) for t in tokens)

    def set_seed(self, seed: int) -> None:
        pass

    def reset(self) -> None:
        self.n_tokens = 0

    def eval(self, tokens: list[int]) -> None:
        time.sleep(EVAL_S * len(tokens))
        self.input_ids[self.n_tokens : self.n_tokens + len(tokens)] = tokens
        self.n_tokens += len(tokens)
        self.evaluated += len(tokens)
        self._requires_eval = False

    def create_completion(
        self, prompt: list[int], *, max_tokens: int, stopping_criteria: Any, **_: Any
    ) -> dict[str, Any]:
        cached = 0
        for a, b in zip(self._input_ids, prompt, strict=False):
            if a != b:
                break
            cached += 1
        whole = cached == len(prompt)
        if not (whole and self.n_tokens == len(prompt) and not self._requires_eval):
            self.n_tokens = cached - 1 if whole else cached
            self.eval(prompt[self.n_tokens :])
        text = self.replies.popleft() if self.replies else REPLY
        out: list[int] = []
        for token in text.encode()[:max_tokens]:
            time.sleep(DECODE_S)
            out.append(token)
            if stopping_criteria is not None and stopping_criteria(self._input_ids, None):
                break
            self.input_ids[self.n_tokens] = token  # the real one decodes it next
            self.n_tokens += 1
        return {
            "choices": [{"text": bytes(out).decode(), "finish_reason": "stop"}],
            "usage": {"prompt_tokens": len(prompt), "completion_tokens": len(out)},
        }


def fake_seq_state(llm: FakeLlama) -> bytes:
    return b"FAKEKV" + json.dumps(llm._input_ids.tolist()).encode()


def fake_load_seq_state(llm: FakeLlama, tokens: Any, data: bytes) -> bool:
    """Refuses bytes that are not a fake state (as llama.cpp refuses a foreign one)."""
    try:
        assert data.startswith(b"FAKEKV")
        saved = json.loads(data[6:])
    except (AssertionError, ValueError):
        llm.reset()
        return False
    llm.input_ids[: len(saved)] = saved
    llm.n_tokens = len(saved)
    llm._requires_eval = True
    return True


def install(monkeypatch: pytest.MonkeyPatch) -> None:
    """Route ``llama_cpp.Llama`` and the KV-state calls to the fakes. The fake answers
    ``create_completion`` only, so generation goes there (``ARK_LOOKUP=off``); ARK's own
    decoder needs llama.cpp's decode and is tested on the real model
    (``tests/llm/test_lookup.py``)."""
    llama_cpp = pytest.importorskip("llama_cpp")
    from ark.probes import local_kv_state as _kv_state

    monkeypatch.setenv("ARK_LOOKUP", "off")

    monkeypatch.setattr(llama_cpp, "Llama", FakeLlama)
    monkeypatch.setattr(_kv_state, "seq_state", fake_seq_state)
    monkeypatch.setattr(_kv_state, "load_seq_state", fake_load_seq_state)
    monkeypatch.setattr(_kv_state, "reset_perf", lambda llm: None)
    monkeypatch.setattr(_kv_state, "decode_ms", lambda llm: None)


def fake_model_file(directory: Path) -> Path:
    path = directory / "fake-model.gguf"
    path.write_bytes(b"GGUF not a model")
    return path
