"""``benchmarks/RESULTS.md`` is the page ``benchmarks/make_results.py`` writes from the
stored result files: current, short, and every table saying where it comes from."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _make_results():
    spec = importlib.util.spec_from_file_location(
        "make_results", REPO / "benchmarks" / "make_results.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_results = _make_results()


def test_the_page_is_what_the_result_files_give():
    """A hand edit of RESULTS.md, or a result file added without rendering, fails."""
    page = (REPO / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    assert page == make_results.render_page(), "run python benchmarks/make_results.py"


def test_the_page_is_short_and_holds_no_session_history():
    page = (REPO / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    assert len(page.splitlines()) <= 500
    headings = [line for line in page.splitlines() if line.startswith("#")]
    assert not [h for h in headings if "ession" in h or "stop " in h or "issue" in h.lower()]


def test_every_table_says_where_it_comes_from():
    results, machines = make_results.load_results()
    assert results
    page = make_results.render_page()
    for name, result in results:
        where = f"Commit `{result['commit']}` · {result['date']}"
        assert where in page, name
        assert machines[result["machine"]] in page


@pytest.fixture
def results_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "results"
    shutil.copytree(REPO / "benchmarks" / "results", folder)
    return folder


def _edit(folder: Path, change) -> str:
    path = sorted(p for p in folder.glob("*.json") if p.name != "machines.json")[0]
    result = json.loads(path.read_text(encoding="utf-8"))
    change(result)
    path.write_text(json.dumps(result), encoding="utf-8")
    return path.name


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.pop("commit"), "missing commit"),
        (lambda r: r.pop("seeds"), "missing seeds"),
        (lambda r: r.update(machine="a laptop"), "is not in machines.json"),
        (lambda r: r.update(commit="the latest"), "is not a commit id"),
        (lambda r: r.update(date="yesterday"), "is not YYYY-MM-DD"),
        (lambda r: r["rows"][0].append("x"), "cells, the header"),
        (lambda r: r.update(command="python /work/x/bench.py"), "absolute path"),
        (lambda r: r.update(record="benchmarks/records/none.tgz"), "does not exist"),
        (lambda r: r.update(comment="x"), "unknown keys comment"),
    ],
)
def test_a_result_file_without_its_provenance_is_refused_by_name(results_copy, change, message):
    name = _edit(results_copy, change)
    with pytest.raises(make_results.ResultError, match=message) as caught:
        make_results.render_page(results_copy)
    assert str(caught.value).startswith(name)


def test_a_malformed_result_file_is_named_with_its_line(results_copy):
    (results_copy / "99-broken.json").write_text('{\n "section": "x",\n}\n', encoding="utf-8")
    with pytest.raises(make_results.ResultError, match=r"^99-broken.json: line 3"):
        make_results.render_page(results_copy)


def test_check_fails_on_a_stale_page(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "RESULTS.md"
    stale.write_text(make_results.render_page() + "\nedited by hand\n", encoding="utf-8")
    monkeypatch.setattr(make_results, "PAGE", stale)
    readme = tmp_path / "README.md"
    shutil.copy(REPO / "README.md", readme)
    monkeypatch.setattr(make_results, "README", readme)
    assert make_results.main(["--check"]) == 1
    assert "is not what benchmarks/results/ gives" in capsys.readouterr().err
    monkeypatch.setattr(make_results, "PAGE", tmp_path / "new.md")
    assert make_results.main([]) == 0
    assert make_results.main(["--check"]) == 0
    readme.write_text(readme.read_text(encoding="utf-8").replace("| MetaQA", "| Meta", 1))
    assert make_results.main(["--check"]) == 1
    assert "README.md is not" in capsys.readouterr().err
    assert make_results.main([]) == 0
    assert make_results.main(["--check"]) == 0


def test_tables_align_numbers_right_and_escape_pipes():
    lines = make_results.render_table(
        {"columns": ["set", "Hit@1", "note"], "rows": [["a|b", "**93.3** (90)", 3], ["c", "—", 4]]}
    )
    assert lines[0] == "| set | Hit@1 | note |"
    assert lines[1] == "|---|---:|---:|"
    assert lines[2] == "| a\\|b | **93.3** (90) | 3 |"


def test_the_readme_table_is_what_the_result_files_give():
    """The README's results table is written from the files too: a hand edit fails."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = make_results.render_readme_table()
    assert make_results.with_readme_table(readme, table) == readme
    assert "| set |" in table and "Commit `" in table
    edited = readme.replace(table.splitlines()[2], "| MetaQA 1-hop | 30 | 0 | **100.0** |")
    assert make_results.with_readme_table(edited, table) != edited


def test_readme_columns_must_exist_and_the_markers_be_there(results_copy):
    name = _edit(results_copy, lambda r: r.update(readme=["set", "no such column"]))
    with pytest.raises(make_results.ResultError, match=r"readme names columns it lacks"):
        make_results.render_page(results_copy)
    assert name
    with pytest.raises(make_results.ResultError, match=r"README\.md: the lines"):
        make_results.with_readme_table("# no markers\n", "| a |\n")
