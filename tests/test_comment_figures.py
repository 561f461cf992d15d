"""No comment or docstring under ``src/ark`` quotes a measurement (issue 65).

A figure measured once (a share of questions right, a speed-up, a timing) goes stale in
the code while the code moves on; it lives in a decision record under
``docs/decisions/``, which the code links in one line. This scans every comment and
every docstring (module, class, function and attribute ones) for the shapes such
figures take: a percentage, "N of M" or "N/M", a ratio ("1.5x"), a time ("~11 s"), a
rate ("tokens/s"). The few lines whose figure is no measurement (a threshold, a
constant, an example of output) are listed below with the reason, and each must still
be there, so the list cannot rot.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "ark"

#: The shapes a quoted measurement takes.
FIGURE = re.compile(
    r"\d+(?:\.\d+)? ?%"  # a percentage
    r"|\b\d[\d,]* of (?:the |all )?\d[\d,]*\b"  # a count: 7 of 12
    r"|\b\d+/\d+\b"  # a count: 32/37
    r"|\b\d+(?:\.\d+)?[x×](?![\w-])"  # a ratio: 1.5x, 3.7×
    r"|~?\b\d+(?:\.\d+)? (?:ns|us|µs|ms|s|min)\b"  # a time: ~11 s, 2.5 us
    r"|\btok(?:en)?s?/s\b"  # a rate
)

#: (file under src/ark, text of the line): figures that are no measurement.
ALLOWED: dict[tuple[str, str], str] = {
    ("distill/_paths.py", "carrying < 1 % of a relation's edges"): "the threshold's definition",
    ("ingest/_html.py", "not UTF-16/32"): "an encoding's name",
    ("ingest/_ingest.py", "120 s and 4 retries"): "a server's defaults, as constants",
    ("cli/_llm_opts.py", "8.1 s in the model, 0.0231 s in the tools"): "an example of output",
    ("profile.py", "``12.3 s evaluating the prompt"): "an example of output",
    ("profile.py", "decoding (123 tokens), 0.2 s with saved state"): "an example of output",
}


def commentary(path: Path) -> list[tuple[int, str]]:
    """Each line of ``path``'s comments and docstrings, with its line number."""
    text = path.read_text(encoding="utf-8")
    lines = [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(text).readline)
        if tok.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(text)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            lines += [
                (node.lineno + i, line) for i, line in enumerate(node.value.value.splitlines())
            ]
    return lines


def quoted_figures() -> list[tuple[str, int, str]]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        name = path.relative_to(SRC).as_posix()
        for number, line in commentary(path):
            if FIGURE.search(line):
                found.append((name, number, line.strip()))
    return found


def _allowed(name: str, line: str) -> bool:
    return any(name == where and text in line for where, text in ALLOWED)


def test_no_comment_or_docstring_quotes_a_measurement():
    quoted = [
        f"src/ark/{name}:{number}: {line}"
        for name, number, line in quoted_figures()
        if not _allowed(name, line)
    ]
    assert not quoted, (
        "measured figures belong in docs/decisions/ (the code keeps one line and a "
        "link); a figure that is no measurement goes into ALLOWED with its reason:\n"
        + "\n".join(quoted)
    )


def test_every_allowed_figure_is_still_there():
    found = quoted_figures()
    stale = [
        key
        for key in ALLOWED
        if not any(name == key[0] and key[1] in line for name, _, line in found)
    ]
    assert not stale, f"allowed figures no longer in the code, drop them: {stale}"


def test_the_scan_sees_comments_docstrings_and_attribute_docstrings(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        '"""Module: 86.5 % right."""\n'
        "X = 1  # 7 of 12 replies\n"
        "#: 1.49x as costly\n"
        "Y = 2\n"
        '"""Attribute: ~11 s a relation."""\n'
        "def f():\n"
        '    """32/37 kept."""\n'
        '    return "9 of 10, not commentary"\n',
        encoding="utf-8",
    )
    hits = [line for _, line in commentary(source) if FIGURE.search(line)]
    assert len(hits) == 5
    assert not any("not commentary" in line for line in hits)
