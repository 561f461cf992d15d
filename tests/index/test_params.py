"""BM25 parameters and token patterns are checked where they enter: ``ark index
build``'s options and a ``meta.json`` written by someone else (issue 42, item 7)."""

from __future__ import annotations

import json
import math
import time

import pytest
from typer.testing import CliRunner

from ark.cli import app
from ark.errors import ArkError, IndexFormatError
from ark.index import BM25Params, TokenizerConfig, build_index, open_index
from ark.probes import bm25_problem, token_pattern_problem
from ark.tools import GraphTools

KB = "Alpha Film|directed_by|Gamma\nBeta Film|directed_by|Gamma\n"


@pytest.fixture()
def kb(tmp_path):
    (tmp_path / "kb.txt").write_text(KB)
    return tmp_path / "kb.txt"


BAD = [(math.nan, 0.75), (-1.0, 0.75), (1e308, 0.75), (1.5, math.inf), (1.5, 2.0), (1.5, -5.0)]


@pytest.mark.parametrize(("k1", "b"), BAD)
def test_out_of_range_bm25_parameters_are_refused_at_build(kb, k1, b):
    with pytest.raises(ArkError, match=r"(k1|b) = .* out of range"):
        build_index(kb, kb.parent / "idx", params=BM25Params(k1=k1, b=b))
    assert not (kb.parent / "idx").exists()


def test_the_cli_says_which_parameter(kb):
    result = CliRunner().invoke(
        app, ["index", "build", str(kb), "-o", str(kb.parent / "idx"), "--k1", "nan"]
    )
    assert result.exit_code != 0
    assert "k1 = nan" in result.output


@pytest.mark.parametrize(("k1", "b"), BAD)
def test_a_meta_json_with_bad_parameters_is_refused_naming_the_field(kb, k1, b):
    build_index(kb, kb.parent / "idx")
    meta_file = kb.parent / "idx" / "meta.json"
    meta = json.loads(meta_file.read_text())
    meta["bm25"].update(k1=k1, b=b)
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(IndexFormatError, match=r"meta\.json: bm25: .*out of range"):
        open_index(kb.parent / "idx")


def test_good_parameters_still_find_the_node(kb):
    index = build_index(kb, kb.parent / "idx", params=BM25Params(k1=0.0, b=1.0))
    hits = GraphTools(open_index(index.path)).search_in_graph("Gamma").hits
    assert hits[0].name == "Gamma"


def test_a_token_pattern_with_groups_is_refused(kb):
    with pytest.raises(ArkError, match="capturing group"):
        build_index(kb, kb.parent / "idx", tokenizer=TokenizerConfig(token_pattern=r"(\w)(\w+)"))
    build_index(kb, kb.parent / "idx")
    meta_file = kb.parent / "idx" / "meta.json"
    meta = json.loads(meta_file.read_text())
    meta["tokenizer"]["token_pattern"] = r"(\w)(\w+)"
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(IndexFormatError, match=r"meta\.json.*capturing group"):
        open_index(kb.parent / "idx")


@pytest.mark.slow
@pytest.mark.parametrize("pattern", [r"(?:a+)+b", r"(?:\w|\d)+$"])
def test_a_redos_pattern_in_meta_json_is_refused_in_bounded_time(kb, pattern):
    build_index(kb, kb.parent / "idx")
    meta_file = kb.parent / "idx" / "meta.json"
    meta = json.loads(meta_file.read_text())
    meta["tokenizer"]["token_pattern"] = pattern
    meta_file.write_text(json.dumps(meta))
    started = time.perf_counter()
    with pytest.raises(IndexFormatError, match=r"meta\.json.*(without bound|took over)"):
        open_index(kb.parent / "idx")
    assert time.perf_counter() - started < 30


def test_ordinary_patterns_pass():
    assert token_pattern_problem(r"(?u)\b\w\w+\b") is None
    assert token_pattern_problem(r"(?:\w+(?:-\w+)*)") is None
    assert token_pattern_problem(r"[a-z0-9]+") is None
    assert bm25_problem(1.2, 0.75) is None
