"""LoRA training on SFT records: a plain PEFT loop (needs the ``[train]`` extra).

A plain loop rather than TRL's SFTTrainer because the records already carry their own
loss mask (assistant tokens only) and the loop must stop on a token budget, checkpoint
atomically and resume mid-epoch across sessions; the loss is the same next-token
cross-entropy over the masked labels. The base is the GGUF the local backend runs
(transformers dequantizes it; needs ``gguf``) or a Hugging Face directory.

CPU defaults (why, measured: docs/decisions/training-defaults.md): the 0.5B student,
LoRA r=8 on the attention and MLP projections of the upper half of the layers only
(so the backward pass stops halfway), gradient checkpointing, bf16 where the CPU has
bf16 instructions, and a token budget that fits a background run of about two hours.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ark.distill.sft import meta_path, read_sft
from ark.errors import ArkError

TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
META_FILE = "ark_adapter.json"
CHECKPOINT = "checkpoint"


@dataclass
class TrainConfig:
    """Settings of one run; the CPU preset is the default, :meth:`gpu_preset` the paper's."""

    rank: int = 8
    alpha: float = 16.0
    dropout: float = 0.0
    targets: tuple[str, ...] = TARGETS
    #: Train only the upper ``layer_fraction`` of the layers (1.0 = all).
    layer_fraction: float = 0.5
    lr: float = 2e-4
    warmup_steps: int = 5
    grad_accum: int = 4
    epochs: float = 1.0
    #: Stop after this many tokens (forward tokens, prompt included); the default is
    #: about two hours of the 0.5B student on 2 cores (docs/decisions/training-defaults.md).
    token_budget: int | None = 750_000
    max_len: int = 4096
    checkpoint_every: int = 10  # optimizer steps
    val_fraction: float = 0.0
    patience: int | None = None  # checkpoints without val improvement before stopping
    seed: int = 0
    dtype: str = "auto"  # auto: bf16 on CUDA and on CPUs with bf16 instructions, else fp32
    gradient_checkpointing: bool = True
    threads: int | None = None

    @classmethod
    def gpu_preset(cls) -> TrainConfig:
        """The paper's settings: all layers, 1 epoch, AdamW lr 1e-5, early stopping on
        the validation loss, no token budget."""
        return cls(
            rank=16,
            alpha=32.0,
            layer_fraction=1.0,
            lr=1e-5,
            grad_accum=8,
            token_budget=None,
            max_len=16384,
            checkpoint_every=50,
            val_fraction=0.05,
            patience=3,
            dtype="bf16",
        )


def load_base(base: str | Path, dtype: Any, device: str) -> Any:
    """A causal LM from a GGUF file (dequantized by transformers) or a HF directory."""
    from transformers import AutoModelForCausalLM

    base = Path(base)
    if base.suffix == ".gguf":
        if not base.exists():
            raise ArkError(f"--base {base} does not exist")
        model = AutoModelForCausalLM.from_pretrained(
            str(base.parent), gguf_file=base.name, dtype=dtype
        )
    elif base.is_dir():
        model = AutoModelForCausalLM.from_pretrained(str(base), dtype=dtype)
    else:
        raise ArkError(f"--base {base}: not a GGUF file or a model directory")
    return model.to(device)


def _layers(model: Any) -> int:
    return int(model.config.num_hidden_layers)


def lora_model(model: Any, cfg: TrainConfig) -> Any:
    from peft import LoraConfig, get_peft_model

    n = _layers(model)
    first = n - max(1, math.ceil(n * cfg.layer_fraction))
    layers = list(range(first, n)) if first > 0 else None
    lcfg = LoraConfig(
        r=cfg.rank,
        lora_alpha=cfg.alpha,
        lora_dropout=cfg.dropout,
        target_modules=list(cfg.targets),
        layers_to_transform=layers,
        bias="none",
        task_type="CAUSAL_LM",
    )
    with warnings.catch_warnings():  # transformers 5 renames the checkpointing calls
        warnings.simplefilter("ignore", FutureWarning)
        model = get_peft_model(model, lcfg)
        if cfg.gradient_checkpointing:
            model.gradient_checkpointing_enable(
                gradient_checkpointing_kwargs={"use_reentrant": False}
            )
        # PEFT and transformers both make the embeddings' output require grad (which
        # reentrant checkpointing needs), so the backward pass ran down through the
        # untrained lower layers. Non-reentrant checkpointing reaches the LoRA weights
        # without it: the same gradients, less time (docs/decisions/training-defaults.md).
        model.disable_input_require_grads()
    return model


