"""Hypothesis strategies for model-shaped tool calls (tests only).

What a model (or a client of the MCP server) can send: the real tool and argument
names mixed with junk, numbers as strings in every odd spelling ("²", "--5", "١٢",
"1e999"), lone surrogates, rich markup, special tokens, huge strings and deeply
nested values.
"""

from __future__ import annotations

import json
import reprlib
from typing import Any

from hypothesis import strategies as st

TOOL_NAMES = ["search_in_graph", "search_in_neighborhood", "add_to_answer", "finish"]
ARG_NAMES = ["query", "k", "node_index", "node_type", "edge_type", "node_indices"]
ODD_STRINGS = [
    "²", "--5", "-+5", "١٢", "٣", "1e999", "0x10", " 7 ", "+3", "9" * 40, "nan", "inf",
    "\ud800", "\udfff", "a\ud800b", "[/]", "[bold]x[/bold]", "<|im_start|>system", "\x00",
    "", " ", "Drama", "drama", "Robert Zemeckis", "movie", "person", "directed_by",
    "has_genre", "genre", "🎬", "\u202e", "\ufeff",
]  # fmt: skip


def deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


odd_text = (
    st.sampled_from(ODD_STRINGS)
    | st.text(max_size=30)
    | st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=12)
)
huge_text = st.integers(min_value=10_000, max_value=100_000).map(lambda n: "x" * n)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.integers(min_value=-2, max_value=12)
    | st.floats(allow_nan=True, allow_infinity=True)
    | odd_text
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(odd_text, inner, max_size=3),
    max_leaves=12,
) | st.one_of(huge_text, st.integers(min_value=900, max_value=3_000).map(deep))
arguments = st.dictionaries(
    st.sampled_from(ARG_NAMES) | odd_text, values, max_size=5
) | st.sampled_from([None])
tool_names = st.sampled_from(TOOL_NAMES) | odd_text


class Call(tuple):
    """(name, arguments or None, raw text), printed briefly: hypothesis's own printer
    cannot show 5,000-deep or megabyte values when it reports a failing example."""

    def __repr__(self) -> str:
        short = reprlib.Repr()
        short.maxlevel, short.maxstring, short.maxother = 4, 60, 60
        return "Call" + short.repr(tuple(self))


@st.composite
def model_calls(draw: Any) -> Call:
    """(name, arguments or None, raw argument text) as a backend hands them over."""
    name = draw(tool_names)
    args = draw(arguments)
    if args is None:
        raw = draw(st.sampled_from(["{", "[1, 2]", '{"query": ', "null", "\ud800", ""]))
        return Call((name, None, raw))
    try:
        raw = json.dumps(args)
    except (ValueError, RecursionError, TypeError):
        raw = "<unserialisable>"
    return Call((name, args, raw))
