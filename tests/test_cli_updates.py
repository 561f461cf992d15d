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


def test_sync_applies_what_changed_in_the_source_then_nothing(tmp_path):
    kb = tmp_path / "kb.txt"
    kb.write_text(KB)
    idx = tmp_path / "idx"
    run("index", "build", kb, "-o", idx, "--json")
    kb.write_text("Forrest Gump|directed_by|Robert Zemeckis\nBig|directed_by|Penny Marshall\n")
    report = json.loads(run("index", "sync", kb, idx, "--json"))
    assert (report["added_nodes"], report["removed_nodes"]) == (2, 1)  # Big, Penny; Cast Away
    assert (report["added_edges"], report["removed_edges"]) == (1, 1)
    out = run("index", "sync", kb, idx)
    assert "nothing to change" in " ".join(out.split())
    assert json.loads(run("info", idx, "--json"))["counts"]["nodes"] == 4


def test_an_add_that_brings_nothing_new_commits_nothing_and_says_so(tmp_path):
    """Tables naming a node the index has, and no edge, link to it and add nothing."""
    (tmp_path / "kb.txt").write_text(KB)
    idx = tmp_path / "idx"
    run("index", "build", tmp_path / "kb.txt", "-o", idx, "--json")
    same = tmp_path / "same"
    same.mkdir()
    (same / "nodes.csv").write_text("id,name,type\n0,Cast Away,movie\n")
    (same / "edges.csv").write_text("from,to,type\n")
    out = " ".join(run("index", "add", idx, same).split())
    assert "nothing to change" in out and "Segment None" not in out
    report = json.loads(run("index", "add", idx, same, "--json"))
    assert report["unchanged"] and report["generation"] == 0


def test_database_options_are_checked_before_anything_is_read(tmp_path):
    out = run("index", "build", "postgresql:///kb", "-o", tmp_path / "i", "--column", "x=y", code=1)
    assert "KEY one of" in out
    out = run("index", "build", "postgresql://me:pw@localhost/kb", "-o", tmp_path / "i", code=1)
    assert "PGPASSWORD" in out and "pw" not in out.replace("PGPASSWORD", "")


def test_every_listing_line_is_its_docstring_first_paragraph_unbroken():
    from ark.cli import app as root

    def commands(group):
        yield from group.registered_commands
        for sub in group.registered_groups:
            yield from commands(sub.typer_instance)

    listed = list(commands(root))
    assert len(listed) > 20
    for command in listed:
        assert command.short_help and "\n" not in command.short_help, command.name
