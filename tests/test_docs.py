"""The documentation stays true to the code: every CLI command has a reference page in
the site's nav, every error code and trajectory field is documented, the README stays
short and names every command, and its links lead somewhere. (`mkdocs build --strict`
in .ci/run checks the site's own links and the API pages.)"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from pathlib import Path

import pytest
import typer
import yaml

from ark import ErrorCode
from ark.cli import app
from ark.trajectory import STORED_AS, StepRecord, ToolCallRecord, Trajectory

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"


def _load_hooks():
    spec = importlib.util.spec_from_file_location("ark_docs", DOCS / "_hooks" / "ark_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = _load_hooks()


def cli_commands() -> list[tuple[str, object]]:
    """Every ``ark`` command, groups included, walked independently of the hooks."""
    root = typer.main.get_command(app)
    found: list[tuple[str, object]] = []

    def walk(prefix: str, group: object, ctx: object) -> None:
        for name in group.list_commands(ctx):  # type: ignore[attr-defined]
            cmd = group.get_command(ctx, name)  # type: ignore[attr-defined]
            if cmd is None or cmd.hidden:
                continue
            found.append((f"{prefix} {name}", cmd))
            if hasattr(cmd, "list_commands"):
                walk(f"{prefix} {name}", cmd, cmd.context_class(cmd, info_name=name, parent=ctx))

    walk("ark", root, root.context_class(root, info_name="ark"))
    return found


def nav_pages(nav: list) -> list[str]:
    pages: list[str] = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        pages += nav_pages(value) if isinstance(value, list) else [value]
    return pages


def mkdocs_nav() -> list:
    return yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]


def test_every_cli_command_has_a_reference_page_in_the_nav():
    pages = hooks.cli_pages()
    nav = nav_pages(hooks._expand(mkdocs_nav()))
    commands = cli_commands()
    assert len(commands) >= 20  # the walk found the tree, groups and subcommands
    for path, cmd in commands:
        page = hooks.page_name(path)
        assert page in pages, f"{path} has no reference page"
        assert page in nav, f"{path}'s page is not in the site's nav"
        text = pages[page]
        assert text.startswith(f"# `{path}`")
        for param in cmd.params:  # type: ignore[attr-defined]
            if not getattr(param, "hidden", False):
                for opt in (o for o in param.opts if o.startswith("-")):
                    assert f"`{opt}`" in text, f"{path}: {opt} missing from its page"
    assert set(pages) == {hooks.CLI_INDEX} | {hooks.page_name(p) for p, _ in commands}


def test_the_cli_index_links_every_command_page():
    index = hooks.cli_pages()[hooks.CLI_INDEX]
    for path, _ in cli_commands():
        assert f"]({Path(hooks.page_name(path)).name})" in index


def test_every_nav_entry_is_a_page():
    generated = {*hooks.cli_pages(), "results.md", *hooks.journal_pages()}
    for page in nav_pages(hooks._expand(mkdocs_nav())):
        assert page in generated or (DOCS / page).is_file(), f"nav names a missing page: {page}"


def test_every_docs_page_is_in_the_nav():
    nav = set(nav_pages(mkdocs_nav()))
    for path in DOCS.rglob("*.md"):
        rel = path.relative_to(DOCS).as_posix()
        if not rel.startswith("_"):
            assert rel in nav, f"docs/{rel} is not in mkdocs.yml's nav"


def test_every_error_code_is_documented():
    text = (DOCS / "reference" / "error-codes.md").read_text(encoding="utf-8")
    for code in ErrorCode:
        assert f"`{code.value}`" in text, f"error code {code.value} is not documented"


@pytest.mark.parametrize("record", [Trajectory, StepRecord, ToolCallRecord])
def test_every_trajectory_field_is_documented(record):
    text = (DOCS / "reference" / "trajectory-schema.md").read_text(encoding="utf-8")
    for f in dataclasses.fields(record):
        if f.name != "extra":  # unknown fields kept as they are, not a field of the JSON
            key = STORED_AS.get(f.name, f.name) if record is Trajectory else f.name
            assert f"`{key}`" in text, f"{record.__name__}.{f.name} ({key}) is not documented"


def test_readme_is_short_and_names_every_top_level_command():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    top_level = {path for path, _ in cli_commands() if path.count(" ") == 1}
    table = set(re.findall(r"^\| `(ark [a-z-]+)", readme, flags=re.M))
    assert top_level <= table, f"README's command table lacks {sorted(top_level - table)}"


@pytest.mark.parametrize("doc", ["README.md", "benchmarks/RESULTS.md", "benchmarks/README.md"])
def test_relative_links_outside_the_site_lead_to_files(doc):
    path = REPO / doc
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")):
        if "://" in target:
            continue
        if target.startswith("docs/reference/cli/"):
            continue  # generated when the site is built
        assert (path.parent / target).exists(), f"{doc} links to a missing {target}"


def test_results_keep_the_generality_table_section():
    text = (REPO / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    assert "\n## Quality beyond MetaQA: the generality table\n" in text


def test_ci_installs_what_the_readme_says_and_nothing_else():
    """.ci/run is the README's install and test command (plus the docs build and the
    layer contracts): every package spec the README installs is installed by .ci/run,
    and every one .ci/run installs is in the README, optional parts included."""
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()

    def specs(text: str) -> set[str]:
        found = set()
        for line in text.splitlines():
            if line.lstrip().startswith("#"):
                continue
            for command in re.findall(r"pip install ([^`&#\n]+)", line):
                found |= {w.strip("\"'") for w in command.split() if not w.startswith("-")}
        return found

    ours = specs(ci) - {"pip"}  # pip upgrading itself
    install = re.search(r"```bash\n(.*?)```", readme, re.S)
    assert install is not None
    assert specs(install.group(1)) <= ours  # the install block, all of it
    assert ours <= specs(readme), ours - specs(readme)  # and nothing the README omits
    assert {"torch==2.13.0", ".[dev]", "stark-qa==1.1.0"} <= ours
    assert "apt-get install" in readme and "chromium" in ci
    assert "python -m pytest -q" in readme and ci.rstrip().endswith("python -m pytest -q")
