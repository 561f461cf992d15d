"""``--strategy`` on ark ask and ark eval: graphsearch through the CLI against a fake
OpenAI-compatible server, its defaults, and the combinations that are refused."""

import json

import pytest
from typer.testing import CliRunner

from _helpers import node
from ark.cli import app
from ark.index import Index, open_index
from ark.session import Part, ToolSession
from ark.strategies import ChainHints
from ark.tools import ToolConfig

runner = CliRunner()


def run(*args, code=0):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result


def structured_replies(index):
    """What a server answers GraphSearch's calls with, in order, for a one-hop question."""
    from fake_openai import chat_reply

    plan = {
        "semantic": ["Which films did Tom Hanks act in?"],
        "relational": [{"subject": "#1", "relation": "starred_actors", "object": "Tom Hanks"}],
    }
    replies = [
        plan,
        {"keep": []},  # S1 refinement: nothing fits
        {"keep": []},  # R1 refinement: nothing, so the edges' nodes stay
        {"chain": "Tom Hanks starred in them.", "answer": []},
        {"verdict": "yes", "missing": ""},
        {"answerable": True, "answer": "Big, among others", "citations": []},  # the answer
    ]
    return [(200, chat_reply(json.dumps(r))) for r in replies]


def test_ask_with_graphsearch_runs_one_workflow_by_default(metaqa_index, monkeypatch):
    pytest.importorskip("openai")
    from fake_openai import FakeOpenAIServer

    replies = structured_replies(metaqa_index)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer(replies) as server:
        out = run(
            "ask", metaqa_index.path, "what films did [Tom Hanks] act in",
            "--strategy", "graphsearch", "--base-url", server.base_url,
            "--model", "fake-model", "--json",
        )  # fmt: skip
    data = json.loads(out.output)
    assert len(data["trajectories"]) == 1  # --agents defaults to 1 for graphsearch
    traj = data["trajectories"][0]
    assert traj["config"]["strategy"] == "graphsearch" and traj["stop_reason"] == "finish"
    assert traj["steps"][0]["module"] == "query_decomposition"
    assert all("response_format" in r and "tools" not in r for r in server.requests)
    films = {r["name"] for r in data["ranking"]}
    assert "Big" in films and len(films) >= 10  # the starred_actors neighborhood
    # Retrieval only: the workflow records its answer basis and writes no answer.
    assert len(server.requests) == 5 and "answer" not in data
    assert traj["graphsearch"]["answer"] is None and traj["graphsearch"]["answer_basis"]


def test_ask_answer_with_graphsearch_writes_the_workflows_answer(metaqa_index, monkeypatch):
    """``--answer``: the pipeline writes GraphSearch's answer from its basis, in one call
    whatever ``--writer`` says, recorded as the workflow's last step."""
    pytest.importorskip("openai")
    from fake_openai import FakeOpenAIServer

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer(structured_replies(metaqa_index)) as server:
        out = run(
            "ask", metaqa_index.path, "what films did [Tom Hanks] act in",
            "--strategy", "graphsearch", "--base-url", server.base_url,
            "--model", "fake-model", "--json", "--answer",
        )  # fmt: skip
    data = json.loads(out.output)
    traj = data["trajectories"][0]
    assert len(server.requests) == 6
    assert data["answer"]["text"] == traj["graphsearch"]["answer"]["text"] == "Big, among others"
    assert traj["steps"][-1]["module"] == "answer_generation"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--method", "bm25", "--strategy", "graphsearch"], "needs --method ark"),
        (["--strategy", "nope"], "unknown --strategy"),
    ],
)
def test_eval_refuses_strategy_combinations(metaqa_index, tmp_path, args, message):
    out = run(
        "eval", "--dataset", "metaqa:1-hop", "--index", metaqa_index.path,
        "--out", tmp_path / "run", *args, code=1,
    )  # fmt: skip
    assert message in out.output
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_eval_records_the_strategy_in_the_run_config(metaqa_index, tmp_path, monkeypatch):
    pytest.importorskip("openai")
    from fake_openai import FakeOpenAIServer

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    data_dir = tmp_path / "mq"
    (data_dir / "1-hop").mkdir(parents=True)
    (data_dir / "1-hop" / "qa_dev.txt").write_text("what films did [Tom Hanks] act in\tBig\n")
    replies = structured_replies(metaqa_index)
    with FakeOpenAIServer(replies) as server:
        run(
            "eval", "--dataset", "metaqa:1-hop", "--index", metaqa_index.path,
            "--data-dir", data_dir, "--out", tmp_path / "run", "--strategy", "graphsearch",
            "--base-url", server.base_url, "--model", "fake-model",
        )  # fmt: skip
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["strategy"] == "graphsearch" and config["agents"] == 1
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["metrics"]["recall@20"] > 0  # Big is among Tom Hanks's films


