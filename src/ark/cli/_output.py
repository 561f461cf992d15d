"""Printing helpers shared by commands: JSON or rich text, and errors with exit codes."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape as esc

__all__ = ["console", "err_console", "esc", "fail", "print_json"]

console = Console()
err_console = Console(stderr=True)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def fail(
    message: str, *, as_json: bool = False, code: str = "error", exit_code: int = 1
) -> NoReturn:
    """Report an error (as ``{"error": ...}`` with ``--json``) and exit non-zero."""
    if as_json:
        print_json({"error": {"code": code, "message": message}})
    else:
        err_console.print(f"[bold red]error:[/] {esc(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(exit_code)
