"""``benchmarks/RESULTS.md`` written from the stored results, one table a file.

    python benchmarks/make_results.py            # write RESULTS.md and the README's table
    python benchmarks/make_results.py --check    # exit 1 if either is not what the files give

Each table is a JSON file under ``benchmarks/results/`` (sorted by name), written by the
benchmark that measured it or by hand from its run, and always with where it comes
from: the command, the commit of the code measured, the date, the machine (a key of
``benchmarks/results/machines.json``), n and the seeds. A file that lacks one of them,
or a row whose width is not the header's, stops the script with the file's name.
Consecutive files with the same ``section`` share a heading. The page holds only the
current tables; how they came about is in ``journal/``. CI runs ``--check`` before the
docs build, so a hand edit of ``RESULTS.md`` or a result file not rendered fails it.

A result file with ``readme`` (a list of its column names) also gives the README's
results table: those columns, between the README's two ``results`` markers, with the
line saying where it comes from; so the front page cannot drift from the results.

A result file::

    {"section": "Sure plans run without the model", "title": "With the model ...",
     "about": "Markdown, a few lines", "command": "python benchmarks/...",
     "commit": "bddac32", "date": "2026-12-01", "machine": "epyc-avx512",
     "n": "30 per set", "seeds": "0", "columns": ["set", "Hit@1"],
     "rows": [["metaqa-2", 96.7]], "notes": "Markdown", "record": "benchmarks/records/..."}
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS_DIR = HERE / "results"
PAGE = HERE / "RESULTS.md"
README = REPO / "README.md"
#: The README's lines around the table this script writes there.
README_BEGIN = "<!-- results: written by benchmarks/make_results.py; edit benchmarks/results/ -->"
README_END = "<!-- results: end -->"
MACHINES = RESULTS_DIR / "machines.json"

REQUIRED = ("section", "command", "commit", "date", "machine", "n", "seeds", "columns", "rows")
OPTIONAL = ("title", "about", "notes", "record", "load", "readme")

#: The page's opening paragraph, one line of the page (Markdown joins a paragraph's
#: lines anyway; the page is held to 500 lines, tests/test_results_page.py).
INTRO = " ".join(
    [
        "The current measurements of ARK, one table each, with the command, the commit of the",
        "code measured, the date, the machine, n and the seeds. This page is written by",
        "`python benchmarks/make_results.py` from `benchmarks/results/*.json`; edit those, not",
        "this page. How the benchmarks work: `benchmarks/README.md`. How the numbers came",
        "about, session by session, and the runs that made no table: `journal/`. Why a default",
        "is what it is: the [decision records](../docs/decisions/plan-threshold.md).",
        "Compare seconds only within one table: its rows ran on one machine in one run. One",
        "question of a 30-question sample is 3.3 points, and a seed's run moves by up to four",
        "questions, so small differences are noise.",
    ]
)
HEADER = f"# Results\n\n{INTRO}\n"


class ResultError(ValueError):
    """A result file that cannot make a table, named."""


def anchor(heading: str) -> str:
    """The anchor MkDocs and GitHub give a heading (lower case, punctuation dropped,
    spaces as hyphens), for the contents line."""
    text = re.sub(r"[^\w\s-]", "", heading.lower().replace("`", ""))
    return re.sub(r"\s", "-", text.strip())


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value).replace("|", "\\|").replace("\n", " ")


#: A cell that reads as a number (a figure in bold, signed, with its unit or range after
#: it, or a dash for none): its column is aligned right.
_NUMBER = re.compile(r"^\**[−+\-]?[\d.,]+|^[—–-]$")


def _numeric(column: list[Any]) -> bool:
    seen = [v for v in column if v is not None]
    return bool(seen) and all(
        (isinstance(v, (int, float)) and not isinstance(v, bool))
        or (isinstance(v, str) and _NUMBER.match(v))
        for v in seen
    )


def check_result(name: str, result: dict[str, Any], machines: dict[str, str]) -> None:
    """Refuse a result file that does not say where its table comes from."""
    missing = [k for k in REQUIRED if result.get(k) in (None, "", [])]
    if missing:
        raise ResultError(f"{name}: missing {', '.join(missing)}")
    unknown = sorted(set(result) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        raise ResultError(f"{name}: unknown keys {', '.join(unknown)}")
    if not re.fullmatch(r"[0-9a-f]{7,40}( [0-9a-f]{7,40})*", str(result["commit"])):
        raise ResultError(f"{name}: commit {result['commit']!r} is not a commit id")
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(result["date"])):
        raise ResultError(f"{name}: date {result['date']!r} is not YYYY-MM-DD")
    if result["machine"] not in machines:
        raise ResultError(f"{name}: machine {result['machine']!r} is not in {MACHINES.name}")
    width = len(result["columns"])
    for i, row in enumerate(result["rows"], 1):
        if not isinstance(row, list) or len(row) != width:
            raise ResultError(f"{name}: row {i} has {len(row)} cells, the header {width}")
    if re.search(r"(^|\s)/(work|tmp|home|root)/", result["command"]):
        raise ResultError(f"{name}: the command names a machine's absolute path")
    record = result.get("record")
    if record and not (REPO / record).exists():
        raise ResultError(f"{name}: record {record} does not exist")
    shown = result.get("readme")
    if shown is not None:
        unknown_columns = [c for c in shown or [None] if c not in result["columns"]]
        if unknown_columns:
            raise ResultError(f"{name}: readme names columns it lacks: {unknown_columns}")


def render_table(result: dict[str, Any]) -> list[str]:
    columns, rows = result["columns"], result["rows"]
    right = [_numeric([row[i] for row in rows]) for i in range(len(columns))]
    out = ["| " + " | ".join(_cell(c) for c in columns) + " |"]
    out.append("|" + "|".join("---:" if r else "---" for r in right) + "|")
    out += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return out


def _where(result: dict[str, Any], machines: dict[str, str]) -> str:
    return (
        f"Commit `{result['commit']}` · {result['date']} · {machines[result['machine']]}"
        f" · n = {result['n']} · seeds {result['seeds']}"
    )


def render_result(result: dict[str, Any], machines: dict[str, str]) -> list[str]:
    out: list[str] = []
    if result.get("title"):
        out += [f"### {result['title']}", ""]
    if result.get("about"):
        out += [result["about"].strip(), ""]
    out += ["```bash", result["command"].strip(), "```", ""]
    out += render_table(result)
    where = _where(result, machines)
    if result.get("load"):
        where += f" · {result['load']}"
    where += "."
    if result.get("record"):
        where += f" Record: `{result['record']}`."
    out += ["", where]
    if result.get("notes"):
        out += [result["notes"].strip()]
    return [*out, ""]


def load_results(directory: Path = RESULTS_DIR) -> tuple[list[tuple[str, dict]], dict[str, str]]:
    machines = json.loads((directory / MACHINES.name).read_text(encoding="utf-8"))
    results = []
    for path in sorted(directory.glob("*.json")):
        if path.name == MACHINES.name:
            continue
        try:
            result = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise ResultError(f"{path.name}: line {e.lineno}: {e.msg}") from None
        check_result(path.name, result, machines)
        results.append((path.name, result))
    return results, machines


def render_page(directory: Path = RESULTS_DIR) -> str:
    results, machines = load_results(directory)
    sections: list[str] = []
    for _, r in results:
        if r["section"] not in sections:
            sections.append(r["section"])
    contents = " · ".join(f"[{s}](#{anchor(s)})" for s in sections)
    out = [HEADER, "Contents: " + contents + ".", ""]
    current = None
    for _, r in results:
        if r["section"] != current:
            current = r["section"]
            out += [f"## {current}", ""]
        out += render_result(r, machines)
    return "\n".join(out).rstrip() + "\n"


def render_readme_table(directory: Path = RESULTS_DIR) -> str:
    """The README's results table: the ``readme`` columns of each result file that
    names some, each table with where it comes from and its place on the results page."""
    results, machines = load_results(directory)
    out: list[str] = []
    for _, r in results:
        shown = r.get("readme")
        if not shown:
            continue
        keep = [r["columns"].index(c) for c in shown]
        table = {"columns": shown, "rows": [[row[i] for i in keep] for row in r["rows"]]}
        heading = r.get("title") or r["section"]
        out += render_table(table)
        out += [
            "",
            f"{_where(r, machines)}; the whole table and its command:"
            f" [{heading}](benchmarks/RESULTS.md#{anchor(heading)}).",
            "",
        ]
    return "\n".join(out).rstrip() + "\n"


def with_readme_table(readme: str, table: str) -> str:
    """``readme`` with the text between its two markers replaced by ``table``."""
    begin, end = readme.find(README_BEGIN), readme.find(README_END)
    if begin < 0 or end < begin:
        raise ResultError(f"README.md: the lines {README_BEGIN!r} and {README_END!r} are missing")
    head = readme[: begin + len(README_BEGIN)]
    return head + "\n" + table + readme[end:]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--check",
        action="store_true",
        help="compare with RESULTS.md and the README's table, write nothing",
    )
    args = ap.parse_args(argv)
    try:
        page = render_page()
        readme_now = README.read_text(encoding="utf-8")
        readme = with_readme_table(readme_now, render_readme_table())
    except ResultError as e:
        print(f"make_results: {e}", file=sys.stderr)
        return 2
    if args.check:
        files = (("benchmarks/RESULTS.md", PAGE, page), ("README.md", README, readme))
        stale = [
            name
            for name, path, text in files
            if not path.exists() or path.read_text(encoding="utf-8") != text
        ]
        if stale:
            print(
                f"make_results: {' and '.join(stale)} {'is' if len(stale) == 1 else 'are'} not"
                " what benchmarks/results/ gives;"
                " run python benchmarks/make_results.py",
                file=sys.stderr,
            )
            return 1
        print(f"RESULTS.md and the README's table are current ({len(page.splitlines())} lines)")
        return 0
    PAGE.write_text(page, encoding="utf-8")
    if readme != readme_now:
        README.write_text(readme, encoding="utf-8")
    print(f"wrote {PAGE} ({len(page.splitlines())} lines) and the README's table")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
