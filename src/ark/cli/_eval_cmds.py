"""``ark eval`` and ``ark report``."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from ark._safe import redact_url
from ark.cli._agent_cmds import JsonOpt, RetriesOpt, TimeoutOpt
from ark.cli._app import app
from ark.cli._llm_opts import (
    LlmCacheOpt,
    ParallelOpt,
    PriceInOpt,
    PriceOutOpt,
    PricesOpt,
    RetryFailedOpt,
    SeedOpt,
    cached,
    prices,
    redone_line,
)
from ark.cli._output import console, err_console, esc, fail, print_json
from ark.errors import ArkError
from ark.index import Index, open_index


def _candidate_mask(index: Index, types: list[str] | None) -> np.ndarray | None:
    if not types:
        return None
    ids = [index.graph.type_id(t) for t in types]
    if any(i is None for i in ids):
        raise ArkError(f"candidate type(s) {types} not in this index's node types")
    return np.isin(np.asarray(index.graph.node_type), ids)


@app.command("eval")
def eval_cmd(
    dataset: Annotated[
        str, typer.Option(help="metaqa:N-hop | stark:amazon|mag|prime | jsonl:PATH")
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
) -> None:
    """Run a method over a query set and score it (Hit@1, Hit@5, Recall@20, MRR)."""
    from ark.agent import Retriever, ToolConfig
    from ark.distill.export import adapter_settings
    from ark.eval import BM25Method, DenseMethod, RetrieverMethod, RunStore, datasets, run_queries
    from ark.eval.datasets import sample

    if method not in ("ark", "bm25", "dense"):
        fail(f"unknown --method {method!r}; use ark, bm25 or dense", as_json=as_json)
    if mode not in ("strict", "stark"):
        fail(f"unknown --mode {mode!r}; use strict or stark", as_json=as_json)
    if strategy is not None and method != "ark":
        fail(
            f"--strategy {strategy} needs --method ark (a strategy is how the agents search)",
            as_json=as_json,
        )
    from ark.cli._agent_cmds import adapter_strategy, resolve_agents

    strategy = strategy or adapter_strategy(adapter if method == "ark" else None, base_url, as_json)
    agents = resolve_agents(strategy, agents)
    split = split or datasets.default_split(dataset)
    ray_runner = None
    try:
        index = open_index(index_dir)
        queries, default_candidates = datasets.load_dataset(dataset, index, split, data_dir)
        if limit is not None:
            queries = sample(queries, limit, sample_seed)
        candidates = _candidate_mask(index, candidate_type or default_candidates)
        tools = ToolConfig(
            neighbors=not no_neighbors,
            neighbor_query=not neighbors_no_query,
            neighbor_filters=not neighbors_no_filter,
        )
        price_table = prices(price_in, price_out, prices_file)
        student = adapter_settings(adapter if method == "ark" else None, base_url, tools)
        lora, prompt, tools = student.llm_kwargs, student.prompt, student.tools
        if ray:
            from ark.eval._ray import MethodSpec, RayMethod

            spec = MethodSpec(
                method=method,
                index=str(index_dir.resolve()),
                llm={
                    "model": model,
                    "base_url": base_url,
                    "request_timeout": request_timeout,
                    "max_retries": max_retries,
                    **({"parallel": parallel} if parallel is not None else {}),
                    **lora,
                },
                llm_cache=str(llm_cache.resolve()) if llm_cache else None,
                retriever={
                    "n_agents": agents,
                    "max_steps": max_steps,
                    "temperature": temperature,
                    "fusion": fusion,
                    "tools": tools,
                    "seed": seed,
                    "prompt": prompt,
                    "strategy": strategy,
                },
                dense_model=model,
            )
            err_console.print("Starting Ray workers …")
            runner = ray_runner = RayMethod(
                spec,
                address=ray_address,
                workers=ray_workers,
                per_worker=concurrency,
                on_retry=lambda qid, n, why: err_console.print(
                    f"[yellow]a Ray worker died running {esc(qid)} (attempt {n}); "
                    f"retrying on another worker:[/] {esc(why)}"
                ),
            )
            model_name = ray_runner.worker_info[0].get("model")
        elif method == "bm25":
            runner = BM25Method(index)
            model_name = None
        elif method == "dense":
            from ark.index import DenseEncoder, open_dense

            encoder = DenseEncoder(model)
            runner = DenseMethod(open_dense(index, encoder.name), encoder)
            model_name = encoder.name
        else:
            from ark.llm import make_chat_model

            llm = make_chat_model(
                model=model,
                base_url=base_url,
                request_timeout=request_timeout,
                max_retries=max_retries,
                parallel=parallel,
                **lora,
            )
            llm = cached(llm, llm_cache)
            model_name = llm.name
            retriever = Retriever(
                index,
                llm,
                strategy=strategy,
                n_agents=agents,
                max_steps=max_steps,
                temperature=temperature,
                fusion=fusion,
                tools=tools,
                seed=seed,
                prompt=prompt,
            )
            runner = RetrieverMethod(retriever)
        config = {
            "dataset": dataset,
            "index": str(index_dir.resolve()),
            "split": split,
            "limit": limit,
            "sample_seed": sample_seed,
            "method": method,
            "mode": mode,
            "candidate_types": candidate_type or default_candidates,
            **(
                {
                    "strategy": strategy,
                    "agents": agents,
                    "max_steps": max_steps,
                    "fusion": fusion,
                    "temperature": temperature,
                    "tools": tools.to_dict(),
                    "model": model_name,
                    "base_url": redact_url(base_url),
                    "seed": seed,
                    "adapter": str(adapter.resolve()) if adapter else None,
                    "prompt": prompt,
                }
                if method == "ark"
                else {"model": model_name}
                if method == "dense"
                else {}
            ),
            "concurrency": concurrency,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "llm_cache": str(llm_cache) if llm_cache else None,
            "prices": price_table.to_dict() if price_table else None,
            "ray": {"address": ray_address, "workers": ray_runner.workers} if ray_runner else None,
        }
        store = RunStore(out)
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err_console,
        ) as bar:
            task = bar.add_task(f"{method} on {dataset}", total=len(queries))
            summary = asyncio.run(
                run_queries(
                    queries,
                    runner,
                    store,
                    config,
                    resume=resume,
                    concurrency=ray_runner.slots if ray_runner else concurrency,
                    mode=mode,
                    candidates=candidates,
                    n_nodes=index.graph.n_nodes,
                    progress=lambda done, total: bar.update(task, completed=done, total=total),
                    prices=price_table,
                    retry_failed=retry_failed,
                )
            )
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    finally:
        if ray_runner is not None:
            ray_runner.close()
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
