"""``ark ingest``: raw documents to an index (chunks, extraction, passages, build)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ark.cli._agent_cmds import RetriesOpt, TimeoutOpt
from ark.cli._llm_opts import PriceInOpt, PriceOutOpt, PricesOpt, prices
from ark.cli._output import (
    console,
    err_console,
    esc,
    fail,
    print_json,
    stage_callback,
    stage_progress,
)
from ark.cli._root import app
from ark.errors import ArkError


def default_extractor(model: str | None, base_url: str | None, as_json: bool) -> str:
    """``model`` with a served model; with the local one ``fast`` when spaCy is there
    (said in one line), since the local model reads a chunk in a minute or more on a
    CPU: hours for a small corpus, before the first question."""
    import importlib.util

    from ark.llm import uses_local_model

    if not uses_local_model(model, base_url) or model is not None:
        return "model"  # a served model, or a local one the user named
    if importlib.util.find_spec("spacy") is None:
        if not as_json:
            err_console.print(
                "warning: the local model reads each chunk in a minute or more on a CPU; "
                "install the ingest extra for --extractor fast (spaCy, no model), or give "
                "--base-url for a served model",
                highlight=False,
                soft_wrap=True,
            )
        return "model"
    if not as_json:
        err_console.print(
            "With the local model: --extractor fast (spaCy's entities and phrases, no "
            "model), since the local model reads a chunk in a minute or more on a CPU; "
            "give --extractor model to have it read every chunk.",
            highlight=False,
            soft_wrap=True,
        )
    return "fast"


@app.command("ingest")
def ingest_cmd(
    docs: Annotated[
        Path,
        typer.Argument(
            help='Documents: a JSONL of {"id"?, "title"?, "text"} (BEIR\'s "_id" and '
            'Pyserini\'s "contents" read too), a folder of .txt/.md/.rst/.html files or '
            'one such file, or a JSON corpus \\[{"title", "text"}] (HippoRAG), a list of '
            "texts, or {title: \\[sentences]} (HotpotQA)."
        ),
    ],
    out: Annotated[
        Path | None, typer.Option("-o", "--out", help="Index directory to write.")
    ] = None,
    into: Annotated[
        Path | None,
        typer.Option(
            "--into",
            help="Add the documents to this index, which `ark ingest` built (one update; a "
            "document given again replaces its passages, unchanged ones change nothing).",
        ),
    ] = None,
    extractor: Annotated[
        str | None,
        typer.Option(
            "--extractor",
            help="model: a model reads each chunk (the default with --base-url); fast: no "
            "LLM, spaCy's entities, noun phrases and verb phrases (the ingest extra; the "
            "default with the local model, which takes a minute or more a chunk on a CPU).",
            show_default=False,
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", help="0.5b, 1.5b, a GGUF path, or a served model name."),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="OpenAI-compatible endpoint; default: the local model."),
    ] = None,
    chunk_tokens: Annotated[
        int, typer.Option("--chunk-tokens", help="Tokens per chunk (words and punctuation).")
    ] = 512,
    overlap: Annotated[
        int, typer.Option("--overlap", help="Tokens each chunk shares with the next.")
    ] = 64,
    work_dir: Annotated[
        Path | None,
        typer.Option(
            "--work-dir",
            help="Cache of per-chunk extractions and the passages file; a rerun resumes "
            "from it. Default: OUT.ingest (or INTO.ingest) beside the index.",
        ),
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", help="Model calls at once (for a server).")
    ] = 1,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", help="Longest model reply per chunk.")
    ] = 1024,
    limit: Annotated[
        int | None,
        typer.Option("--limit", help="Ingest only the first N documents (a sample)."),
    ] = None,
    spacy_model: Annotated[
        str | None,
        typer.Option(
            "--spacy-model",
            help="Fast extractor: an installed spaCy pipeline (default: en_core_web_sm, "
            "else the one the ingest extra installs).",
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Sampling seed (decoding is greedy).")] = 0,
    price_in: PriceInOpt = None,
    price_out: PriceOutOpt = None,
    prices_file: PricesOpt = None,
    request_timeout: TimeoutOpt = None,
    max_retries: RetriesOpt = None,
    follow_links: Annotated[
        bool,
        typer.Option(
            "--follow-links",
            help="Follow links in the folder to files outside it (never to devices or /proc).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False,
) -> None:
    """Build an index from raw documents: chunk them, extract entities and relations
    from each chunk, and index the passages (resumable; see the documents guide)."""
    from ark.ingest import default_work_dir, ingest

    if (out is None) == (into is None):
        fail("give -o OUT (a new index) or --into INDEX (add to one)", as_json=as_json)
    if extractor is None:
        extractor = default_extractor(model, base_url, as_json)
    if extractor not in ("model", "fast"):
        fail(f"unknown --extractor {extractor!r}; use model or fast", as_json=as_json)
    try:
        price_table = prices(price_in, price_out, prices_file)
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    with stage_progress(disable=as_json) as bar:
        progress = stage_callback(bar)

        try:
            report = ingest(
                docs,
                out,
                extractor=extractor,  # type: ignore[arg-type]
                model=model,
                base_url=base_url,
                chunk_tokens=chunk_tokens,
                overlap=overlap,
                work_dir=work_dir,
                concurrency=concurrency,
                max_tokens=max_tokens,
                seed=seed,
                pipeline=spacy_model,
                prices=price_table,
                limit=limit,
                progress=progress,
                follow_links=follow_links,
                request_timeout=request_timeout,
                max_retries=max_retries,
                into=into,
            )
        except ArkError as exc:
            fail(str(exc), as_json=as_json, code=type(exc).__name__)
        except KeyboardInterrupt:
            work = work_dir if work_dir is not None else default_work_dir(out or into)
            err_console.print(
                f"interrupted: every chunk extracted so far is kept in {esc(str(work))}; "
                "run the same command again to resume from there",
                highlight=False,
                soft_wrap=True,
            )
            raise typer.Exit(130) from None
    if as_json:
        print_json(report.to_dict())
        return
    r = report
    console.print(
        f"Ingested {r.documents:,} documents as {r.chunks:,} chunks with {esc(r.extractor)}: "
        f"{r.extracted:,} extracted, {r.reused:,} reused from {esc(r.work_dir)}"
    )
    console.print(
        f"  {r.entities:,} entities, {r.triples:,} triples, {r.relations:,} relation phrases"
    )
    if r.llm_calls or r.failed:
        usd = "" if r.usd is None else f", ${r.usd:.4f}"
        console.print(
            f"  {r.llm_calls:,} model calls, {r.prompt_tokens:,} prompt + "
            f"{r.completion_tokens:,} completion tokens{usd}; {r.llm_s:.1f} s in the model"
        )
    problems = []
    if r.bad_replies:
        problems.append(f"{r.bad_replies} bad replies (chunks kept with nothing extracted)")
    if r.cut_replies:
        problems.append(f"{r.cut_replies} replies cut at --max-tokens (kept what was complete)")
    if r.dropped_triples:
        problems.append(f"{r.dropped_triples} malformed triples or items past the bounds dropped")
    if r.failed:
        problems.append(f"{r.failed} model calls failed (run again to retry them)")
    if r.empty_documents:
        problems.append(f"{r.empty_documents} empty documents skipped")
    if r.other_files:
        shown = ", ".join(r.other_files[:3]) + (", ..." if len(r.other_files) > 3 else "")
        from ark.ingest import DOCUMENT_SUFFIXES

        kinds = ", ".join(DOCUMENT_SUFFIXES)
        problems.append(
            f"{len(r.other_files)} files not read (only {kinds} are documents): {shown}"
        )
    if r.skipped:
        shown = ", ".join(r.skipped[:3]) + (", ..." if len(r.skipped) > 3 else "")
        problems.append(f"{len(r.skipped)} folder entries not read: {shown}")
    if r.damaged_cache_lines:
        problems.append(f"{r.damaged_cache_lines} damaged cache lines ignored")
    for line in problems:
        err_console.print(f"[yellow]warning:[/] {esc(line)}", highlight=False, soft_wrap=True)
    for error in r.errors:
        err_console.print(f"  {esc(error)}", highlight=False, soft_wrap=True)
    if r.update is not None:
        u = r.update
        console.print(
            f"Added to [bold]{esc(str(into))}[/]: {u['new_documents']:,} new, "
            f"{u['changed_documents']:,} changed, {u['unchanged_documents']:,} unchanged "
            f"documents; +{u['added_nodes']:,}/-{u['removed_nodes']:,} nodes, "
            f"+{u['added_edges']:,}/-{u['removed_edges']:,} edges (now {r.nodes or 0:,} "
            f"nodes, {r.edges or 0:,} edges) in {r.seconds:.1f} s"
        )
        return
    console.print(
        f"Built [bold]{esc(str(out))}[/]: {r.nodes or 0:,} nodes, {r.edges or 0:,} edges "
        f"in {r.seconds:.1f} s"
    )
