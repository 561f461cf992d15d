"""``ark distill synthesize|collect|sft|train|export``: teach a small model ARK's tool use."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ark.cli._app import app
from ark.cli._llm_opts import RetryFailedOpt, redone_line
from ark.cli._output import console, err_console, esc, fail, print_json
from ark.errors import ArkError
from ark.index import open_index

distill_app = typer.Typer(
    help="Distillation: synthetic or teacher trajectories -> SFT data -> LoRA -> GGUF adapter.",
    no_args_is_help=True,
)
app.add_typer(distill_app, name="distill")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


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


def _bar(disable: bool) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err_console,
        disable=disable,
    )


@distill_app.command("synthesize")
def synthesize_cmd(
    index_dir: Annotated[Path, typer.Argument(help="Index directory.")],
    out: Annotated[Path, typer.Option("-o", "--out", help="Directory for trajectories.jsonl.")],
    n: Annotated[int, typer.Option(help="Trajectories to make.")] = 2000,
    hops: Annotated[str, typer.Option(help="Hop counts, spread evenly (1,2,3).")] = "1,2,3",
    seed: Annotated[int, typer.Option(help="Seed (the same seed, the same set).")] = 0,
    prompt: Annotated[str, typer.Option(help="System prompt variant: short | full.")] = "short",
    max_steps: Annotated[int, typer.Option(help="Step budget the student runs with.")] = 20,
    templates: Annotated[
        Path | None, typer.Option(help="JSON file of question phrasings (see the docs).")
    ] = None,
    paraphrase_model: Annotated[
        str | None, typer.Option(help="Rewrite questions with this model (GGUF, 0.5b, name).")
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="Endpoint of the paraphrase model.")] = None,
    multi_neighborhood: Annotated[
        bool,
        typer.Option(
            help="Teach the hop over a set: one search_in_neighborhood over all of an "
            "intermediate hop's nodes (up to 50); the adapter then runs with it."
        ),
    ] = False,
    hints: Annotated[
        bool,
        typer.Option(
            help="Observations carry ark-guided's hints (the next call the question's "
            "relations suggest); run the adapter with --strategy ark-guided."
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Teacher-free trajectories from the graph (never a question set): oracle + real tools."""
    from ark.distill._synth_file import write_synthesis
    from ark.distill.synthesize import SynthConfig, llm_paraphraser, load_templates

    try:
        hop_list = tuple(int(h) for h in hops.split(",") if h.strip())
    except ValueError:
        fail(f"--hops takes comma-separated integers, got {hops!r}", as_json=as_json)
    target = out / "trajectories.jsonl"
    if target.exists():  # refused before the index is opened
        fail(f"{target} exists; choose another -o (synthesis never appends)", as_json=as_json)
    try:
        index = open_index(index_dir)
        cfg = SynthConfig(
            n=n,
            hops=hop_list,
            seed=seed,
            prompt=prompt,
            max_steps=max_steps,
            templates=load_templates(templates),
            multi_neighborhood=multi_neighborhood,
            hints=hints,
        )
        paraphrase = None
        if paraphrase_model:
            from ark.llm import make_chat_model

            paraphrase = llm_paraphraser(make_chat_model(paraphrase_model, base_url), seed)
        with _bar(as_json) as bar:
            task = bar.add_task("synthesize", total=n)
            stats = write_synthesis(
                index,
                cfg,
                out,
                paraphrase=paraphrase,
                progress=lambda d, t: bar.update(task, completed=d),
            )
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    if as_json:
        print_json(stats)
    else:
        console.print(
            f"Wrote {stats['trajectories']} trajectories to {esc(stats['path'])}: "
            + ", ".join(f"{k}: {v}" for k, v in stats["by_kind"].items())
            + f"; steps p50 {stats['steps_p50']}, max {stats['steps_max']}"
        )


