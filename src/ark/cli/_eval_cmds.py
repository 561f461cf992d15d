"""``ark eval`` and ``ark report``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from ark.answer import DEFAULT_WRITER
from ark.cli._agent_cmds import (
    JsonOpt,
    ReaderAliasOpt,
    RetriesOpt,
    TimeoutOpt,
    writer_setting,
)
from ark.cli._llm_opts import (
    LlmCacheOpt,
    ParallelOpt,
    PlanThresholdOpt,
    PriceInOpt,
    PriceOutOpt,
    PricesOpt,
    RetryFailedOpt,
    SeedOpt,
    prices,
    redone_line,
)
from ark.cli._output import console, err_console, esc, fail, print_json
from ark.cli._root import app
from ark.errors import ArkError
from ark.strategies.guided.plans import DEFAULT_THRESHOLD, threshold_setting


@app.command("eval")
def eval_cmd(
    dataset: Annotated[
        str,
        typer.Option(
            help="metaqa:N-hop | stark:amazon|mag|prime | jsonl:PATH | musique:FILE | "
            "hotpotqa:FILE | docqa:FILE (questions over documents: gold passages found by "
            "title and text; docqa: your own questions, answers with or without passages)"
        ),
    ],
    index_dir: Annotated[Path, typer.Option("--index", help="Index directory.")],
    out: Annotated[Path, typer.Option("--out", help="Run directory to write.")],
    split: Annotated[
        str | None,
        typer.Option(help="Query split (default: dev for MetaQA, test for STaRK; val, train…)."),
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Evaluate a sample of N queries.")] = None,
    sample_seed: Annotated[int, typer.Option(help="Seed of the sample.")] = 0,
    method: Annotated[str, typer.Option(help="ark | bm25 | dense")] = "ark",
    agents: Annotated[
        int | None,
        typer.Option(
            help="Parallel agents; default: the strategy's (3 for ark, 1 for graphsearch).",
            show_default=False,
        ),
    ] = None,
    strategy: Annotated[
        str | None,
        typer.Option(
            help="With --method ark: ark (default) | ark-guided (the default with an "
            "--adapter trained on hinted trajectories) | graphsearch | a registered strategy.",
            show_default=False,
        ),
    ] = None,
    max_steps: Annotated[int, typer.Option(help="Step budget per agent.")] = 20,
    fusion: Annotated[str, typer.Option(help="vote | ordering | random | late")] = "vote",
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.7,
    no_neighbors: Annotated[
        bool, typer.Option("--no-neighbors", help="Ablation: global search only.")
    ] = False,
    neighbors_no_query: Annotated[
        bool, typer.Option("--neighbors-no-query", help="Ablation: no neighborhood subquery.")
    ] = False,
    neighbors_no_filter: Annotated[
        bool, typer.Option("--neighbors-no-filter", help="Ablation: no type filters.")
    ] = False,
    grouped_observations: Annotated[
        bool,
        typer.Option(
            "--grouped-observations",
            help="A neighborhood's neighbors grouped by relation and type (fewer tokens).",
        ),
    ] = False,
    model: Annotated[
        str | None,
        typer.Option(help="ark: model name or GGUF path; dense: sentence-transformers dir."),
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint.")] = None,
    mode: Annotated[
        str, typer.Option(help="strict | stark (STaRK evaluator's fill-in)")
    ] = "strict",
    data_dir: Annotated[
        Path | None, typer.Option(help="Dataset directory (MetaQA or STaRK qa).")
    ] = None,
    candidate_type: Annotated[
        list[str] | None, typer.Option(help="Score only nodes of these types (repeatable).")
    ] = None,
    resume: Annotated[bool, typer.Option(help="Continue an interrupted run in --out.")] = False,
    retry_failed: RetryFailedOpt = True,
    concurrency: Annotated[
        int, typer.Option(help="Queries evaluated at once (with --ray: per worker).")
    ] = 1,
    llm_cache: LlmCacheOpt = None,
    seed: SeedOpt = 0,
    price_in: PriceInOpt = None,
    price_out: PriceOutOpt = None,
    prices_file: PricesOpt = None,
    ray: Annotated[
        bool,
        typer.Option("--ray", help="Spread the queries over Ray workers (needs the ray extra)."),
    ] = False,
    ray_address: Annotated[
        str | None,
        typer.Option(
            help="Ray cluster to join (auto, HOST:6379, ray://HOST:10001); default: local."
        ),
    ] = None,
    ray_workers: Annotated[
        int | None, typer.Option(help="Ray workers (default: the cluster's CPUs).")
    ] = None,
    request_timeout: TimeoutOpt = None,
    max_retries: RetriesOpt = None,
    as_json: JsonOpt = False,
    adapter: Annotated[
        Path | None, typer.Option(help="LoRA adapter (.gguf) for the local model.")
    ] = None,
    parallel: ParallelOpt = None,
    answer: Annotated[
        bool,
        typer.Option(
            "--answer",
            help="After retrieval the model writes an answer, scored by EM and F1 "
            "(a baseline answers from its top 5 passages: bm25 --answer is naive RAG).",
        ),
    ] = False,
    writer: Annotated[
        str,
        typer.Option(
            "--writer",
            help="How --answer writes: in lookups of one fact each (steps, the "
            "default), or one call (one), as `ark ask --writer`.",
        ),
    ] = DEFAULT_WRITER,
    reader: ReaderAliasOpt = None,
    linked_passages: Annotated[
        int | None,
        typer.Option(
            "--linked-passages",
            min=0,
            help="Over documents: passages sharing a bridge entity with the lead passage "
            "that a result lists after it (default: ark 3, a baseline 0; bm25 with 3 is "
            "the model-free bm25-linked row).",
        ),
    ] = None,
    plan_threshold: PlanThresholdOpt = DEFAULT_THRESHOLD,
) -> None:
    """Run a method over a query set and score it (Hit@1, Hit@5, Recall@20, MRR; over
    documents also passage recall@2/@5, and with --answer exact match and F1)."""
    from ark.eval import Evaluation, RaySettings
    from ark.llm import ModelSettings
    from ark.tools import ToolConfig

    try:
        run = Evaluation(
            dataset,
            index_dir,
            out,
            split=split,
            limit=limit,
            sample_seed=sample_seed,
            method=method,
            strategy=strategy,
            agents=agents,
            max_steps=max_steps,
            fusion=fusion,
            temperature=temperature,
            tools=ToolConfig(
                neighbors=not no_neighbors,
                neighbor_query=not neighbors_no_query,
                neighbor_filters=not neighbors_no_filter,
                grouped_observations=grouped_observations,
            ),
            seed=seed,
            model=ModelSettings(
                model=model,
                base_url=base_url,
                request_timeout=request_timeout,
                max_retries=max_retries,
                parallel=parallel,
                llm_cache=llm_cache,
            ),
            adapter=adapter,
            mode=mode,
            data_dir=data_dir,
            candidate_types=candidate_type,
            concurrency=concurrency,
            prices=prices(price_in, price_out, prices_file),
            ray=RaySettings(ray_address, ray_workers) if ray else None,
            answer=answer,
            answer_writer=writer_setting(writer, reader),
            linked_passages=linked_passages,
            plan_threshold=threshold_setting(plan_threshold),
        )
        run.check()  # refused before the progress bar shows
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err_console,
        ) as bar:
            task = bar.add_task(f"{method} on {dataset}", total=None)
            summary = run.run(
                resume=resume,
                retry_failed=retry_failed,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
                status=lambda line: err_console.print(line, markup=False),
                on_retry=lambda qid, n, why: err_console.print(
                    f"[yellow]a Ray worker died running {esc(qid)} (attempt {n}); "
                    f"retrying on another worker:[/] {esc(why)}"
                ),
            )
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    all_failed = bool(summary["queries"]) and summary["failed"] == summary["queries"]
    if as_json:
        print_json({**summary, "out": str(out)})
        raise typer.Exit(1 if all_failed else 0)
    console.print((out / "summary.md").read_text(encoding="utf-8"), markup=False, soft_wrap=True)
    console.print(
        f"Records: {out / 'results.jsonl'}; summary: {out / 'summary.json'}", markup=False
    )
    for name, line in summary.get("damaged_lines", []):
        err_console.print(f"[yellow]skipped damaged line {line} of {esc(name)} (moved to .bad)[/]")
    if "redone" in summary:
        err_console.print(f"[yellow]{redone_line(summary['redone'])}[/]")
    if summary.get("missing_gold_passages"):
        err_console.print(
            f"[yellow]warning: {summary['missing_gold_passages']} supporting paragraphs are "
            "not in the index (matched by title and text); recall counts them as missed. "
            "Their titles are in each record's missing_answers.[/]"
        )
    if summary["failed"]:
        err_console.print(f"[yellow]{summary['failed']} queries failed; see their records.[/]")
    if all_failed:
        err_console.print("[bold red]error:[/] every query failed", highlight=False)
        raise typer.Exit(1)


@app.command("report")
def report_cmd(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run directories made by `ark eval`.")],
    out: Annotated[Path | None, typer.Option(help="Where to write tables and plots.")] = None,
    view: Annotated[
        bool, typer.Option("--view/--no-view", help="Also write each run's HTML view.")
    ] = True,
    as_json: JsonOpt = False,
) -> None:
    """Compare runs and write the paper's analyses (tables as Markdown and CSV; PNG plots
    when matplotlib is installed; an HTML view of each run)."""
    from ark.eval.report import add_view_links, has_matplotlib, write_report

    target = out or run_dirs[0] / "report"
    try:
        text = write_report(run_dirs, target)
        if view:
            from ark.serve.viewer import write_views

            views = write_views(run_dirs, target)
            text += add_view_links(target, views)
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    if as_json:
        print_json(
            {
                "out": str(target),
                "files": sorted(p.name for p in target.iterdir() if p.is_file()),
                "plots": has_matplotlib(),
                "markdown": text,
            }
        )
        return
    console.print(text, markup=False, soft_wrap=True)
    what = "Tables and plots" if has_matplotlib() else "Tables (no plots: matplotlib missing)"
    console.print(f"{what} written to {esc(str(target))}")
