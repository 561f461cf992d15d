"""Schema files are checked where they enter (issue 42, item 6): types, sizes, text,
nesting depth and YAML aliases, with errors naming the file and the field."""

from __future__ import annotations

import json
import re
import time

import pytest

from ark.errors import GraphFormatError
from ark.graph import read_schema_file


def _yaml(tmp_path, body: str):
    p = tmp_path / "schema.yaml"
    p.write_text(body, encoding="utf-8")
    return p


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ("label: [a, b]", "label"),
        ("label: {x: 1}", "label"),
        ("description: 12", "description"),
        ("aliases: not a list", "aliases"),
        ("aliases: [ok, [nested]]", "aliases[1]"),
        ("source_type: [x]", "source_type"),
    ],
)
def test_a_field_of_the_wrong_type_names_file_and_field(tmp_path, entry, field):
    p = _yaml(tmp_path, f"relations:\n  directed_by:\n    {entry}\n")
    with pytest.raises(GraphFormatError, match=rf"schema\.yaml.*directed_by\.{re.escape(field)}:"):
        read_schema_file(p)


def test_sizes_are_capped(tmp_path):
    big_alias = {"relations": {"r": {"aliases": ["x" * 5_000_000]}}}
    p = tmp_path / "s.json"
    p.write_text(json.dumps(big_alias))
    with pytest.raises(GraphFormatError, match=r"r\.aliases\[0\].*at most"):
        read_schema_file(p)
    p.write_text(json.dumps({"relations": {"r": {"description": "d" * 10_000_000}}}))
    with pytest.raises(GraphFormatError, match=r"r\.description.*at most"):
        read_schema_file(p)
    p.write_text(json.dumps({"relations": {"r": {"aliases": ["a"] * 5000}}}))
    with pytest.raises(GraphFormatError, match="aliases"):
        read_schema_file(p)


def test_nul_and_lone_surrogates_are_refused(tmp_path):
    p = tmp_path / "s.json"
    p.write_text('{"relations": {"r": {"label": "a\\u0000b"}}}')
    with pytest.raises(GraphFormatError, match=r"r\.label.*control character"):
        read_schema_file(p)
    p.write_text('{"types": {"t": {"description": "x\\ud800y"}}}')
    with pytest.raises(GraphFormatError, match=r"t\.description.*surrogate"):
        read_schema_file(p)


def test_a_billion_laughs_is_refused_at_once(tmp_path):
    lines = ["types:", '  t0:\n    label: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 13):
        refs = ", ".join([f"*l{i - 1}"] * 9)
        lines.append(f"  t{i}:\n    label: &l{i} [{refs}]")
    p = _yaml(tmp_path, "\n".join(lines) + "\n")
    assert p.stat().st_size < 4000
    started = time.perf_counter()
    with pytest.raises(GraphFormatError, match=r"schema\.yaml:\d+: more than 100 YAML aliases"):
        read_schema_file(p)
    assert time.perf_counter() - started < 5


def test_a_few_aliases_still_work(tmp_path):
    p = _yaml(
        tmp_path,
        "relations:\n  a:\n    aliases: &words [film, movie]\n  b:\n    aliases: *words\n",
    )
    assert read_schema_file(p)["relations"]["b"]["aliases"] == ["film", "movie"]


def test_deep_nesting_is_an_error_not_a_traceback(tmp_path):
    p = tmp_path / "s.json"
    p.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(GraphFormatError, match=r"s\.json.*nested too deeply"):
        read_schema_file(p)
    p.write_text(json.dumps({"relations": {"r": {"label": [[[[[[[[[[["x"]]]]]]]]]]]}}}))
    with pytest.raises(GraphFormatError, match=r"r\.label"):
        read_schema_file(p)
    y = _yaml(tmp_path, "relations: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(GraphFormatError, match=r"schema\.yaml"):
        read_schema_file(y)


def test_a_non_string_name_is_refused(tmp_path):
    p = _yaml(tmp_path, "relations:\n  12:\n    label: twelve\n")
    with pytest.raises(GraphFormatError, match="not a string"):
        read_schema_file(p)