@pytest.mark.slow
def test_ask_with_the_guided_strategy_sends_the_set_tool_and_hints(metaqa_index, monkeypatch):
    pytest.importorskip("openai")
    from fake_openai import FakeOpenAIServer, chat_reply, function_call

    hanks = node(metaqa_index, "Tom Hanks")
    calls = [
        # Found first: ark-guided explores only from a node a result has shown.
        ("search_in_graph", {"query": "Tom Hanks"}),
        ("search_in_neighborhood", {"node_index": hanks, "edge_type": "starred_actors"}),
        ("finish", {}),
        ("finish", {}),
    ]
    replies = [
        (200, chat_reply(tool_calls=[function_call(n, json.dumps(a), f"call_{i}")]))
        for i, (n, a) in enumerate(calls)
    ]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer(replies) as server:
        out = run(
            "ask", metaqa_index.path, "which genres are the films starred by Tom Hanks",
            "--strategy", "ark-guided", "--agents", "1", "--base-url", server.base_url,
            "--model", "fake-model", "--json",
        )  # fmt: skip
    traj = json.loads(out.output)["trajectories"][0]
    assert traj["config"]["strategy"] == "ark-guided"
    tool = next(t for t in server.requests[0]["tools"] if t["function"]["name"].endswith("hood"))
    assert "array" in json.dumps(tool["function"]["parameters"]["properties"]["node_index"])
    first = [m["content"] for m in traj["messages"] if m["role"] == "tool"][1]
    hint = _hint_after(metaqa_index, traj["query"], calls[:2])
    assert hint.call is not None and hint.call.arguments["edge_type"] == "has_genre"
    assert first.endswith(hint.render())  # the model read it


def test_demo_refuses_an_unknown_strategy_before_building_or_loading(tmp_path, monkeypatch):
    monkeypatch.setenv("ARK_CACHE_DIR", str(tmp_path / "cache"))
    out = run("demo", "--strategy", "nope", code=1)
    assert "unknown --strategy 'nope'" in out.output and "ark-guided" in out.output
    assert not (tmp_path / "cache" / "demo").exists()  # no index built, no model loaded


@pytest.mark.slow
def test_demo_runs_the_guided_strategy_by_default(tmp_path, monkeypatch):
    """The demo runs a small local model, for which ark-guided is measured best; the
    first global search already carries its hint."""
    pytest.importorskip("openai")
    from ark.index import build_index
    from fake_openai import FakeOpenAIServer, chat_reply, function_call

    monkeypatch.setenv("ARK_CACHE_DIR", str(tmp_path / "cache"))
    kb = tmp_path / "kb.txt"  # a small demo index in place, so the demo does not build one
    kb.write_text("Forrest Gump|directed_by|Robert Zemeckis\nForrest Gump|has_genre|Drama\n")
    build_index(kb, tmp_path / "cache" / "demo" / "metaqa.idx")
    calls = [("search_in_graph", {"query": "Robert Zemeckis"}), ("finish", {}), ("finish", {})]
    replies = [
        (200, chat_reply(tool_calls=[function_call(n, json.dumps(a), f"call_{i}")]))
        for i, (n, a) in enumerate(calls)
    ]
    with FakeOpenAIServer(replies) as server:
        out = run("demo", "--base-url", server.base_url, "--model", "fake-model", "--json")
    traj = json.loads(out.output)["trajectories"][0]
    assert traj["config"]["strategy"] == "ark-guided"
    first = next(m["content"] for m in traj["messages"] if m["role"] == "tool")
    index = open_index(tmp_path / "cache" / "demo" / "metaqa.idx")
    hint = _hint_after(index, traj["query"], calls[:1])
    assert hint.call is not None and hint.call.arguments["edge_type"] == "directed_by"
    assert first.endswith(hint.render())  # the first global search carries its hint


def _hint_after(index: Index, question: str, calls: list[tuple[str, dict]]) -> Part:
    """The hint ``ark-guided``'s session gives after ``calls``, replayed."""
    hints = ChainHints(index, question)
    session = ToolSession(
        index,
        config=ToolConfig(multi_neighborhood=True),
        observers=[hints],
        refuse_unseen=True,
    )
    for name, arguments in calls:
        session.call(name, arguments)
    assert hints.last_part is not None
    return hints.last_part
