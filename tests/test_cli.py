"""The ark command line on the real MetaQA index, and ark ask against a fake server."""

import json

import pytest
from typer.testing import CliRunner

from ark.cli import app

runner = CliRunner()


def run(*args, code=0):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result


def test_info_json(metaqa_index):
    data = json.loads(run("info", metaqa_index.path, "--json").output)
    assert data["counts"]["nodes"] == 43_234
    assert {t["name"] for t in data["node_types"]} >= {"movie", "person", "genre"}
    assert any(
        r["name"] == "directed_by" and r["target_type"] == "person" for r in data["relations"]
    )


def test_search_and_neighbors_json(metaqa_index):
    data = json.loads(run("search", metaqa_index.path, "Forrest Gump", "-k", "3", "--json").output)
    film = data["results"][0]
    assert film["name"] == "Forrest Gump" and len(data["results"]) == 3
    out = run("neighbors", metaqa_index.path, film["index"], "--edge-type", "directed_by", "--json")
    data = json.loads(out.output)
    assert [r["name"] for r in data["results"]] == ["Robert Zemeckis"]
    assert data["results"][0]["relations"] == [{"type": "directed_by", "direction": "out"}]
    out = run(
        "neighbors", metaqa_index.path, film["index"], "--node-type", "person",
        "--node-type", "genre", "-k", "50", "--json",
    )  # fmt: skip
    assert {r["type"] for r in json.loads(out.output)["results"]} == {"person", "genre"}


def test_text_output(metaqa_index):
    assert "Tom Hanks" in run("search", metaqa_index.path, "Tom Hanks").output
    assert "directed_by" in run("info", metaqa_index.path).output


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["neighbors", "IDX", "99999999"], "unknown_node"),
        (["neighbors", "IDX", "0", "--node-type", "persn"], "unknown_node_type"),
        (["neighbors", "IDX", "0", "--edge-type", "wrote"], "unknown_edge_type"),
        (["search", "IDX", ""], "empty_query"),
        (["search", "IDX", "x", "-k", "0"], "bad_k"),
    ],
)
def test_bad_calls_give_a_json_error_and_exit_1(metaqa_index, args, code):
    args = [metaqa_index.path if a == "IDX" else a for a in args]
    result = run(*args, "--json", code=1)
    assert json.loads(result.output)["error"]["code"] == code


def test_missing_index_is_refused(tmp_path):
    result = run("search", tmp_path / "nope", "x", "--json", code=1)
    assert "ark index build" in json.loads(result.output)["error"]["message"]


def test_build_reports_bad_input_with_file_and_line(tmp_path):
    kb = tmp_path / "kb.txt"
    kb.write_text("a|r|b\nbroken line\n")
    result = run("index", "build", kb, "-o", tmp_path / "idx", "--json", code=1)
    assert "kb.txt:2" in json.loads(result.output)["error"]["message"]


def zemeckis_replies(index):  # type: ignore[no-untyped-def]
    """A served model's replies that find Robert Zemeckis, add him and finish; his
    node index."""
    from fake_openai import chat_reply, function_call

    zemeckis = index.graph.names.to_pylist().index("Robert Zemeckis")
    calls = [
        ("search_in_graph", '{"query": "Robert Zemeckis"}'),
        ("add_to_answer", f'{{"node_indices": [{zemeckis}]}}'),
        ("finish", "{}"),
    ]
    return zemeckis, [(200, chat_reply(tool_calls=[function_call(n, a)])) for n, a in calls]


def test_ask_against_an_openai_compatible_server(metaqa_index, tmp_path, monkeypatch):
    pytest.importorskip("openai", reason="the [openai] extra is not installed")
    from fake_openai import FakeOpenAIServer

    zemeckis, replies = zemeckis_replies(metaqa_index)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer(replies) as server:
        result = run(
            "ask", metaqa_index.path, "who directed Forrest Gump", "--agents", "1",
            "--base-url", server.base_url, "--model", "fake-model", "--json",
            "--save-trajectories", tmp_path / "traj",
        )  # fmt: skip
    data = json.loads(result.output)
    assert data["ranking"] == [
        {"index": zemeckis, "name": "Robert Zemeckis", "type": "person", "votes": 1}
    ]
    assert data["trajectories"][0]["stop_reason"] == "finish"
    assert (tmp_path / "traj" / "trajectories.jsonl").read_text().count("\n") == 1