@distill_app.command("collect")
def collect_cmd(
    questions: Annotated[
        str, typer.Argument(help="JSONL of {id, query} (answers ignored), or metaqa:N-hop etc.")
    ],
    index_dir: Annotated[Path, typer.Option("--index", help="Index directory.")],
    out: Annotated[Path, typer.Option("--out", help="Run directory (resumable).")],
    model: Annotated[str | None, typer.Option(help="Teacher model name or GGUF path.")] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint.")] = None,
    per_query: Annotated[int, typer.Option(help="Trajectories per query.")] = 3,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.7,
    max_steps: Annotated[int, typer.Option(help="T_max, steps per trajectory.")] = 20,
    split: Annotated[str, typer.Option(help="Split of a --dataset-style source.")] = "train",
    data_dir: Annotated[Path | None, typer.Option(help="Dataset directory.")] = None,
    limit: Annotated[int | None, typer.Option(help="Collect on a sample of N queries.")] = None,
    sample_seed: Annotated[int, typer.Option(help="Seed of the sample.")] = 0,
    resume: Annotated[bool, typer.Option(help="Continue an interrupted collection.")] = False,
    retry_failed: RetryFailedOpt = True,
    concurrency: Annotated[int, typer.Option(help="Queries at once (with --ray: per worker).")] = 1,
    ray: Annotated[
        bool, typer.Option("--ray", help="Spread the queries over Ray workers ([ray] extra).")
    ] = False,
    ray_address: Annotated[
        str | None, typer.Option(help="Ray cluster to join; default: a local one.")
    ] = None,
    ray_workers: Annotated[
        int | None, typer.Option(help="Ray workers (default: the cluster's CPUs).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Teacher trajectories, label-free: ARK runs --per-query times per query, no gold read."""
    from ark.distill.collect import collect, collect_settings, load_questions
    from ark.eval import RaySettings
    from ark.llm import ModelSettings

    try:
        index = open_index(index_dir)
        qs = load_questions(
            questions, index, split=split, data_dir=data_dir, limit=limit, sample_seed=sample_seed
        )
        with _bar(as_json) as bar:
            task = bar.add_task("collect", total=len(qs))
            summary = collect(
                qs,
                index,
                None,
                out,
                model=ModelSettings(model=model, base_url=base_url),
                ray=RaySettings(ray_address, ray_workers) if ray else None,
                source=questions,
                per_query=per_query,
                temperature=temperature,
                max_steps=max_steps,
                resume=resume,
                concurrency=concurrency,
                progress=lambda d, t: bar.update(task, completed=d, total=t),
                retry_failed=retry_failed,
                settings=collect_settings(questions, split, limit, sample_seed, base_url),
            )
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    if as_json:
        print_json(summary)
    else:
        console.print(
            f"{summary['queries']} queries, {summary['trajectories']} trajectories "
            f"({summary['failed']} failed queries); tokens per query: "
            f"{summary['tokens_per_query']:.0f}. Trajectories: {esc(summary['path'])}"
        )
        if "redone" in summary:
            err_console.print(f"[yellow]{redone_line(summary['redone'])}[/]")


@distill_app.command("sft")
def sft_cmd(
    traj_dirs: Annotated[list[Path], typer.Argument(help="Directories with trajectories.jsonl.")],
    out: Annotated[Path, typer.Option("-o", "--out", help="SFT JSONL to write.")],
    index_dir: Annotated[Path, typer.Option("--index", help="The graph's index (tool specs).")],
    base: Annotated[
        str, typer.Option(help="Student: 0.5b | 1.5b | a GGUF | a HF directory.")
    ] = "0.5b",
    prompt: Annotated[
        str | None, typer.Option(help="Re-render system prompts with this variant.")
    ] = None,
    max_tokens: Annotated[int, typer.Option(help="Drop longer conversations.")] = 4096,
    agreement: Annotated[
        bool, typer.Option(help="Keep trajectories agreeing with their query's vote.")
    ] = False,
    keep_errored: Annotated[bool, typer.Option(help="Keep stop_reason=error ones.")] = False,
    keep_empty: Annotated[bool, typer.Option(help="Keep empty-answer ones.")] = False,
    train_failed_calls: Annotated[
        bool, typer.Option(help="Also train on tool calls that failed.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Trajectories -> the student's tokens with a loss mask on its tool calls only."""
    from ark.distill.sft import SFTOptions, student_template_and_tokenizer, write_sft

    try:
        index = open_index(index_dir)
        base_path = _resolve_base(base)
        template, tokenizer = student_template_and_tokenizer(base_path)
        options = SFTOptions(
            drop_errored=not keep_errored,
            drop_empty=not keep_empty,
            agreement=agreement,
            train_failed_calls=train_failed_calls,
            max_tokens=max_tokens,
            prompt=prompt,
        )
        meta = write_sft(
            traj_dirs, out, index.schema, template, tokenizer, options, base=str(base_path)
        )
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    if as_json:
        print_json(meta)
    else:
        c = meta["counts"]
        console.print(
            f"Wrote {c.get('kept', 0)} records ({c.get('tokens', 0):,} tokens, "
            f"{c.get('trained_tokens', 0):,} trained; p50 {meta['tokens_p50']}, max "
            f"{meta['tokens_max']}) to {esc(str(out))}; read {c.get('read', 0)}, dropped: "
            + (
                ", ".join(f"{k[8:]} {v}" for k, v in c.items() if k.startswith("dropped_"))
                or "none"
            )
        )


def _resolve_base(base: str) -> Path:
    """``0.5b``/``1.5b`` -> the packaged GGUF; anything else is a path."""
    from ark.llm._local import LOCAL_MODELS, local_model_path

    return local_model_path(base) if base in LOCAL_MODELS else Path(base)


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
    max_steps: Annotated[
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
                sft, base_path, out, cfg, resume=resume, max_steps=max_steps, progress=show
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
