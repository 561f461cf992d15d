"""The root typer app and its ``index`` group: the objects the command modules attach
their commands to (``@app.command``), kept apart from the module that imports them
all (``_app``), so no command module imports the module that imports it."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="ark",
    help="ARK, the Adaptive Retriever of Knowledge: LLM agents retrieving from knowledge graphs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
index_app = typer.Typer(help="Build and inspect index directories.", no_args_is_help=True)
app.add_typer(index_app, name="index")
