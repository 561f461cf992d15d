"""``ark distill synthesize|collect|sft``: trajectories and SFT data for a small model
(``train`` and ``export`` are in ``_train_cmds.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ark.cli._llm_opts import RetryFailedOpt, redone_line
from ark.cli._output import console, err_console, esc, fail, print_json
from ark.cli._root import app
from ark.errors import ArkError
from ark.index import open_index

distill_app = typer.Typer(
    help="Distillation: synthetic or teacher trajectories -> SFT data -> LoRA -> GGUF adapter.",
    no_args_is_help=True,
)
app.add_typer(distill_app, name="distill")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


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
    intersections: Annotated[
        float,
        typer.Option(
            help="Share of the one-hop paths that intersect two anchors' neighbors "
            "(questions with two constraints), 0 to 1."
        ),
    ] = 0.1,
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
    grouped_observations: Annotated[
        bool,
        typer.Option(
            help="Observations list a neighborhood's neighbors grouped by relation and "
            "type (fewer tokens); the adapter then runs with them."
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Teacher-free trajectories from the graph (never a question set): oracle + real tools."""
    from ark.distill import write_synthesis
    from ark.distill.synthesize import SynthConfig, llm_paraphraser, load_templates

    try:
        hop_list = tuple(int(h) for h in hops.split(",") if h.strip())
    except ValueError:
        fail(f"--hops takes comma-separated integers, got {hops!r}", as_json=as_json)
    if not 0.0 <= intersections <= 1.0:
        fail(f"--intersections is a share from 0 to 1, got {intersections}", as_json=as_json)
    target = out / "trajectories.jsonl"
    if target.exists():  # refused before the index is opened
        fail(f"{target} exists; choose another -o (synthesis never appends)", as_json=as_json)
    try:
        index = open_index(index_dir)
        cfg = SynthConfig(
            n=n,
            hops=hop_list,
            seed=seed,
            intersection_share=intersections,
            prompt=prompt,
            max_steps=max_steps,
            templates=load_templates(templates),
            multi_neighborhood=multi_neighborhood,
            hints=hints,
            grouped_observations=grouped_observations,
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
        bool, typer.Option("--ray", help="Spread the queries over Ray workers (the \\[ray] extra).")
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
    from ark.llm.local import LOCAL_MODELS, local_model_path

    return local_model_path(base) if base in LOCAL_MODELS else Path(base)
