"""MkDocs hooks: the pages that are generated from the code at build time.

- ``reference/cli/``: one page per ``ark`` command, read from the typer app's click
  tree (usage, help, arguments, options), so the CLI reference cannot drift from the
  CLI. The nav entry ``reference/cli/index.md`` is expanded into one entry per page.
- ``results.md``: ``benchmarks/RESULTS.md``, with its links into ``docs/`` made
  relative to the site; ``journal/*.md`` likewise, from the repository's ``journal/``.

Nothing here reaches the network. ``tests/test_docs.py`` imports this module to check
that every command has a page.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CLI_DIR = "reference/cli"
CLI_INDEX = f"{CLI_DIR}/index.md"
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
#: The journal's pages on the site: how the numbers came about, session by session.
JOURNAL = {
    "journal/results-diary.md": ROOT / "journal" / "results-diary.md",
    "journal/quality-log.md": ROOT / "journal" / "quality-log.md",
}

CLI_INTRO = """\
Every command that prints a result takes `--json` to print machine-readable output (a
test keeps it so). Errors print `{"error": {...}}` with `--json` (a message on stderr
otherwise) and exit non-zero; the codes are listed in [error codes](../error-codes.md).
These pages are generated from the command line itself (`ark COMMAND --help` shows the
same); the guides explain what each command is for.
"""


# Typer builds on click (recent typer versions carry their own copy of it), so the
# command tree is read by duck typing: a group is what lists commands.
Command = Any
Context = Any


def root_command() -> Command:
    """The ``ark`` command as click sees it."""
    import typer

    from ark.cli import app

    return typer.main.get_command(app)


def is_group(cmd: Command) -> bool:
    return hasattr(cmd, "list_commands")


def is_argument(param: Any) -> bool:
    return getattr(param, "param_type_name", "") == "argument"


def commands(group: Command | None = None) -> list[tuple[str, Command, Context]]:
    """Every command below ``ark``, groups included, as ``("ark index build", command,
    context)``, in the order ``ark --help`` lists them."""
    group = group or root_command()
    found: list[tuple[str, Command, Context]] = []

    def walk(ctx: Context) -> None:
        g = ctx.command
        for name in g.list_commands(ctx):
            cmd = g.get_command(ctx, name)
            if cmd is None or cmd.hidden:
                continue
            sub = cmd.context_class(cmd, info_name=name, parent=ctx)
            found.append((sub.command_path, cmd, sub))
            if is_group(cmd):
                walk(sub)

    walk(group.context_class(group, info_name="ark"))
    return found


def page_name(path: str) -> str:
    """``"ark index build"`` → ``"reference/cli/ark-index-build.md"``."""
    return f"{CLI_DIR}/{path.replace(' ', '-')}.md"


def _cell(text: str) -> str:
    """Text made safe for one Markdown table cell."""
    text = " ".join(text.split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("|", "\\|")


def _help(cmd: Command) -> str:
    return (cmd.help or cmd.short_help or "").strip()


def _default(param: Any) -> str:
    if getattr(param, "is_flag", False) and not getattr(param, "secondary_opts", None):
        return "off" if not param.default else "on"
    default = param.default
    if default is None or default == () or callable(default):
        return ""
    if isinstance(default, bool) and getattr(param, "secondary_opts", None):
        flag = param.opts[0] if default else param.secondary_opts[0]
        return f"`{flag}`"
    if isinstance(default, (list, tuple)):
        default = ", ".join(map(str, default))
    return f"`{default}`"


_TYPE_NAMES = {str: "text", int: "integer", float: "number", bool: "flag", Path: "path"}


def _annotation_name(annotation: Any) -> str:
    import types
    import typing

    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType) and len(args) == 1:
        return _annotation_name(args[0])
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in typing.get_args(annotation))
    if origin in (list, tuple) and args:
        return _annotation_name(args[0])
    return _TYPE_NAMES.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _type(param: Any) -> str:
    if getattr(param, "is_flag", False):
        return "flag"
    t = getattr(param, "type", None)
    if getattr(t, "choices", None):
        return " \\| ".join(f"`{c}`" for c in t.choices)
    descriptor = getattr(param, "type_descriptor", None)
    name = (
        _annotation_name(descriptor.annotation)
        if descriptor is not None
        else getattr(t, "name", "") or ""
    )
    return f"{name}, repeatable" if getattr(param, "multiple", False) else name


def _usage(path: str, cmd: Command) -> str:
    pieces = [path]
    pieces.append("[OPTIONS]")  # --help at least
    for p in cmd.params:
        if is_argument(p):
            name = (p.metavar or p.name or "").upper()
            if getattr(p, "nargs", 1) == -1:
                name += "..."
            pieces.append(name if p.required else f"[{name}]")
    if is_group(cmd):
        pieces.append("COMMAND [ARGS]...")
    return " ".join(pieces)


def _sentence(*parts: str) -> str:
    """Parts joined as sentences: a missing full stop is added between them."""
    out = ""
    for part in (p.strip() for p in parts):
        if not part:
            continue
        if out and not out.endswith((".", "!", "?", ")")):
            out += "."
        out = f"{out} {part}" if out else part
    return out


def command_page(path: str, cmd: Command, ctx: Context) -> str:
    """The Markdown reference page of one command."""
    usage = _usage(path, cmd)
    lines = [f"# `{path}`", "", _help(cmd) or "(no description)", "", "```text", usage, "```", ""]
    if is_group(cmd):
        lines += ["## Commands", "", "| command | what it does |", "|---|---|"]
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            target = Path(page_name(f"{path} {name}")).name
            summary = _cell(sub.get_short_help_str(limit=200))
            lines.append(f"| [`{path} {name}`]({target}) | {summary} |")
        lines.append("")
    arguments = [p for p in cmd.params if is_argument(p)]
    options = [p for p in cmd.params if not is_argument(p) and not getattr(p, "hidden", False)]
    if arguments:
        lines += ["## Arguments", "", "| argument | type | required | description |"]
        lines.append("|---|---|---|---|")
        for p in arguments:
            name = (p.metavar or p.name or "").upper()
            required = "yes" if p.required else f"no (default {_default(p) or 'none'})"
            lines.append(
                f"| `{name}` | {_type(p)} | {required} | {_cell(getattr(p, 'help', '') or '')} |"
            )
        lines.append("")
    if options:
        lines += ["## Options", "", "| option | type | default | description |"]
        lines.append("|---|---|---|---|")
        for p in options:
            names = ", ".join(f"`{o}`" for o in [*p.opts, *p.secondary_opts])
            envvar = f"Environment: `{p.envvar}`." if isinstance(p.envvar, str) else ""
            required = "Required." if p.required else ""
            text = _sentence(p.help or "", required, envvar)
            lines.append(f"| {names} | {_type(p)} | {_default(p)} | {_cell(text)} |")
        lines.append("")
    return "\n".join(lines)


def cli_pages() -> dict[str, str]:
    """Every generated CLI page, by its path under ``docs/``."""
    root = root_command()
    rows = [
        f"| [`{path}`]({Path(page_name(path)).name}) | {_cell(cmd.get_short_help_str(limit=200))} |"
        for path, cmd, _ in commands(root)
    ]
    index = "\n".join(
        ["# CLI reference", "", _help(root), "", CLI_INTRO, "| command | what it does |",
         "|---|---|", *rows, ""]
    )  # fmt: skip
    pages = {CLI_INDEX: index}
    for path, cmd, ctx in commands(root):
        pages[page_name(path)] = command_page(path, cmd, ctx)
    return pages


def cli_nav() -> list[Any]:
    """The nav entries of the CLI reference: the index, then one per command."""
    return [CLI_INDEX, *({path: page_name(path)} for path, _, _ in commands())]


def results_page() -> str:
    """``benchmarks/RESULTS.md`` as a page of the site: links into ``docs/`` rewritten."""
    text = RESULTS.read_text(encoding="utf-8")
    return re.sub(r"\]\(\.\./docs/", "](", text)


def journal_pages() -> dict[str, str]:
    """The journal's files as pages one folder down the site: their links into ``docs/``
    (written from the repository's ``journal/``) rewritten to the site's."""
    return {
        uri: re.sub(r"\]\(\.\./docs/", "](../", path.read_text(encoding="utf-8"))
        for uri, path in JOURNAL.items()
    }


# --- MkDocs events -------------------------------------------------------------------


def _expand(nav: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in nav:
        if isinstance(item, dict):
            ((title, value),) = item.items()
            if value == CLI_INDEX:
                out.append({title: cli_nav()})
            elif isinstance(value, list):
                out.append({title: _expand(value)})
            else:
                out.append(item)
        else:
            out.append(item)
    return out


def on_config(config: Any) -> Any:
    if config.nav:
        config.nav = _expand(config.nav)
    return config


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    generated = {**cli_pages(), "results.md": results_page(), **journal_pages()}
    for src_uri, content in generated.items():
        files.append(File.generated(config, src_uri, content=content))
    return files
