"""``ark index build``, ``ark info``, ``ark search``, ``ark neighbors``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ark.cli._output import (
    console,
    err_console,
    esc,
    fail,
    print_json,
    stage_callback,
    stage_progress,
)
from ark.cli._root import app, index_app
from ark.errors import ArkError
from ark.graph import SOURCE_FORMATS, TableLayout
from ark.index import BM25Params, Index, TokenizerConfig, build_index, open_index
from ark.strategies.guided.plans import DEFAULT_WALKS
from ark.tools import GraphTools, SearchResult, ToolResult

JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
IndexArg = Annotated[Path, typer.Argument(help="Index directory made by `ark index build`.")]
NodesTableOpt = Annotated[
    str | None,
    typer.Option(help="Database sources: the nodes table or view (default nodes; schema.table)."),
]
EdgesTableOpt = Annotated[
    str | None, typer.Option(help="Database sources: the edges table or view (default edges).")
]
ColumnOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--column",
        help="Database sources: KEY=COLUMN, for a column named otherwise than the table "
        "files' (id, name, type, properties; from, to, relation); repeatable.",
    ),
]


def table_layout(nodes_table: str | None, edges_table: str | None, columns: list[str] | None):
    """The database layout the options name (None: the defaults), or a clear exit."""
    if not (nodes_table or edges_table or columns):
        return None
    try:
        return TableLayout.parse(columns or (), nodes_table=nodes_table, edges_table=edges_table)
    except ArkError as exc:
        fail(str(exc))


@index_app.command("build")
def index_build(
    source: Annotated[
        str,
        typer.Argument(
            help="Triple file; directory with nodes/edges .parquet or .csv; HippoRAG store "
            "(a folder with its corpus and OpenIE JSON, or the OpenIE JSON); passages JSONL; "
            "a PostgreSQL URI (postgresql://user@host/db; the password from PGPASSWORD or "
            "~/.pgpass); a LadybugDB file."
        ),
    ],
    out: Annotated[Path, typer.Option("-o", "--out", help="Index directory to write.")],
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="auto | parquet | csv | triples | hipporag | passages | graphrag | "
            "lightrag | postgres | ladybug (auto: from the folder's files, the file's first "
            "bytes or the URI).",
        ),
    ] = "auto",
    schema: Annotated[
        Path | None,
        typer.Option(
            help="A schema file: YAML or JSON with labels, aliases and descriptions of "
            "relations and node types (see the docs' described-schema guide); or, for "
            "triples, relation<TAB>head_type<TAB>tail_type per line."
        ),
    ] = None,
    types: Annotated[
        Path | None, typer.Option(help="Triples only: name<TAB>type per line.")
    ] = None,
    stemmer: Annotated[
        str | None, typer.Option(help="Snowball stemmer language (e.g. english); default none.")
    ] = None,
    k1: Annotated[float, typer.Option(help="BM25 k1.")] = 1.5,
    b: Annotated[float, typer.Option(help="BM25 b.")] = 0.75,
    nodes_table: NodesTableOpt = None,
    edges_table: EdgesTableOpt = None,
    column: ColumnOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Build an index (graph arrays + BM25) from SOURCE into OUT."""
    if fmt != "auto" and fmt not in SOURCE_FORMATS:
        fail(f"unknown --format {fmt!r}; use auto, {', '.join(SOURCE_FORMATS)}", as_json=as_json)
    layout = table_layout(nodes_table, edges_table, column)
    with stage_progress(disable=as_json) as bar:
        progress = stage_callback(bar)

        try:
            index = build_index(
                source,
                out,
                fmt=fmt,  # type: ignore[arg-type]
                schema_file=schema,
                types_file=types,
                tokenizer=TokenizerConfig(stemmer=stemmer),
                params=BM25Params(k1=k1, b=b),
                progress=progress,
                layout=layout,
            )
        except ArkError as exc:
            fail(str(exc), as_json=as_json, code=type(exc).__name__)
    counts = index.meta["counts"]
    if as_json:
        print_json({"index": str(out), **index.meta})
        return
    console.print(
        f"Built [bold]{esc(str(out))}[/]: {counts['nodes']:,} nodes, {counts['edges']:,} edges, "
        f"{counts['vocabulary']:,} terms in {index.meta['build_seconds']:.1f} s"
    )
    docs = index.meta.get("documents")
    if docs:
        console.print(_documents_line(docs), highlight=False)


