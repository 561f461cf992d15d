"""Root typer app; each command group lives in its own module and registers here."""

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

# Command modules register themselves on import.
from ark.cli import (  # noqa: E402, F401
    _agent_cmds,
    _cache_cmds,
    _distill_cmds,
    _eval_cmds,
    _graph_cmds,
    _ingest_cmds,
    _serve_cmds,
    _train_cmds,
    _update_cmds,
)
