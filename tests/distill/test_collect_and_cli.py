"""Label-free collection (resumable, gold never read) and the `ark distill` commands."""

import json

import pytest
from typer.testing import CliRunner

from _doubles import ScriptedChatModel, tool_call
from ark.cli import app
from ark.distill.collect import Question, collect, read_questions
from ark.trajectory import read_trajectories

runner = CliRunner()


def teacher():
    """Searches for the question's last word and finishes with the first hit."""

    def script(messages):
        turn = sum(m.role == "assistant" for m in messages)
        if turn == 0:
            return tool_call("search_in_graph", query=messages[1].content.split()[-1], k=3)
        if turn == 1:
            obs = messages[-1].content.splitlines()[1]
            return tool_call("add_to_answer", node_indices=[int(obs[1 : obs.index("]")])])
        return tool_call("finish")

    return ScriptedChatModel(script, name="teacher-double")


def test_collect_runs_each_query_three_times_and_resumes(movie_index, tmp_path):
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(
        "\n".join(
            json.dumps(q)
            for q in [
                {"id": "a", "query": "films by Zemeckis", "answer_ids": [999999]},
                {"id": "b", "query": "films with Hanks"},
                {"id": "c", "query": "films by Marshall"},
            ]
        )
    )
    qs = read_questions(qfile)
    assert [q.id for q in qs] == ["a", "b", "c"]
    out = tmp_path / "run"
    first = collect(qs[:2], movie_index, teacher(), out)
    assert first["trajectories"] == 6 and first["failed"] == 0
    with pytest.raises(Exception, match="resume"):
        collect(qs, movie_index, teacher(), out)
    summary = collect(qs, movie_index, teacher(), out, resume=True)
    assert summary["queries"] == 3 and summary["trajectories"] == 9
    trajs = list(read_trajectories(out / "trajectories.jsonl"))
    assert sorted(t.question_id for t in trajs) == ["a"] * 3 + ["b"] * 3 + ["c"] * 3
    assert all(t.answer and t.stop_reason == "finish" for t in trajs)
    records = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert all("metrics" not in r and "gold" not in r for r in records)
    assert summary["tokens_per_query"] >= 0


def test_questions_file_errors_name_the_line(tmp_path):
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"id": "a", "query": "x"}\n{"id": "b"}\n')
    with pytest.raises(Exception, match=r"q\.jsonl:2"):
        read_questions(bad)


@pytest.mark.slow
def test_synthesize_sets_the_share_of_intersections(movie_index, tmp_path):
    """--intersections 1 with one-hop paths: every path meets two anchors (where the
    graph has such a meeting; the default, 0.1, makes mostly chains)."""
    base = ["distill", "synthesize", str(movie_index.path), "--n", "6", "--hops", "1", "--json"]
    res = runner.invoke(app, [*base, "-o", str(tmp_path / "all"), "--intersections", "1"])
    assert res.exit_code == 0, res.output
    by_kind = json.loads(res.stdout)["by_kind"]
    assert by_kind.get("1-hop intersection", 0) > by_kind.get("1-hop", 0)
    res = runner.invoke(app, [*base, "-o", str(tmp_path / "none"), "--intersections", "0"])
    assert json.loads(res.stdout)["by_kind"] == {"1-hop": 6}
    bad = runner.invoke(app, [*base, "-o", str(tmp_path / "bad"), "--intersections", "2"])
    assert bad.exit_code != 0 and "--intersections" in bad.stdout


@pytest.mark.slow
def test_synthesize_and_sft_commands(movie_index, tiny_model_dir, tmp_path):
    out = tmp_path / "synth"
    args = ["distill", "synthesize", str(movie_index.path), "-o", str(out), "--n", "6"]
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    stats = json.loads(res.stdout)
    assert stats["trajectories"] == 6 and sum(stats["by_kind"].values()) == 6
    assert [p.name for p in out.iterdir()] == ["trajectories.jsonl"]
    again = runner.invoke(app, [*args, "--json"])
    assert again.exit_code == 1 and "exists" in again.stdout
    res = runner.invoke(
        app,
        [
            "distill",
            "sft",
            str(out),
            "--index",
            str(movie_index.path),
            "--base",
            str(tiny_model_dir),
            "-o",
            str(tmp_path / "sft.jsonl"),
            "--max-tokens",
            "100000",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["counts"]["kept"] == 6


def test_adapter_with_a_remote_model_is_refused(movie_index, tmp_path):
    fake = tmp_path / "a.gguf"
    fake.write_bytes(b"GGUF")
    res = runner.invoke(
        app,
        [
            "ask",
            str(movie_index.path),
            "q",
            "--adapter",
            str(fake),
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--json",
        ],
    )
    assert res.exit_code == 1 and "--adapter" in res.stdout


def test_the_student_runs_with_its_prompt_variant(movie_index):
    from ark.retrieval import Retriever
    from ark.strategies import system_prompt
    from ark.tools import ToolConfig

    result = Retriever(movie_index, teacher(), n_agents=1, max_steps=5, prompt="short").retrieve(
        "films by Zemeckis"
    )
    (t,) = result.trajectories
    assert t.messages[0]["content"] == system_prompt(movie_index.schema, ToolConfig(), 5, "short")
    assert t.config["prompt"] == "short"
    full = Retriever(movie_index, teacher(), n_agents=1, max_steps=5).retrieve("films by Zemeckis")
    assert full.trajectories[0].messages[0]["content"] != t.messages[0]["content"]
    assert len(t.messages[0]["content"]) < len(full.trajectories[0].messages[0]["content"]) / 2


def test_collect_resume_redoes_failed_queries_and_a_locked_out_is_refused(movie_index, tmp_path):
    from ark.eval import RunLockedError
    from ark.llm import LLMError
    from ark.probes import RunLock

    qs = [Question("a", "films by Zemeckis"), Question("b", "films with Hanks")]
    good = teacher()

    def down_for_b(messages):
        if "Hanks" in messages[1].content:
            return LLMError("teacher down")
        return good._script(messages)

    out = tmp_path / "run"
    first = collect(qs, movie_index, ScriptedChatModel(down_for_b, name=good.name), out)
    assert first["failed"] == 1 and "redone" not in first
    holder = RunLock(out)
    holder.acquire()
    with pytest.raises(RunLockedError, match="in use by process"):
        collect(qs, movie_index, teacher(), out, resume=True)
    holder.release()
    kept = collect(qs, movie_index, teacher(), out, resume=True, retry_failed=False)
    assert kept["failed"] == 1
    again = collect(qs, movie_index, teacher(), out, resume=True)
    assert again["failed"] == 0 and again["redone"] == {"failed": 1, "missing_trajectories": 0}
    assert again["trajectories"] == 6
    trajs = list(read_trajectories(out / "trajectories.jsonl"))
    assert sorted(t.question_id for t in trajs) == ["a"] * 3 + ["b"] * 3
