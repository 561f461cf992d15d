"""The ``ark`` command line: a thin typer layer over the Python API."""

from ark.cli._app import app

__all__ = ["app"]
