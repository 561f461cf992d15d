"""``ark view``: one self-contained HTML page showing what a retriever did.

The page needs no network and no server: the graph library (vis-network, vendored
with its licence in ``vendor/``) and the data are inlined, so the file can be opened
from disk, mailed or archived beside the run. See :mod:`ark.serve.viewer._data` for
what is embedded and how a large run stays light.
"""

from __future__ import annotations

import html
from importlib.resources import files
from pathlib import Path
from typing import Any

from ark._files import write_atomic
from ark._safe import dumps
from ark.serve.viewer._data import MAX_OBSERVATION, load_source

__all__ = [
    "MAX_OBSERVATION",
    "default_view_path",
    "load_source",
    "render_html",
    "write_view",
    "write_views",
]


def _asset(name: str) -> str:
    return (files(__package__) / name).read_text(encoding="utf-8")


def _json_block(data: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``</script>`` or ``<!--`` can occur,
    because every ``<`` is written as the JSON escape ``\\u003c``."""
    text = dumps(data, separators=(",", ":"))  # lone surrogates cannot break the file
    return text.replace("<", "\\u003c")


def render_html(
    header: dict[str, Any], rows: list[dict[str, Any]], details: list[dict[str, Any]]
) -> str:
    """The page: the query list as one JSON block, each query's details as another."""
    blocks = "\n".join(
        f'<script type="application/json" id="q-{i}">{_json_block(d)}</script>'
        for i, d in enumerate(details)
    )
    # Cut the template at its markers first, so that no data can be taken for one.
    page = _asset("template.html")
    top, _, rest = page.partition("__INDEX__")
    middle, _, rest = rest.partition("__DETAILS__")
    before_vis, _, end = rest.partition("__VIS__")
    title = html.escape(str(header.get("title", "")))
    return "".join(
        [
            top.replace("__TITLE__", title, 1),
            _json_block({"header": header, "rows": rows}),
            middle,
            blocks,
            before_vis,
            _asset("vendor/vis-network.min.js"),
            end,
        ]
    )


def default_view_path(source: Path) -> Path:
    """``RUN_DIR/view.html`` for a run, ``NAME.html`` beside a ``NAME.jsonl``."""
    source = Path(source)
    return source / "view.html" if source.is_dir() else source.with_suffix(".html")


def write_view(source: Path, out: Path | None = None, *, index_dir: Path | None = None) -> dict:
    """Write the page for a run directory or a trajectories file; returns what it holds."""
    header, rows, details = load_source(Path(source), index_dir)
    target = Path(out) if out is not None else default_view_path(Path(source))
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, render_html(header, rows, details))
    return {
        "path": str(target),
        "queries": len(rows),
        "trajectories": sum(len(d["trajectories"]) for d in details),
        "names": header.get("names", False),
        "bytes": target.stat().st_size,
    }


def write_views(run_dirs: list[Path], out: Path) -> list[tuple[str, Path]]:
    """One page per run into ``out`` (``view.html``, or ``view-1.html``… for several),
    as ``ark report`` links them; returns ``(run, page)`` pairs."""
    names = (
        ["view.html"]
        if len(run_dirs) == 1
        else [f"view-{i}.html" for i in range(1, 1 + len(run_dirs))]
    )
    return [
        (str(run), Path(write_view(Path(run), out / name)["path"]))
        for run, name in zip(run_dirs, names, strict=True)
    ]
