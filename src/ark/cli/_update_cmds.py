"""``ark index add``, ``ark index remove``, ``ark index sync``, ``ark index compact``: a
graph that changes without a rebuild (see docs/updates.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ark.cli._graph_cmds import (
    ColumnOpt,
    EdgesTableOpt,
    IndexArg,
    JsonOpt,
    NodesTableOpt,
    table_layout,
)
from ark.cli._output import console, esc, fail, print_json
from ark.cli._root import index_app
from ark.errors import ArkError

FormatOpt = Annotated[
    str, typer.Option("--format", help="auto | parquet | csv | triples | postgres | ladybug")
]
SchemaOpt = Annotated[
    Path | None,
    typer.Option(help="Triples only: relation<TAB>head_type<TAB>tail_type per line."),
]
TypesOpt = Annotated[Path | None, typer.Option(help="Triples only: name<TAB>type per line.")]


@index_app.command("add")
def index_add(
    index_dir: IndexArg,
    source: Annotated[
        str,
        typer.Argument(
            help="Triple file, a directory with nodes/edges .parquet or .csv, a PostgreSQL "
            "URI or a LadybugDB file."
        ),
    ],
    fmt: FormatOpt = "auto",
    schema: SchemaOpt = None,
    types: TypesOpt = None,
    nodes_table: NodesTableOpt = None,
    edges_table: EdgesTableOpt = None,
    column: ColumnOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Add SOURCE's nodes and edges to an index without rebuilding it (one new
    segment). A name the index has is that node; node indices never change."""
    from ark.index import add_to_index

    _check_format(fmt, as_json)
    try:
        report = add_to_index(
            index_dir,
            source,
            fmt=fmt,  # type: ignore[arg-type]
            schema_file=schema,
            types_file=types,
            layout=table_layout(nodes_table, edges_table, column),
        )
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    _show_update(report, as_json)


@index_app.command("sync")
def index_sync(
    source: Annotated[
        str,
        typer.Argument(
            help="What the index was built from, as it is now: a PostgreSQL URI, a "
            "LadybugDB file, a triple file or a nodes/edges folder."
        ),
    ],
    index_dir: IndexArg,
    fmt: FormatOpt = "auto",
    schema: SchemaOpt = None,
    types: TypesOpt = None,
    nodes_table: NodesTableOpt = None,
    edges_table: EdgesTableOpt = None,
    column: ColumnOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Bring an index in step with SOURCE as one update: rows added, changed or
    removed since the build are applied, the rest left alone. Atomic: killed, it
    leaves the index as it was, and a rerun completes it."""
    from ark.index import sync_index

    _check_format(fmt, as_json)
    try:
        report = sync_index(
            index_dir,
            source,
            fmt=fmt,  # type: ignore[arg-type]
            schema_file=schema,
            types_file=types,
            layout=table_layout(nodes_table, edges_table, column),
        )
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    _show_update(report, as_json)
    if not as_json and report.get("changed_nodes"):
        console.print(
            f"({report['changed_nodes']:,} of the nodes removed and added are the same name "
            "with another type or text)"
        )


@index_app.command("remove")
def index_remove(
    index_dir: IndexArg,
    nodes: Annotated[
        Path | None,
        typer.Option("--nodes", help="Names of nodes to remove, one a line (with their edges)."),
    ] = None,
    edges: Annotated[
        Path | None,
        typer.Option("--edges", help="Edges to remove: head|relation|tail (or tabs) a line."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Remove nodes and edges by name (one new segment; indices of the others stay)."""
    from ark.index import remove_from_index

    try:
        report = remove_from_index(index_dir, nodes_file=nodes, edges_file=edges)
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    _show_update(report, as_json)


@index_app.command("compact")
def index_compact(index_dir: IndexArg, as_json: JsonOpt = False) -> None:
    """Merge every update into one new base (node indices change: remap.npy in the
    index maps old to new)."""
    from ark.index import compact_index

    try:
        report = compact_index(index_dir)
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    if as_json:
        print_json({k: v for k, v in report.items() if k != "meta"})
        return
    console.print(
        f"Compacted [bold]{esc(str(index_dir))}[/]: {report['segments_merged']} segment(s) "
        f"merged, {report['nodes']:,} nodes, {report['edges']:,} edges, "
        f"{report['removed_nodes']:,} removed node(s) dropped in {report['seconds']:.1f} s; "
        f"old -> new indices in {esc(report['remap'])}"
    )


#: The formats an update reads: those whose rows are nodes and edges.
_UPDATE_FORMATS = ("auto", "parquet", "csv", "triples", "postgres", "ladybug")


def _check_format(fmt: str, as_json: bool) -> None:
    if fmt not in _UPDATE_FORMATS:
        fail(f"unknown --format {fmt!r}; use {', '.join(_UPDATE_FORMATS)}", as_json=as_json)


def _show_update(report: dict[str, object], as_json: bool) -> None:
    if as_json:
        print_json(report)
        return
    if report.get("unchanged"):  # nothing new: no segment was committed
        source = f" is in step with {esc(str(report['source']))}" if "source" in report else ""
        console.print(
            f"[bold]{esc(str(report['index']))}[/]{source}: nothing to change "
            f"({report['seconds']:.2f} s)"
        )
        return
    counts = report["counts"]
    assert isinstance(counts, dict)
    console.print(
        f"Segment {report['segment']} committed to [bold]{esc(str(report['index']))}[/]: "
        f"+{report['added_nodes']:,} nodes, +{report['added_edges']:,} edges, "
        f"-{report['removed_nodes']:,} nodes, -{report['removed_edges']:,} edges in "
        f"{report['seconds']:.2f} s (now {counts['nodes']:,} nodes, {counts['edges']:,} edges)"
    )
