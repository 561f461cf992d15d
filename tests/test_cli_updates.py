"""``ark index add / remove / compact``: parse, call one library function, print."""

import json

from typer.testing import CliRunner

from ark.cli import app

runner = CliRunner()
KB = "Forrest Gump|directed_by|Robert Zemeckis\nCast Away|directed_by|Robert Zemeckis\n"


def run(*args, code=0):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result.output


def test_add_remove_compact_round_trip(tmp_path):
    (tmp_path / "kb.txt").write_text(KB)
    (tmp_path / "add.txt").write_text("Big|directed_by|Penny Marshall\n")
    (tmp_path / "gone.txt").write_text("Forrest Gump\n")
    idx = tmp_path / "idx"
    run("index", "build", tmp_path / "kb.txt", "-o", idx, "--json")
    added = json.loads(run("index", "add", idx, tmp_path / "add.txt", "--json"))
    assert (added["added_nodes"], added["added_edges"], added["generation"]) == (2, 1, 1)
    out = json.loads(run("search", idx, "penny marshall", "--json"))
    assert out["results"][0]["name"] == "Penny Marshall"
    removed = json.loads(run("index", "remove", idx, "--nodes", tmp_path / "gone.txt", "--json"))
    assert removed["removed_nodes"] == 1 and removed["counts"]["edges"] == 2
    assert "ok" in run("index", "verify", idx)
    compacted = json.loads(run("index", "compact", idx, "--json"))
    assert compacted["segments_merged"] == 2 and compacted["removed_nodes"] == 1
    info = json.loads(run("info", idx, "--json"))
    assert info["counts"]["nodes"] == 4


def test_bad_input_names_file_and_line(tmp_path):
    (tmp_path / "kb.txt").write_text(KB)
    (tmp_path / "gone.txt").write_text("Cast Away\nNobody\n")
    idx = tmp_path / "idx"
    run("index", "build", tmp_path / "kb.txt", "-o", idx, "--json")
    out = run("index", "remove", idx, "--nodes", tmp_path / "gone.txt", code=1)
    assert "gone.txt:2" in out and "Nobody" in out
    out = run("index", "remove", idx, code=1)
    assert "nothing to remove" in out
