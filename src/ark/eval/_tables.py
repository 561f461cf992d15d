"""The table writers every section of ``ark report`` shares: a list of row dicts as a
Markdown table and as a CSV file. One home, so the comparison, cost and profile
sections print and save their tables the same way (and none of them reaches into
another's private names)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any


def markdown_table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table, columns in the first row's order; ``path`` is left
    out (it is for the CSV), ``None`` shows as ``-``."""
    if not rows:
        return "(no rows)\n"
    keys = [k for k in rows[0] if k != "path"]
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += [
        "| " + " | ".join("-" if r[k] is None else str(r[k]) for k in keys) + " |" for r in rows
    ]
    return "\n".join(lines) + "\n"


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    """The rows as a CSV file with a header (every column, ``path`` included)."""
    with path.open("w", newline="", encoding="utf-8", errors="replace") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
