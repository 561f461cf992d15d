"""Printing helpers shared by commands: JSON or rich text, and errors with exit codes."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape as _markup_escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ark._safe import dumps, printable

__all__ = [
    "console",
    "err_console",
    "esc",
    "fail",
    "print_json",
    "stage_callback",
    "stage_progress",
]

console = Console()
err_console = Console(stderr=True)


def esc(text: str) -> str:
    """``text`` for the terminal: Rich markup escaped (a node called ``[bold]`` stays
    text) and control characters written out (:func:`ark._safe.printable`: graph text
    cannot move the cursor or recolour the terminal)."""
    return _markup_escape(printable(text))


def stage_progress(*, disable: bool = False) -> Progress:
    """A progress display on stderr for long builds: stage name, bar, count, elapsed,
    and the time left at the pace so far (before an ingest commits to an hour)."""
    return Progress(
        TextColumn("{task.description:<14}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=err_console,
        disable=disable,
    )


def stage_callback(bar: Progress) -> Callable[[str, int, int], None]:
    """A ``progress(stage, done, total)`` callback drawing one bar per stage on
    ``bar`` (the library's long steps report stages this way)."""
    tasks: dict[str, TaskID] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if stage not in tasks:
            tasks[stage] = bar.add_task(stage, total=total)
        bar.update(tasks[stage], completed=done, total=total)

    return progress


def print_json(data: Any) -> None:
    sys.stdout.write(dumps(data, indent=2) + "\n")


def fail(
    message: str, *, as_json: bool = False, code: str = "error", exit_code: int = 1
) -> NoReturn:
    """Report an error (as ``{"error": ...}`` with ``--json``) and exit non-zero."""
    if as_json:
        print_json({"error": {"code": code, "message": message}})
    else:
        err_console.print(f"[bold red]error:[/] {esc(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(exit_code)