@dataclass
class TrainState:
    step: int = 0  # optimizer steps done
    position: int = 0  # records consumed (over epochs)
    tokens: int = 0
    trained_tokens: int = 0
    elapsed_s: float = 0.0
    loss_ema: float | None = None
    best_val: float | None = None
    bad_checks: int = 0
    history: list[dict[str, float]] = field(default_factory=list)


Progress = Callable[[TrainState, int | None], None]


def train(
    sft_path: str | Path,
    base: str | Path,
    out: str | Path,
    cfg: TrainConfig,
    *,
    resume: bool = False,
    train_steps: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Train a LoRA adapter into ``out``; returns its metadata (also ``out/ark_adapter.json``).

    ``train_steps`` stops after that many optimizer steps in this call (measurements,
    tests); a later call with ``resume=True`` continues from the last checkpoint.
    """
    import torch

    out = Path(out)
    ckpt = out / CHECKPOINT
    if out.exists() and any(out.iterdir()) and not resume:
        raise ArkError(f"{out} is not empty; pass --resume to continue its run, or another -o")
    if resume and not (ckpt / "state.json").exists():
        raise ArkError(f"{out} has no checkpoint to resume")
    if resume:
        _check_resume(ckpt, cfg, sft_path)
    sft_meta = _read_meta(sft_path)
    _check_template(base, sft_meta)
    records = [r for r in read_sft(sft_path) if len(r["input_ids"]) <= cfg.max_len]
    if not records:
        raise ArkError(f"{sft_path}: no record of at most {cfg.max_len} tokens")
    rng = random.Random(cfg.seed)
    rng.shuffle(records)
    n_val = int(len(records) * cfg.val_fraction)
    val, records = records[:n_val], records[n_val:]
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = {"bf16": torch.bfloat16, "fp32": torch.float32, "fp16": torch.float16}.get(
        cfg.dtype, torch.bfloat16 if device == "cuda" or _cpu_has_bf16() else torch.float32
    )
    t_load = time.perf_counter()
    model = lora_model(load_base(base, dtype, device), cfg)
    load_s = time.perf_counter() - t_load
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.0)
    state = TrainState()
    if resume:
        state = _load_checkpoint(ckpt, model, opt)
    out.mkdir(parents=True, exist_ok=True)
    (out / "train_config.json").write_text(
        json.dumps({"sft": str(sft_path), **asdict(cfg)}), encoding="utf-8"
    )
    total_records = max(1, int(len(records) * cfg.epochs))
    budget = cfg.token_budget
    total_steps = planned_steps(records, total_records, budget, cfg.grad_accum)
    model.train()
    started = time.perf_counter() - state.elapsed_s
    cpu_started, tokens_started = time.process_time(), state.tokens
    steps_here = 0
    micro = 0
    stop_reason = "epochs"
    while state.position < total_records:
        if budget is not None and state.tokens >= budget:
            stop_reason = "token_budget"
            break
        rec = records[state.position % len(records)]
        ids = torch.tensor([rec["input_ids"]], device=device)
        loss, n_trained = masked_loss(model, rec, device)
        (loss / cfg.grad_accum).backward()
        micro += 1
        state.position += 1
        state.tokens += ids.shape[1]
        state.trained_tokens += n_trained
        value = float(loss.detach())
        state.loss_ema = value if state.loss_ema is None else 0.9 * state.loss_ema + 0.1 * value
        if micro % cfg.grad_accum == 0 or state.position >= total_records:
            for g in opt.param_groups:
                g["lr"] = _lr(cfg, state.step, total_steps)
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            state.step += 1
            steps_here += 1
            state.elapsed_s = time.perf_counter() - started
            state.history.append(
                {
                    "step": state.step,
                    "loss": round(state.loss_ema, 4),
                    "tokens": state.tokens,
                    "elapsed_s": round(state.elapsed_s, 1),
                }
            )
            if progress:
                progress(state, budget)
            if state.step % cfg.checkpoint_every == 0:
                if val and _validate(model, val, state, device, cfg, ckpt / "best"):
                    stop_reason = "early_stop"
                    _save_checkpoint(ckpt, model, opt, state)
                    break
                _save_checkpoint(ckpt, model, opt, state)
            if train_steps is not None and steps_here >= train_steps:
                stop_reason = "train_steps"
                break
    state.elapsed_s = time.perf_counter() - started
    _save_checkpoint(ckpt, model, opt, state)
    if val and stop_reason != "early_stop":
        _validate(model, val, state, device, cfg, ckpt / "best")
    best = ckpt / "best"
    if best.exists():  # early stopping kept the best validated adapter
        _copy_adapter(best, out)
    else:
        model.save_pretrained(str(out))
    meta = {
        "base": str(base),
        "base_name": Path(base).name,
        "prompt": sft_meta.get("prompt", "full"),
        "tools": sft_meta.get("tools", {}),
        "hints": bool(sft_meta.get("hints", False)),
        "template_sha256": sft_meta.get("template_sha256"),
        "sft": str(sft_path),
        "records": len(records),
        "val_records": len(val),
        "stop_reason": stop_reason,
        "finished": stop_reason != "train_steps",
        "load_s": round(load_s, 1),
        "device": device,
        "dtype": str(dtype).removeprefix("torch."),
        "tokens_per_s": round(state.tokens / state.elapsed_s, 2) if state.elapsed_s else None,
        # Per CPU-second of this call: comparable across machines loaded by other jobs.
        "tokens_per_cpu_s": round(
            (state.tokens - tokens_started) / max(1e-9, time.process_time() - cpu_started), 2
        ),
        "config": {k: v for k, v in asdict(cfg).items()},
        **{k: v for k, v in asdict(state).items() if k != "history"},
        "history": state.history[-50:],
    }
    (out / META_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return meta


def _cpu_has_bf16() -> bool:
    """bf16 matmuls in hardware (AVX512-BF16 or AMX), where bf16 is the faster dtype
    (``docs/decisions/training-defaults.md``); without them it is emulated and slower."""
    import torch

    probes = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(getattr(torch.cpu, p, lambda: False)() for p in probes)


def masked_loss(model: Any, rec: dict[str, Any], device: str) -> tuple[Any, int]:
    """Mean next-token loss over the trained tokens; the LM head runs only at the
    positions that predict them (with a 152k vocabulary it is a quarter of the 0.5B
    model's compute, and its logits most of the memory)."""
    import torch

    ids = torch.tensor([rec["input_ids"]], device=device)
    mask = torch.tensor(rec["mask"][1:], device=device, dtype=torch.bool)
    keep = torch.nonzero(mask).squeeze(1)  # position p predicts token p + 1
    logits = model(input_ids=ids, logits_to_keep=keep).logits[0]
    targets = ids[0, keep + 1]
    return torch.nn.functional.cross_entropy(logits.float(), targets), int(keep.numel())


def planned_steps(
    records: list[dict[str, Any]], total_records: int, budget: int | None, grad_accum: int
) -> int:
    """Optimizer steps the run will take: the epochs, or fewer when the token budget
    ends it first, so the learning rate decays over the run that happens (a budget
    of 150 records out of 2,000 would otherwise train at almost full rate throughout)."""
    n = total_records
    if budget is not None:
        mean = sum(len(r["input_ids"]) for r in records) / len(records)
        n = min(n, math.ceil(budget / max(1.0, mean)))
    return max(1, n // grad_accum)


def _lr(cfg: TrainConfig, step: int, total_steps: int) -> float:
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    span = max(1, total_steps - cfg.warmup_steps)
    return cfg.lr * max(0.1, 1 - (step - cfg.warmup_steps) / span)


def _validate(
    model: Any,
    val: list[dict[str, Any]],
    state: TrainState,
    device: str,
    cfg: TrainConfig,
    best_dir: Path,
) -> bool:
    """Mean masked loss on the validation records; saves the best adapter; True when
    ``patience`` checks in a row did not improve (early stop)."""
    import torch

    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for rec in val:
            loss, n = masked_loss(model, rec, device)
            total += float(loss) * n
            count += n
    model.train()
    value = total / max(1, count)
    if state.history:
        state.history[-1]["val_loss"] = round(value, 4)
    if state.best_val is None or value < state.best_val:
        state.best_val = value
        state.bad_checks = 0
        model.save_pretrained(str(best_dir))
        return False
    state.bad_checks += 1
    return cfg.patience is not None and state.bad_checks >= cfg.patience


def _save_checkpoint(ckpt: Path, model: Any, opt: Any, state: TrainState) -> None:
    """Adapter, optimizer and position, written beside and swapped in atomically."""
    import torch

    tmp = ckpt.with_name(ckpt.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    model.save_pretrained(str(tmp / "adapter"))
    torch.save(opt.state_dict(), tmp / "optimizer.pt")
    (tmp / "state.json").write_text(json.dumps(asdict(state)), encoding="utf-8")
    if (ckpt / "best").exists():
        shutil.copytree(ckpt / "best", tmp / "best")
    old = ckpt.with_name(ckpt.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if ckpt.exists():
        os.replace(ckpt, old)
    os.replace(tmp, ckpt)
    shutil.rmtree(old, ignore_errors=True)


#: Settings a resumed run may change (they do not change what a step computes).
_RESUME_MAY_CHANGE = {"token_budget", "checkpoint_every", "threads", "epochs", "patience"}


def _check_resume(ckpt: Path, cfg: TrainConfig, sft_path: str | Path) -> None:
    path = ckpt.parent / "train_config.json"
    if not path.exists():
        return
    old = json.loads(path.read_text(encoding="utf-8"))
    new = json.loads(json.dumps({"sft": str(sft_path), **asdict(cfg)}))
    changed = sorted(k for k in new if k not in _RESUME_MAY_CHANGE and old.get(k) != new[k])
    if changed:
        raise ArkError(
            f"cannot resume {ckpt.parent}: settings differ from the original run "
            f"({', '.join(changed)}); use the same settings or another -o"
        )


def _load_checkpoint(ckpt: Path, model: Any, opt: Any) -> TrainState:
    import torch
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    weights = load_file(str(ckpt / "adapter" / "adapter_model.safetensors"))
    set_peft_model_state_dict(model, weights)
    opt.load_state_dict(torch.load(ckpt / "optimizer.pt", weights_only=True))
    data = json.loads((ckpt / "state.json").read_text(encoding="utf-8"))
    return TrainState(**data)


def _copy_adapter(src: Path, dst: Path) -> None:
    for name in ("adapter_model.safetensors", "adapter_config.json"):
        shutil.copy2(src / name, dst / name)


def _check_template(base: str | Path, sft_meta: dict[str, Any]) -> None:
    """The SFT records must be rendered with this base's own chat template (the 0.5B
    and 1.5B GGUFs' templates differ)."""
    import hashlib

    from ark.distill.sft import student_template_and_tokenizer

    want = sft_meta.get("template_sha256")
    if not want:
        return
    template, _ = student_template_and_tokenizer(base)
    if hashlib.sha256(template.source.encode()).hexdigest() != want:
        raise ArkError(
            f"the SFT records were rendered with another chat template than {base}'s; "
            f"rebuild them with `ark distill sft ... --base {base}`"
        )


def _read_meta(sft_path: str | Path) -> dict[str, Any]:
    path = meta_path(sft_path)
    if not path.exists():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


def read_adapter_meta(adapter_dir: str | Path) -> dict[str, Any]:
    path = Path(adapter_dir) / META_FILE
    if not path.exists():
        raise ArkError(
            f"{adapter_dir} is not an adapter made by `ark distill train` (no {META_FILE})"
        )
    return json.loads(path.read_text(encoding="utf-8"))
