"""Checks of an index's settings where they enter (``ark index build`` options and a
``meta.json`` that may come from someone else): BM25 parameters finite and in range,
and a token pattern that ``findall`` can use (no groups) and cannot hang a query.

A NaN or negative ``k1`` builds an index whose every score is NaN or whose ranking is
inverted, and nothing fails: a search for a node that exists returns nothing. A
pattern with catastrophic backtracking (``(?:a+)+b``) hangs every query on a long
word. Both are refused with the setting's name."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from typing import Any

#: Accepted ranges (inclusive). ``k1`` past 100 makes term frequency saturate never;
#: ``b`` is a fraction of length normalisation by definition.
K1_RANGE = (0.0, 100.0)
B_RANGE = (0.0, 1.0)
#: How long the probe of a non-default token pattern may take on adversarial text.
PROBE_SECONDS = 3.0
_PROBED: dict[str, str | None] = {}


def bm25_problem(k1: Any, b: Any) -> str | None:
    """Why ``k1``/``b`` cannot be used (None: they can)."""
    for name, value, (low, high) in (("k1", k1, K1_RANGE), ("b", b, B_RANGE)):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"{name} must be a number, got {value!r}"
        if not math.isfinite(value) or not low <= value <= high:
            return f"{name} = {value!r} is out of range: a finite number in [{low:g}, {high:g}]"
    return None


def token_pattern_problem(pattern: Any, *, default: str | None = None) -> str | None:
    """Why ``pattern`` cannot be the token pattern (None: it can): not a string, does
    not compile, has groups (``findall`` would return tuples), repeats a repetition or
    an alternation without bound (catastrophic backtracking), or takes longer than
    :data:`PROBE_SECONDS` on adversarial text in a child process. ``default`` (ARK's
    own) is not probed."""
    if not isinstance(pattern, str):
        return f"token_pattern must be a string, got {type(pattern).__name__}"
    try:
        compiled = re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        return f"token_pattern {pattern!r} is not a valid regular expression ({exc})"
    if compiled.groups:
        return (
            f"token_pattern {pattern!r} has {compiled.groups} capturing group(s); use "
            "(?:...) instead (a token is the whole match)"
        )
    if pattern == default:
        return None
    nested = _nested_repeat(pattern)
    if nested:
        return f"token_pattern {pattern!r} {nested}: a long word could hang every query"
    if pattern not in _PROBED:
        _PROBED[pattern] = _probe(pattern)
    return _PROBED[pattern]


def _nested_repeat(pattern: str) -> str | None:
    """A static look for the plainest shape of catastrophic backtracking, an
    unbounded repeat of an unbounded repeat (``(?:a+)+``, ``(?:\\w*)*``); other
    shapes (overlapping alternatives) are left to the probe."""
    try:
        from re import _constants as c  # type: ignore[attr-defined]
        from re import _parser as sre_parse  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - Python < 3.11
        return None
    try:
        tree = sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError):  # compiled above: cannot fail
        return None
    repeats = {c.MAX_REPEAT, c.MIN_REPEAT} | (
        {c.POSSESSIVE_REPEAT} if hasattr(c, "POSSESSIVE_REPEAT") else set()
    )

    def unwrap(items: Any) -> Any:
        while len(items) == 1 and items[0][0] is c.SUBPATTERN:
            items = items[0][1][-1]
        return items

    def walk(items: Any) -> str | None:
        for op, av in items:
            if op in repeats:
                _low, high, body = av
                inner = unwrap(body)
                if (
                    high == c.MAXREPEAT
                    and op is not getattr(c, "POSSESSIVE_REPEAT", None)
                    and len(inner) == 1
                    and inner[0][0] in repeats
                    and inner[0][1][1] == c.MAXREPEAT
                ):
                    return "repeats a repetition without bound"
                found = walk(body)
            elif op is c.BRANCH:
                found = next((f for alt in av[1] if (f := walk(alt))), None)
            elif op is c.SUBPATTERN:
                found = walk(av[-1])
            elif op in (c.ASSERT, c.ASSERT_NOT):
                found = walk(av[1])
            else:
                found = None
            if found:
                return found
        return None

    return walk(tree)


_PROBE = r"""
import re, sys
find = re.compile(sys.argv[1]).findall
for ch in ("a", "A", "1", "_", " ", "-", ".", "\u00e9", "aA1_"):
    for end in ("", "!", "\x00", " a"):
        find(ch * 4000 + end)
"""


def _probe(pattern: str) -> str | None:
    """Run ``pattern`` on long runs of common characters in a child process, which is
    killed after :data:`PROBE_SECONDS` (a regex cannot be interrupted in-process)."""
    try:
        subprocess.run(
            [sys.executable, "-I", "-S", "-c", _PROBE, pattern],
            timeout=PROBE_SECONDS,
            check=True,
            capture_output=True,
        )
    except subprocess.TimeoutExpired:
        return (
            f"token_pattern {pattern!r} took over {PROBE_SECONDS:g} s on a 4,000-character "
            "word (catastrophic backtracking): a query could hang"
        )
    except (OSError, subprocess.CalledProcessError):
        return None  # no child process here: the static check stands alone
    return None
