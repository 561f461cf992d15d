"""``ark llm-cache stats|clear DIR``: inspect and empty an LLM response cache."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ark.cli._output import console, esc, fail, print_json
from ark.cli._root import app
from ark.errors import ArkError
from ark.llm import CACHE_FILE, LLMCache

cache_app = typer.Typer(help="Inspect and clear an LLM response cache (--llm-cache DIR).")
app.add_typer(cache_app, name="llm-cache", no_args_is_help=True)

DirArg = Annotated[Path, typer.Argument(help="The cache directory given to --llm-cache.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def _open(directory: Path, as_json: bool) -> LLMCache:
    if not (directory / CACHE_FILE).exists():
        fail(f"{directory} holds no LLM cache ({CACHE_FILE})", as_json=as_json, code="ArkError")
    return LLMCache(directory)


@cache_app.command("stats")
def stats(directory: DirArg, as_json: JsonOpt = False) -> None:
    """Entries, hits served and tokens they saved, per model, and the size on disk;
    and where the local model's saved prompt states (KV cache) are, and how full."""
    from ark.llm.local import kv_cache_stats

    cache = _open(directory, as_json)
    try:
        data = cache.stats()
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    finally:
        cache.close()
    kv = kv_cache_stats()
    if as_json:
        print_json({**data, "kv_cache": kv})
        return
    table = Table("model", "entries", "hits", "tokens served from cache", title=esc(data["path"]))
    for m in data["models"]:
        table.add_row(
            esc(m["model"]), str(m["entries"]), str(m["hits"]), f"{m['tokens_served_from_cache']:,}"
        )
    console.print(table)
    console.print(
        f"{data['entries']} entries, {data['hits']} hits, {data['bytes'] / 1e6:.2f} MB on disk",
        markup=False,
    )
    if kv["path"] is None:
        console.print("Saved prompt states (KV cache): off (ARK_KV_CACHE)", markup=False)
    else:
        console.print(
            f"Saved prompt states (KV cache): {kv['path']}: {kv['files']} files, "
            f"{kv['bytes'] / 1e6:.2f} MB of at most {kv['max_bytes'] / 1e6:.0f} MB "
            "(ARK_KV_CACHE_MAX_MB; least recently used evicted)",
            markup=False,
        )


@cache_app.command("clear")
def clear(
    directory: DirArg,
    model: Annotated[str | None, typer.Option(help="Clear only this model's entries.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Delete every cached response (or one model's) and shrink the file; a damaged
    cache is replaced by an empty one (``deleted`` is then -1)."""
    cache = _open(directory, as_json)
    try:
        deleted = cache.clear(model)
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    finally:
        cache.close()
    if as_json:
        print_json({"deleted": deleted, "path": str(cache.path)})
    elif deleted < 0:
        console.print(f"Replaced the damaged cache {cache.path} by an empty one", markup=False)
    else:
        console.print(f"Deleted {deleted} cached responses from {cache.path}", markup=False)
