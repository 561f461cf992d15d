"""Exceptions raised by ARK.

Everything ARK raises on purpose derives from :class:`ArkError`, so callers can
catch one type. Tool calls made by a model never raise: they return
:class:`ark.tools.ToolError` values instead (see ``ark.tools``).
"""

from __future__ import annotations

from pathlib import Path


class ArkError(Exception):
    """Base class of every error ARK raises deliberately."""


class GraphFormatError(ArkError):
    """A graph source file is malformed; names the file and, when known, the line
    (text files, 1-based) or the row (parquet, 0-based)."""

    def __init__(
        self, path: str | Path, message: str, line: int | None = None, unit: str = "line"
    ) -> None:
        self.path = str(path)
        self.line = line
        self.unit = unit
        self.reason = message
        if line is None:
            where = self.path
        elif unit == "line":
            where = f"{self.path}:{line}"
        else:
            where = f"{self.path} ({unit} {line})"
        super().__init__(f"{where}: {message}")


class IndexFormatError(ArkError):
    """An index directory is missing, corrupted or of another format version.

    The message always says what to do (usually: rebuild with ``ark index build``).
    """