def _documents_line(docs: dict[str, object]) -> str:
    """What a build from documents read and skipped, in one line."""
    line = (
        f"From documents ({docs['format']}): {docs['passages']:,} passages, "
        f"{docs['entities']:,} entities, {docs['triples']:,} triples, "
        f"{docs['relation_phrases']:,} relation phrases"
    )
    skipped = [
        f"{docs[key]:,} malformed {what}"
        for key, what in (("skipped_triples", "triples"), ("skipped_entities", "entities"))
        if docs.get(key)
    ]
    noted = [
        f"{docs[key]:,} {what}"
        for key, what in (
            ("passages_without_extraction", "passages with no extraction (kept)"),
            ("extractions_without_passage", "extractions of passages not in the corpus (added)"),
            ("duplicate_passages", "duplicate corpus passages (merged)"),
        )
        if docs.get(key)
    ]
    if skipped:
        line += f"; skipped {', '.join(skipped)}"
    if noted:
        line += f"; {', '.join(noted)}"
    return esc(line)


@index_app.command("embed")
def index_embed(
    index_dir: IndexArg,
    model: Annotated[
        Path | None,
        typer.Option(help="Local sentence-transformers directory; default: all-MiniLM-L6-v2."),
    ] = None,
    batch_size: Annotated[int, typer.Option(help="Texts per forward pass.")] = 128,
    as_json: JsonOpt = False,
) -> None:
    """Embed every node for the dense baseline (`ark eval --method dense`); needs the
    \\[dense] extra."""
    from ark.index import DenseEncoder, build_dense

    index = _open(index_dir, as_json)
    with stage_progress(disable=as_json) as bar:
        task = bar.add_task("loading model", total=None)

        def progress(stage: str, done: int, total: int) -> None:
            bar.update(task, description=stage, completed=done, total=total)

        try:
            dense = build_dense(
                index, DenseEncoder(model), batch_size=batch_size, progress=progress
            )
        except ArkError as exc:
            fail(str(exc), as_json=as_json, code=type(exc).__name__)
    if as_json:
        print_json({"path": str(dense.path), **dense.meta})
        return
    console.print(
        f"Embedded {len(dense.embeddings):,} nodes with {esc(dense.model)} "
        f"({dense.meta['dim']} dims) in {dense.meta['build_seconds']:.1f} s "
        f"→ {esc(str(dense.path))}"
    )


#: Relations `ark index describe` lists after describing (a schema may have thousands).
SHOWN_RELATIONS = 60


