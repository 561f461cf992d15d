"""The runner under faults: bad characters, failing agents, damaged run files."""

import asyncio
import json

import pytest

from _doubles import ScriptedChatModel, prose, tool_call
from ark.datasets import Query
from ark.eval import RetrieverMethod, RunStore, run_queries
from ark.index import build_index
from ark.llm import LLMError
from ark.retrieval import Retriever

KB = """\
Forrest Gump|directed_by|Robert Zemeckis
Cast Away|directed_by|Robert Zemeckis
Forrest Gump|has_genre|Drama
Cast Away|has_genre|Adventure
"""

SURROGATE = "\ud800"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    root = tmp_path_factory.mktemp("kb")
    (root / "kb.txt").write_text(KB)
    return build_index(root / "kb.txt", root / "idx")


def node(index, name):
    return index.graph.names.to_pylist().index(name)


def run(index, out, script, qs, *, agents=1, resume=False, retry_failed=True):
    retriever = Retriever(index, ScriptedChatModel(script), n_agents=agents, max_steps=6)
    config = {"method": "ark", "dataset": "test", "agents": agents}
    method = RetrieverMethod(retriever)
    return asyncio.run(
        run_queries(qs, method, RunStore(out), config, resume=resume, retry_failed=retry_failed)
    )


def test_a_lone_surrogate_from_the_model_is_written_safely(index, tmp_path):
    gump = node(index, "Forrest Gump")
    replies = [
        tool_call("search_in_graph", query=f"Forrest Gump {SURROGATE}"),
        prose(f"thinking {SURROGATE}"),
        tool_call("add_to_answer", node_indices=[gump]),
        tool_call("finish"),
    ]
    qs = [
        Query("q1", f"which film {SURROGATE}?", frozenset({gump})),
        Query("q2", "another", frozenset({gump})),
    ]
    summary = run(index, tmp_path / "run", replies, qs)
    assert summary["queries"] == 2 and summary["failed"] == 0
    raw = (tmp_path / "run" / "results.jsonl").read_bytes()
    records = [json.loads(line) for line in raw.decode("utf-8").splitlines()]  # valid UTF-8
    assert [r["query_id"] for r in records] == ["q1", "q2"]
    assert "\ufffd" in records[0]["query"]
    trajectories = (tmp_path / "run" / "trajectories.jsonl").read_bytes().decode("utf-8")
    assert trajectories.count("\n") == 2
    # ... and resuming the run reads it back.
    again = run(index, tmp_path / "run", replies, qs, resume=True)
    assert again["queries"] == 2


def split_script(index, fail_after_add):
    """Agent 0 finds and answers Forrest Gump; agent 1 adds Cast Away, then its
    backend fails (when ``fail_after_add``) or it finishes too."""
    gump, cast_away = node(index, "Forrest Gump"), node(index, "Cast Away")
    agent_of = {}

    def script(messages):
        who = agent_of.setdefault(id(messages[0]), len(agent_of))
        turn = sum(1 for m in messages if m.role == "assistant")
        target, query = (gump, "Forrest Gump") if who == 0 else (cast_away, "Cast Away")
        plan = [
            tool_call("search_in_graph", query=query),
            tool_call("add_to_answer", node_indices=[target]),
            LLMError("backend gave up") if who == 1 and fail_after_add else tool_call("finish"),
        ]
        return plan[min(turn, 2)]

    return script


def test_a_failed_agent_does_not_vote_but_its_trajectory_is_kept(index, tmp_path):
    cast_away = node(index, "Cast Away")
    qs = [Query("q1", "films", frozenset({cast_away}))]
    summary = run(index, tmp_path / "run", split_script(index, True), qs, agents=2)
    (record,) = [
        json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()
    ]
    assert record["status"] == "ok"  # one agent finished: the query did not fail
    assert record["ranking"] == [node(index, "Forrest Gump")]  # Cast Away was not fused
    assert record["metrics"]["hit@5"] == 0.0 and summary["failed"] == 0
    trajectories = [
        json.loads(x) for x in (tmp_path / "run" / "trajectories.jsonl").read_text().splitlines()
    ]
    assert sorted(t["stop_reason"] for t in trajectories) == ["error", "finish"]
    failed = next(t for t in trajectories if t["stop_reason"] == "error")
    assert failed["answer"] == [cast_away]  # its partial work is recorded


def test_when_every_agent_fails_the_query_is_a_miss_whatever_they_found(index, tmp_path):
    cast_away = node(index, "Cast Away")

    def script(messages):
        turn = sum(1 for m in messages if m.role == "assistant")
        plan = [
            tool_call("search_in_graph", query="Cast Away"),
            tool_call("add_to_answer", node_indices=[cast_away]),
            LLMError("backend gave up"),
        ]
        return plan[min(turn, 2)]

    qs = [Query("q1", "films", frozenset({cast_away}))]
    summary = run(index, tmp_path / "run", script, qs, agents=2)
    assert summary["failed"] == 1 and summary["metrics"]["hit@1"] == 0.0
    lines = (tmp_path / "run" / "trajectories.jsonl").read_text().splitlines()
    assert [json.loads(x)["answer"] for x in lines] == [[cast_away], [cast_away]]


class CountingBM25:
    """BM25 that counts the queries it is asked (to see which were redone)."""

    name = "bm25"

    def __init__(self, index):
        from ark.eval import BM25Method

        self.inner = BM25Method(index)
        self.asked: list[str] = []

    async def __call__(self, question_id, question):
        self.asked.append(question_id)
        return await self.inner(question_id, question)