def test_text_output_keeps_square_brackets(tmp_path):
    # Rich would read "[REC]" or "[edge_type=...]" as markup and drop it.
    kb = tmp_path / "kb.txt"
    kb.write_text("[REC]|directed_by|Jaume Balagueró\n[REC]|has_genre|Horror\n")
    run("index", "build", kb, "-o", tmp_path / "idx")
    assert "[REC]" in run("search", tmp_path / "idx", "rec").output
    out = run("neighbors", tmp_path / "idx", "0", "--edge-type", "directed_by").output
    assert "[edge_type=directed_by]" in out and "Jaume" in out


def test_help_texts_keep_the_extras_names_rich_would_read_as_markup():
    """``[dense]`` is Rich markup to Typer's help: it printed "needs ." (issue 66)."""
    wide = {"COLUMNS": "200"}
    embed = CliRunner().invoke(app, ["index", "embed", "--help"], env=wide).output
    collect = CliRunner().invoke(app, ["distill", "collect", "--help"], env=wide).output
    assert "[dense] extra" in embed and "[ray] extra" in collect


def test_info_lists_the_most_used_relations_unless_all(tmp_path):
    """A graph from documents has thousands of relation phrases (issue 66)."""
    from ark.index import build_index
    from ark.probes import INFO_RELATIONS

    lines = [f"A{i}|rel_{i:03d}|B{i}" for i in range(INFO_RELATIONS + 10)]
    lines += ["A0|rel_000|C0"] * 1 + ["A1|rel_000|C1"]
    (tmp_path / "kb.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    build_index(tmp_path / "kb.txt", tmp_path / "idx")
    wide = {"COLUMNS": "200"}
    short = CliRunner().invoke(app, ["info", str(tmp_path / "idx")], env=wide).output
    full = CliRunner().invoke(app, ["info", str(tmp_path / "idx"), "--all"], env=wide).output
    assert "rel_000" in short and "10 relations more" in short
    assert short.count("rel_0") == INFO_RELATIONS
    assert full.count("rel_0") == INFO_RELATIONS + 10 and "more" not in full


def test_a_documents_folder_given_as_an_index_is_never_advised_as_an_output(tmp_path):
    """The first hour: `ark search notes/` on the user's own documents suggested
    building an index *over that folder*."""
    from typer.testing import CliRunner

    from ark.cli import app

    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# A\nAnts dig.\n")
    result = CliRunner().invoke(app, ["search", str(tmp_path / "notes"), "ants"])
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert "is not an ARK index" in said and "ark ingest DOCS -o INDEX" in said
    assert f"-o {tmp_path / 'notes'}" not in said


def test_ask_writes_each_step_as_it_goes_and_keeps_them_when_interrupted(
    metaqa_index, tmp_path, monkeypatch
):
    """A killed `ark ask --save-trajectories` lost every step (issue 66): each tool
    call is now a line of DIR/steps.PID.partial.jsonl as it happens, removed once the
    whole trajectories are written, kept (and named) when the run is interrupted."""
    pytest.importorskip("openai", reason="the [openai] extra is not installed")
    import ark.retrieval as retrieval_api
    from ark.strategies import AgentEvent
    from fake_openai import FakeOpenAIServer

    _, replies = zemeckis_replies(metaqa_index)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    seen: list[list[dict]] = []
    real = retrieval_api.Retriever.retrieve

    def watching(self, question, **kw):
        result = real(self, question, **kw)
        partial = list((tmp_path / "traj").glob("steps.*.partial.jsonl"))
        seen.append([json.loads(x) for x in partial[0].read_text().splitlines()])
        return result

    monkeypatch.setattr(retrieval_api.Retriever, "retrieve", watching)
    with FakeOpenAIServer(replies) as server:
        args = ["ask", metaqa_index.path, "who directed Forrest Gump", "--agents", "1",
                "--base-url", server.base_url, "--model", "fake-model",
                "--save-trajectories", tmp_path / "traj"]  # fmt: skip
        run(*args)
    assert [s["tool"] for s in seen[0]] == ["search_in_graph", "add_to_answer", "finish"]
    assert seen[0][0]["query"] == "who directed Forrest Gump" and seen[0][0]["by"] == "model"
    assert not list((tmp_path / "traj").glob("steps.*"))  # written whole: the log is gone

    def interrupted(self, question, **kw):
        self.on_event(AgentEvent(0, 0, "search_in_graph", {"query": "x"}, True, "…"))
        raise KeyboardInterrupt

    monkeypatch.setattr(retrieval_api.Retriever, "retrieve", interrupted)
    result = run(*args, code=130)
    (kept,) = (tmp_path / "traj").glob("steps.*.partial.jsonl")
    assert json.loads(kept.read_text())["tool"] == "search_in_graph"
    assert "every step taken is in" in " ".join(result.output.split())
