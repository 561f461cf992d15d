"""The ``ark`` app whole: every command module imported, so each has attached its
commands to the root app (:mod:`ark.cli._root`), then the listings made one line each."""

from __future__ import annotations

import typer

# Command modules attach their commands to the root app (ark.cli._root) on import.
from ark.cli import (  # noqa: F401
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
from ark.cli._root import app


def _whole_listings(group: typer.Typer) -> None:
    """Each command's line in its group's listing is the first paragraph of its
    docstring with the docstring's own line breaks undone: rich would keep them, and
    break a sentence in the middle of the listing's narrower column."""
    for command in group.registered_commands:
        doc = command.help or (command.callback.__doc__ if command.callback else None)
        if command.short_help is None and doc:
            command.short_help = " ".join(doc.strip().split("\n\n")[0].split())
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _whole_listings(sub.typer_instance)


_whole_listings(app)
