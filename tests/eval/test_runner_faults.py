"""The runner under faults: bad characters, failing agents, damaged run files."""

import asyncio
import json

import pytest

from _doubles import ScriptedChatModel, prose, tool_call
from ark.agent import Retriever
from ark.eval import Query, RetrieverMethod, RunStore, run_queries
from ark.index import build_index

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


def run(index, out, script, qs, *, agents=1, resume=False):
    retriever = Retriever(index, ScriptedChatModel(script), n_agents=agents, max_steps=6)
    config = {"method": "ark", "dataset": "test", "agents": agents}
    return asyncio.run(
        run_queries(qs, RetrieverMethod(retriever), RunStore(out), config, resume=resume)
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