@index_app.command("describe")
def index_describe(
    index_dir: IndexArg,
    model: Annotated[
        str | None,
        typer.Option("--model", help="0.5b, 1.5b, a GGUF path, or a served model name."),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="OpenAI-compatible endpoint; default: the local model."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed (decoding is greedy).")] = 0,
    max_relations: Annotated[
        int,
        typer.Option(
            "--max-relations",
            help="Ask the model about at most this many relations, the most frequent "
            "first; the rest keep their names' words (0: all).",
            min=0,
        ),
    ] = 200,
    batch_size: Annotated[
        int, typer.Option("--batch-size", help="Relations or types per model call.", min=1)
    ] = 8,
    descriptions: Annotated[
        bool,
        typer.Option(
            "--descriptions/--no-descriptions",
            help="Have the model write a one-line description of each besides its "
            "words (--no-descriptions: the words alone, ~20% faster; a small model's "
            "words were then much worse, see docs/described-schema.md).",
        ),
    ] = True,
    max_words: Annotated[
        int, typer.Option("--max-words", help="Most words asked for each.", min=1)
    ] = 6,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            help="Calls in flight at once (default: 1 for the local model, its slots with "
            "--parallel, 4 for a served model).",
            min=1,
        ),
    ] = None,
    parallel: Annotated[
        bool | None,
        typer.Option(
            "--parallel/--no-parallel",
            help="Local model: decode several batches' replies together, one sequence each "
            "(default: ARK_LOCAL_PARALLEL).",
            show_default=False,
        ),
    ] = None,
    fit: Annotated[
        bool,
        typer.Option(
            "--fit-plans/--no-fit-plans",
            help="Then fit the plan confidence to the new words, as `ark index fit-plans` "
            "does (no model; seconds).",
        ),
    ] = True,
    as_json: JsonOpt = False,
) -> None:
    """Have a model write the description and everyday words of each relation and node
    type whose name does not already say them, several per call, and store them in the
    index (a schema file's words still win). An interrupted run resumes where it stopped.
    Then the plan confidence is fitted to the new reading (``--no-fit-plans``: not)."""
    from ark.describe import describe_index
    from ark.llm import make_chat_model

    index = _open(index_dir, as_json)
    try:
        llm = make_chat_model(model=model, base_url=base_url, parallel=parallel)
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    with stage_progress(disable=as_json) as bar:
        task = bar.add_task("describing", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        report: dict[str, Any] = {}
        try:
            described = describe_index(
                index,
                llm,
                seed=seed,
                progress=progress,
                batch_size=batch_size,
                max_relations=max_relations,
                on_report=report.update,
                descriptions=descriptions,
                max_words=max_words,
                concurrency=concurrency,
            )
        except ArkError as exc:
            fail(str(exc), as_json=as_json, code=type(exc).__name__)
    if fit:
        index = open_index(index_dir)
        _fit_plans(index, DEFAULT_WALKS, 0, as_json=as_json, after_describe=True)
        described = index.described
    if as_json:
        print_json(described.to_dict())
        return
    console.print(
        f"Described {len(described.relations)} relations and {len(described.types)} "
        f"node types of [bold]{esc(str(index_dir))}[/] with {esc(llm.name)}:"
    )
    lines = described.render().splitlines()
    console.print(esc("\n".join(lines[:SHOWN_RELATIONS])))
    if len(lines) > SHOWN_RELATIONS:
        console.print(f"… and {len(lines) - SHOWN_RELATIONS:,} more relations (see `ark info`).")
    if report:
        console.print(
            f"Asked the model about {report['asked']} relations and {report['types_asked']} "
            f"node types in {report['calls']} calls ({report['batch_size']} a call"
            + (
                f"; {report['resumed_batches']} batches resumed"
                if report["resumed_batches"]
                else ""
            )
            + f"; {report['prompt_tokens']:,} prompt and {report['completion_tokens']:,} "
            f"reply tokens); from their own words: {report['own_words']}; from the schema "
            f"file: {report['from_file']}; rejected replies: {report['rejected']}."
        )
        if report.get("rival_words"):
            console.print(
                f"Dropped {report['rival_words']} words that {report['encoder']} puts nearer "
                "another relation the same nodes have (listed under the layer's `dropped`)."
            )
        elif report.get("encoder") is None and report["asked"]:
            console.print(
                "The words were not checked against the other relations: that needs the "
                "sentence encoder of the \\[dense] extra."
            )
        if report["beyond_cap"]:
            console.print(
                f"{report['beyond_cap']} less frequent relations were not asked about "
                f"(--max-relations {max_relations}); they keep their names' words."
            )


@index_app.command("fit-plans")
def index_fit_plans(
    index_dir: IndexArg,
    walks: Annotated[
        int, typer.Option("--walks", help="Synthetic questions to fit on.", min=20)
    ] = DEFAULT_WALKS,
    seed: Annotated[int, typer.Option(help="Seed of the walks.")] = 0,
    as_json: JsonOpt = False,
) -> None:
    """Fit how sure `ark-guided`'s reading is of its plans to this graph, on questions
    synthesised from the graph's own walks (no model, no question set), and store it
    in the index. A plan at or above `--plan-threshold` then runs without the model.
    Run again after `ark index describe` (which does it by default)."""
    _fit_plans(_open(index_dir, as_json), walks, seed, as_json=as_json)


def _fit_plans(
    index: Index, walks: int, seed: int, *, as_json: bool, after_describe: bool = False
) -> None:
    """Fit and report; after ``describe`` a graph too small to fit is a note, not a
    failure (its plans then never run by themselves)."""
    from ark.distill import fit_plans

    with stage_progress(disable=as_json) as bar:
        task = bar.add_task("fitting the plan confidence", total=walks)
        try:
            fit = fit_plans(
                index, walks, seed, progress=lambda done, _: bar.update(task, completed=done)
            )
        except ArkError as exc:
            if not after_describe:
                fail(str(exc), as_json=as_json, code=type(exc).__name__)
            if as_json:  # the schema printed next has no fit: that says it
                return
            err_console.print(
                f"[yellow]The plan confidence was not fitted:[/] {esc(str(exc))}; "
                "ark-guided asks the model at every step."
            )
            return
    info = fit.summary()
    if as_json and after_describe:  # describe prints the schema, fits included
        return
    if as_json:
        print_json({**fit.model.to_dict(), "seconds": fit.seconds})
        return
    console.print(
        f"Fitted the plan confidence on {info['n']} synthetic questions in {fit.seconds:.0f} s: "
        f"{info['complete']} plans ran to their finish, {info['right']} of them right; "
        f"calibration error on the third held out: {info['held_out_calibration_error']:.3f}."
    )


def _open(path: Path, as_json: bool) -> Index:
    try:
        return open_index(path)
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)


