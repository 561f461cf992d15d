"""A trained PEFT LoRA adapter as a GGUF LoRA adapter for llama.cpp, or merged into a
full Hugging Face model directory (for vLLM and other servers).

The GGUF follows llama.cpp's own ``convert_lora_to_gguf.py`` (not shipped in the
llama-cpp-python wheel, and it wants a Hugging Face config): ``general.type =
adapter``, ``adapter.type = lora``, ``adapter.lora.alpha``, and per adapted weight
two tensors ``blk.N.attn_q.weight.lora_a`` (PEFT's A, rank × in) and ``.lora_b`` (B,
out × rank); llama.cpp scales by alpha / rank. Only architectures whose GGUF weights
are not permuted relative to Hugging Face (the Qwen2 family) are supported. The
adapter also records ARK's own metadata (``ark.prompt``: the prompt variant the student
was trained with; ``ark.tools``: the tool options it calls; ``ark.hints``: whether its
observations carried ark-guided's hints), which ``--adapter`` reads back.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from ark._files import finish_temporary, temporary_beside
from ark.errors import ArkError
from ark.strategies import AdapterSettings, adapter_settings  # noqa: F401 - their home; importable from here as before

#: Hugging Face module name -> llama.cpp tensor name (Qwen2/Llama-style blocks).
MODULES = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}
SUPPORTED_ARCHS = ("qwen2", "qwen3")
_KEY = re.compile(r"layers\.(\d+)\.(.+)\.lora_([AB])(?:\.default)?\.weight$")


def gguf_tensor_names(weights: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """PEFT state-dict keys -> (GGUF tensor name, tensor)."""
    out = {}
    for key, tensor in weights.items():
        m = _KEY.search(key)
        if m is None or m.group(2) not in MODULES:
            raise ArkError(f"adapter weight {key!r} is not a LoRA weight of a supported module")
        layer, module, ab = m.groups()
        out[key] = (f"blk.{layer}.{MODULES[module]}.weight.lora_{ab.lower()}", tensor)
    return out


def export_gguf(
    adapter_dir: str | Path,
    out: str | Path,
    *,
    arch: str = "qwen2",
    metadata: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Write ``out`` (a GGUF LoRA adapter); returns a summary (tensors, rank, alpha)."""
    import gguf
    from safetensors.numpy import load_file

    adapter_dir = Path(adapter_dir)
    cfg_path = adapter_dir / "adapter_config.json"
    weights_path = adapter_dir / "adapter_model.safetensors"
    if not cfg_path.exists() or not weights_path.exists():
        raise ArkError(f"{adapter_dir} holds no PEFT adapter (adapter_config.json + safetensors)")
    if arch not in SUPPORTED_ARCHS:
        raise ArkError(f"exporting LoRA for architecture {arch!r} is not supported")
    cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    if cfg.get("use_rslora") or cfg.get("use_dora"):
        raise ArkError("rsLoRA/DoRA adapters have no llama.cpp equivalent here")
    alpha = float(cfg["lora_alpha"])
    weights = load_file(str(weights_path))
    names = gguf_tensor_names(weights)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_beside(out)  # created exclusively: a planted link is never written
    writer = gguf.GGUFWriter(str(tmp), arch)
    writer.add_string("general.type", "adapter")
    writer.add_string("adapter.type", "lora")
    writer.add_float32("adapter.lora.alpha", alpha)
    for key, value in (metadata or {}).items():
        writer.add_string(f"ark.{key}", str(value))
    ranks = set()
    for _, (name, tensor) in sorted(names.items(), key=lambda kv: kv[1][0]):
        array = np.ascontiguousarray(tensor.astype(np.float32))
        if name.endswith("lora_a"):
            ranks.add(array.shape[0])
        writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    finish_temporary(tmp, out)
    return {
        "path": str(out),
        "tensors": len(names),
        "rank": sorted(ranks),
        "alpha": alpha,
        "bytes": out.stat().st_size,
        "metadata": metadata or {},
    }


def merge(adapter_dir: str | Path, base: str | Path, out: str | Path) -> Path:
    """Base + adapter merged into a full Hugging Face directory (weights and tokenizer)."""
    from peft import PeftModel
    from transformers import AutoTokenizer

    from ark.distill.train import load_base

    base = Path(base)
    model = load_base(base, "auto", "cpu")
    model = PeftModel.from_pretrained(model, str(adapter_dir)).merge_and_unload()
    out = Path(out)
    model.save_pretrained(str(out))
    if base.suffix == ".gguf":
        tok = AutoTokenizer.from_pretrained(str(base.parent), gguf_file=base.name)
    else:
        tok = AutoTokenizer.from_pretrained(str(base))
    tok.save_pretrained(str(out))
    return out
