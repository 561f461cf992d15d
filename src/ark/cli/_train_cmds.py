"""``ark distill train|export``: LoRA-train the student, and write its adapter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ark.cli._distill_cmds import JsonOpt, _resolve_base, distill_app
from ark.cli._output import console, err_console, esc, fail, print_json
from ark.errors import ArkError


def _train_line(state: Any, budget: int | None) -> str:
    """One log line of training progress, for runs whose stderr is not a terminal."""
    rate = state.tokens / state.elapsed_s if state.elapsed_s else 0.0
    line = f"step {state.step}  {state.tokens:,}"
    line += f"/{budget:,} tokens" if budget else " tokens"
    line += f"  loss {state.loss_ema:.3f}  {rate:.1f} tokens/s"
    if budget and rate and state.tokens < budget:
        left = int((budget - state.tokens) / rate)
        line += f"  ETA {left // 3600}:{left % 3600 // 60:02d}:{left % 60:02d}"
    return line


BUDGET_HELP = (
    "Stop after this many tokens (forward tokens, prompts included). The default, "
    "750,000, is about two hours of the 0.5B student on 2 free CPU cores (measured "
    "99-111 tokens/s, bf16): ~370 trajectories; the 1.5B trains ~2x slower. "
    "0 = no budget (epochs only)."
)


@distill_app.command("train")
def train_cmd(
    sft: Annotated[Path, typer.Argument(help="SFT JSONL made by `ark distill sft`.")],
    out: Annotated[Path, typer.Option("-o", "--out", help="Adapter directory.")],
    base: Annotated[
        str, typer.Option(help="Student: 0.5b | 1.5b | a GGUF | a HF directory.")
    ] = "0.5b",
    preset: Annotated[str, typer.Option(help="cpu (default) | gpu (the paper's)")] = "cpu",
    token_budget: Annotated[int | None, typer.Option(help=BUDGET_HELP)] = None,
    rank: Annotated[int | None, typer.Option(help="LoRA rank.")] = None,
    layer_fraction: Annotated[
        float | None, typer.Option(help="Adapt only the upper share of layers (1 = all).")
    ] = None,
    lr: Annotated[float | None, typer.Option(help="Learning rate.")] = None,
    epochs: Annotated[float | None, typer.Option(help="Passes over the data.")] = None,
    grad_accum: Annotated[int | None, typer.Option(help="Records per optimizer step.")] = None,
    val_fraction: Annotated[
        float | None, typer.Option(help="Held-out share for validation/early stop.")
    ] = None,
    checkpoint_every: Annotated[int | None, typer.Option(help="Optimizer steps.")] = None,
    train_steps: Annotated[
        int | None, typer.Option(help="Stop after N optimizer steps in this call.")
    ] = None,
    threads: Annotated[int | None, typer.Option(help="CPU threads.")] = None,
    dtype: Annotated[
        str | None, typer.Option(help="auto (bf16 on CUDA or a bf16 CPU, else fp32) | bf16 | fp32")
    ] = None,
    resume: Annotated[bool, typer.Option(help="Continue from the last checkpoint.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """LoRA-train the student on SFT records, with checkpoints, --resume and an ETA."""
    import dataclasses

    try:
        from ark.distill.train import TrainConfig, train
    except ImportError as exc:  # pragma: no cover - needs the [train] extra
        fail(f"training needs the [train] extra ({exc})", as_json=as_json)
    if preset not in ("cpu", "gpu"):
        fail(f"unknown --preset {preset!r}; use cpu or gpu", as_json=as_json)
    cfg = TrainConfig.gpu_preset() if preset == "gpu" else TrainConfig()
    overrides = {
        "token_budget": None if token_budget == 0 else token_budget,
        "rank": rank,
        "layer_fraction": layer_fraction,
        "lr": lr,
        "epochs": epochs,
        "grad_accum": grad_accum,
        "val_fraction": val_fraction,
        "checkpoint_every": checkpoint_every,
        "threads": threads,
        "dtype": dtype,
    }
    cfg = dataclasses.replace(
        cfg,
        **{
            k: v
            for k, v in overrides.items()
            if v is not None or (k == "token_budget" and token_budget == 0)
        },
    )
    try:
        base_path = _resolve_base(base)
        with Progress(
            TextColumn("[bold]train"),
            BarColumn(),
            TextColumn("{task.completed:,.0f}/{task.total:,.0f} tokens"),
            TextColumn("loss {task.fields[loss]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=err_console,
            disable=as_json,
        ) as bar:
            task = bar.add_task("train", total=cfg.token_budget or 1, loss="-")

            plain = not as_json and not err_console.is_terminal

            def show(state, budget):  # type: ignore[no-untyped-def]
                if plain:  # a background run's log gets a line per optimizer step
                    err_console.print(_train_line(state, budget), highlight=False)
                bar.update(
                    task,
                    completed=state.tokens,
                    total=budget or max(state.tokens, 1),
                    loss=f"{state.loss_ema:.3f}",
                )

            meta = train(
                sft, base_path, out, cfg, resume=resume, train_steps=train_steps, progress=show
            )
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    if as_json:
        print_json(meta)
    else:
        console.print(
            f"Adapter in {esc(str(out))}: {meta['step']} steps, {meta['tokens']:,} tokens "
            f"({meta['tokens_per_s']} tokens/s), stopped by {meta['stop_reason']}"
            + ("" if meta["finished"] else "; continue with --resume")
        )


@distill_app.command("export")
def export_cmd(
    adapter_dir: Annotated[Path, typer.Argument(help="Adapter directory from `distill train`.")],
    out: Annotated[Path, typer.Option("-o", "--out", help="adapter.gguf, or a dir with --merge.")],
    merge: Annotated[
        bool, typer.Option(help="Merge into a full Hugging Face model directory instead.")
    ] = False,
    base: Annotated[
        str | None, typer.Option(help="Base for --merge (default: the one trained on).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Write the adapter as a GGUF LoRA for llama.cpp (`--adapter`), or merge it."""
    from ark.distill.export import export_gguf
    from ark.distill.export import merge as merge_fn
    from ark.distill.train import read_adapter_meta

    try:
        meta = read_adapter_meta(adapter_dir)
        if merge:
            path = merge_fn(adapter_dir, _resolve_base(base) if base else meta["base"], out)
            result = {"path": str(path), "merged": True}
        else:
            result = export_gguf(
                adapter_dir,
                out,
                metadata={
                    "prompt": meta.get("prompt", "full"),
                    "tools": json.dumps(meta.get("tools") or {}, sort_keys=True),
                    "hints": "true" if meta.get("hints") else "false",
                    "base": meta.get("base_name", ""),
                    "tokens": str(meta.get("tokens", "")),
                },
            )
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    if as_json:
        print_json(result)
    elif merge:
        console.print(f"Merged model written to {esc(result['path'])}")
    else:
        console.print(
            f"Wrote {esc(result['path'])}: {result['tensors']} tensors, rank "
            f"{result['rank']}, alpha {result['alpha']}, prompt {meta.get('prompt', 'full')}"
        )