def bm25_run(index, out, *, resume=False):
    method = CountingBM25(index)
    gump = node(index, "Forrest Gump")
    qs = [Query(f"q{i}", f"Forrest Gump {i}", frozenset({gump})) for i in range(1, 5)]
    config = {"method": "bm25", "dataset": "test"}
    summary = asyncio.run(run_queries(qs, method, RunStore(out), config, resume=resume))
    return summary, method.asked


@pytest.mark.parametrize(
    "damage",
    [
        lambda line: line[:10] + b"\xff\xfe" + line[12:],  # invalid UTF-8
        lambda line: line[: len(line) // 2] + b"\n",  # broken JSON
        lambda line: b"[1, 2]\n",  # JSON, but not a record
    ],
    ids=["invalid-utf8", "broken-json", "not-a-record"],
)
def test_resume_skips_a_damaged_middle_line_and_keeps_the_rest(index, tmp_path, damage):
    out = tmp_path / "run"
    bm25_run(index, out)
    results = out / "results.jsonl"
    lines = results.read_bytes().splitlines(keepends=True)
    original = [json.loads(x) for x in lines]
    lines[1] = damage(lines[1])
    results.write_bytes(b"".join(lines))
    summary, asked = bm25_run(index, out, resume=True)
    assert asked == [original[1]["query_id"]]  # only the damaged query is redone
    records = [json.loads(x) for x in results.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["query_id"] for r in records) == ["q1", "q2", "q3", "q4"]
    assert records[1:3] == original[2:4]  # the later records were kept, not redone
    assert summary["damaged_lines"] == [["results.jsonl", 2]]
    assert (out / "results.jsonl.bad").read_bytes() == lines[1]


def test_report_skips_damaged_lines_and_draws_without_matplotlib(index, tmp_path, monkeypatch):
    import sys

    from ark.eval.report import write_report

    out = tmp_path / "run"
    run(index, out, [tool_call("search_in_graph", query="Forrest Gump")], [
        Query("q1", "films", frozenset({node(index, "Forrest Gump")}))
    ])  # fmt: skip
    with (out / "trajectories.jsonl").open("ab") as f:
        f.write(b'{"schema_version": 1, "query": "\xff broken\n')
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the extra were missing
    text = write_report([out], tmp_path / "report")
    assert "trajectories.jsonl: skipped damaged line(s) [2]" in text
    assert "plots skipped: matplotlib is not installed" in text
    written = {p.name for p in (tmp_path / "report").iterdir()}
    assert {"comparison.csv", "tool_use.csv", "report.md"} <= written
    assert not any(name.endswith(".png") for name in written)


def answer_gump(index):
    gump = node(index, "Forrest Gump")
    plan = [
        tool_call("search_in_graph", query="Forrest Gump"),
        tool_call("add_to_answer", node_indices=[gump]),
        tool_call("finish"),
    ]
    return lambda messages: plan[min(sum(m.role == "assistant" for m in messages), 2)]


def gump_queries(index, n=3):
    gump = node(index, "Forrest Gump")
    return [Query(f"q{i}", f"film {i}", frozenset({gump})) for i in range(1, n + 1)]


def test_resume_redoes_failed_queries_unless_told_not_to(index, tmp_path):
    out = tmp_path / "run"
    qs = gump_queries(index)

    def flaky(messages):  # the backend is down for q2
        if "film 2" in messages[1].content:
            return LLMError("backend down")
        return answer_gump(index)(messages)

    first = run(index, out, flaky, qs, agents=2)
    assert first["failed"] == 1
    kept = run(index, out, answer_gump(index), qs, agents=2, resume=True, retry_failed=False)
    assert kept["failed"] == 1 and "redone" not in kept
    again = run(index, out, answer_gump(index), qs, agents=2, resume=True)
    assert again["failed"] == 0 and again["metrics"]["hit@1"] == 100.0
    assert again["redone"] == {"failed": 1, "missing_trajectories": 0}
    records = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [r["query_id"] for r in records] == ["q1", "q3", "q2"]
    assert all(r["status"] == "ok" for r in records)
    trajectories = [json.loads(x) for x in (out / "trajectories.jsonl").read_text().splitlines()]
    assert sorted(t["id"] for t in trajectories) == sorted(
        i for r in records for i in r["trajectory_ids"]
    )
    # The failed attempt is kept aside, not lost.
    (old,) = [json.loads(x) for x in (out / "results.jsonl.redone").read_text().splitlines()]
    assert old["query_id"] == "q2" and old["status"] == "failed"
    assert (out / "trajectories.jsonl.redone").read_text().count("\n") == 2


@pytest.mark.parametrize("damage", ["cut-tail", "deleted", "damaged-line"])
def test_resume_redoes_queries_whose_trajectories_are_missing(index, tmp_path, damage):
    out = tmp_path / "run"
    qs = gump_queries(index)
    run(index, out, answer_gump(index), qs, agents=2)
    path = out / "trajectories.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(lines) == 6
    if damage == "cut-tail":  # the last trajectory (q3's) is cut in the middle
        path.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
        expected = 1
    elif damage == "deleted":
        path.unlink()
        expected = 3
    else:  # q1's first trajectory is damaged in the middle of the file
        lines[0] = lines[0][:10] + b"\xff" + lines[0][11:]
        path.write_bytes(b"".join(lines))
        expected = 1
    summary = run(index, out, answer_gump(index), qs, agents=2, resume=True)
    assert summary["redone"] == {"failed": 0, "missing_trajectories": expected}
    records = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(r["query_id"] for r in records) == ["q1", "q2", "q3"]
    trajectories = [json.loads(x) for x in path.read_text().splitlines()]
    assert sorted(t["id"] for t in trajectories) == sorted(
        i for r in records for i in r["trajectory_ids"]
    )
    assert len(trajectories) == 6 and summary["metrics"]["hit@1"] == 100.0