#: Relations ``ark info`` lists unless ``--all``: a graph built from documents has
#: thousands of relation phrases (issue 66).
INFO_RELATIONS = 40


@app.command("info")
def info(
    index_dir: IndexArg,
    show_all: Annotated[
        bool,
        typer.Option("--all", help=f"List every relation (else the {INFO_RELATIONS} most used)."),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Show an index's schema: node types and relations with counts."""
    index = _open(index_dir, as_json)
    schema = index.schema
    if as_json:
        print_json(
            {
                **schema.to_dict(),
                "described": index.described.to_dict(),
                "counts": index.meta["counts"],
                "source": index.meta["source"],
            }
        )
        return
    counts = index.meta["counts"]
    console.print(
        f"[bold]{esc(str(index_dir))}[/]: {counts['nodes']:,} nodes, {counts['edges']:,} edges, "
        f"{counts['vocabulary']:,} BM25 terms (source {esc(str(index.meta['source']['path']))})"
    )
    types = Table("node type", "count", title="Node types")
    for t in schema.node_types:
        types.add_row(esc(t.name), f"{t.count:,}")
    console.print(types)
    relations = sorted(schema.relations, key=lambda r: -r.count)
    shown = relations if show_all else relations[:INFO_RELATIONS]
    left = len(relations) - len(shown)
    title = "Relations" + (f" (the {len(shown)} most used of {len(relations):,})" if left else "")
    rels = Table("relation", "source type", "target type", "count", title=title)
    for r in shown:
        rels.add_row(esc(r.name), esc(r.source_type), esc(r.target_type), f"{r.count:,}")
    console.print(rels)
    described = index.described
    names = {r.name for r in shown}
    docs = Table(
        "relation",
        "label",
        "aliases",
        "description",
        title=f"Described schema (from {', '.join(described.sources)})",
    )
    # Only what a description adds: labels made from the names alone (source "name")
    # would list every relation a second time.
    described_by_more = any(source != "name" for source in described.sources)
    said = [
        d
        for d in described.relations
        if d.name in names and (d.aliases or d.description or described_by_more)
    ]
    for d in said:
        docs.add_row(esc(d.name), esc(d.label), esc(", ".join(d.aliases)), esc(d.description))
    if said:
        console.print(docs)
    if left:
        console.print(f"{left:,} relations more: `ark info {esc(str(index_dir))} --all` lists them")


@app.command("search")
def search(
    index_dir: IndexArg,
    query: Annotated[str, typer.Argument(help="Keywords or a name.")],
    k: Annotated[int, typer.Option("-k", help="Number of results.")] = 5,
    as_json: JsonOpt = False,
) -> None:
    """Global BM25 search over every node (the agent's search_in_graph)."""
    tools = GraphTools(_open(index_dir, as_json))
    _show(tools.search_in_graph(query, k=k), as_json)


@app.command("neighbors")
def neighbors(
    index_dir: IndexArg,
    node_index: Annotated[int, typer.Argument(help="Index of the center node.")],
    query: Annotated[
        str | None, typer.Option("--query", "-q", help="Rank neighbors by BM25.")
    ] = None,
    node_type: Annotated[
        list[str] | None,
        typer.Option("--node-type", help="Keep neighbors of this type (repeatable)."),
    ] = None,
    edge_type: Annotated[
        list[str] | None,
        typer.Option("--edge-type", help="Keep edges of this relation (repeatable)."),
    ] = None,
    k: Annotated[int, typer.Option("-k", help="Maximum neighbors shown.")] = 20,
    as_json: JsonOpt = False,
) -> None:
    """One-hop neighbors of a node (the agent's search_in_neighborhood)."""
    tools = GraphTools(_open(index_dir, as_json))
    result = tools.search_in_neighborhood(
        node_index, query=query, node_type=node_type or None, edge_type=edge_type or None, k=k
    )
    _show(result, as_json)


def _show(result: ToolResult, as_json: bool) -> None:
    if not isinstance(result, SearchResult):
        if as_json:
            print_json(result.to_dict())
        else:
            err_console.print(
                f"[bold red]error:[/] {esc(result.render())}", highlight=False, soft_wrap=True
            )
        raise typer.Exit(1)
    if as_json:
        print_json(result.to_dict())
        return
    neighbors = result.tool == "search_in_neighborhood"
    title = esc(result.render().splitlines()[0])
    table = Table(
        "index",
        "name",
        "type",
        "score",
        *(["relations"] if neighbors else []),
        "snippet",
        title=title,
        title_justify="left",
    )
    for h in result.hits:
        rel = (
            [esc(", ".join(f"{r.type} ({r.direction})" for r in h.relations))] if neighbors else []
        )
        table.add_row(
            str(h.index), esc(h.name), esc(h.type), f"{h.score:.3f}", *rel, esc(h.snippet)
        )
    console.print(table)


@app.command("convert-stark")
def convert_stark_cmd(
    kb_dir: Annotated[
        Path, typer.Argument(help="A STaRK knowledge base folder (with processed/).")
    ],
    graph: Annotated[str, typer.Option(help="amazon | mag | prime")],
    out: Annotated[Path, typer.Option("-o", "--out", help="Folder for nodes/edges parquet.")],
    trust_pickle: Annotated[
        bool,
        typer.Option(
            "--trust-pickle",
            help="Unpickle STaRK's .pkl files fully (they can run code); default: plain data.",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Convert STaRK's processed files once into nodes/edges tables for `ark index build`."""
    from ark.datasets import convert_stark

    def warn(message: str) -> None:
        err_console.print(f"[yellow]warning:[/] {esc(message)}", highlight=False, soft_wrap=True)

    try:
        meta = convert_stark(kb_dir, out, graph, trust_pickle=trust_pickle, warn=warn)  # type: ignore[arg-type]
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    if as_json:
        print_json(meta)
        return
    console.print(
        f"Wrote {esc(str(out))}/nodes.parquet and edges.parquet ({meta['nodes']:,} nodes, "
        f"{meta['edges']:,} edges). Next: ark index build {esc(str(out))} -o INDEX_DIR"
    )


@index_app.command("verify")
def index_verify(
    index_dir: IndexArg,
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help="First repair what can be rebuilt from intact files, keeping every update "
            "(a base meta.json overwritten by an earlier `ark index describe`).",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Check every byte of an index against the sha256 recorded at build time, and its
    whole structure (opening checks sizes, cheap structure and sampled blocks only;
    see docs/index-integrity.md)."""
    from ark.index import repair_index, verify_index

    if repair:
        try:
            report = repair_index(index_dir)
        except ArkError as exc:
            fail(str(exc), as_json=as_json, code=type(exc).__name__)
        if not as_json:
            for line in report["repaired"] or ["nothing to repair"]:
                console.print(f"repaired: {esc(line)}" if report["repaired"] else esc(line))
    else:
        report = verify_index(index_dir)
    if as_json:
        print_json(report)
    elif report["ok"]:
        console.print(
            f"[green]ok[/]: {esc(str(index_dir))} — {report['files']} files, "
            f"{report['bytes']:,} bytes checked in {report['seconds']:.1f} s"
        )
    else:
        for problem in report["problems"]:
            err_console.print(f"[bold red]damaged:[/] {esc(problem)}", soft_wrap=True)
    if not report["ok"]:
        raise typer.Exit(1)
