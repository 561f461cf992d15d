"""``ark chat`` driven as a user would: a pseudo-terminal, typed lines, the up arrow,
against a scripted OpenAI-compatible server."""

from __future__ import annotations

import os
import sys

import pytest

pytest.importorskip("prompt_toolkit", reason="the [serve] extra is not installed")
pytest.importorskip("openai", reason="the [openai] extra is not installed")
pexpect = pytest.importorskip("pexpect", reason="pexpect is not installed")

from _helpers import REPO, node  # noqa: E402
from ark.serve.chat import reach_path  # noqa: E402
from ark.trajectory import read_trajectories  # noqa: E402
from fake_openai import FakeOpenAIServer, chat_reply, function_call  # noqa: E402
from serve.conftest import zemeckis_calls  # noqa: E402

UP = "\x1b[A"
PROMPT = "ark>"  # the space after it is drawn as a cursor move


@pytest.mark.slow
def test_chat_in_a_terminal(metaqa_index, tmp_path):
    replies = [
        (200, chat_reply(tool_calls=[function_call(n, a)]))
        for n, a in zemeckis_calls(metaqa_index) * 2
    ]
    zemeckis = node(metaqa_index, "Robert Zemeckis")
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "src"),
        "TERM": "xterm",
        "NO_COLOR": "1",
        "PROMPT_TOOLKIT_NO_CPR": "1",
    }
    env.pop("OPENAI_API_KEY", None)
    with FakeOpenAIServer(replies) as server:
        child = pexpect.spawn(
            sys.executable,
            ["-c", "from ark.cli import app; app()", "chat", str(metaqa_index.path),
             "--base-url", server.base_url, "--model", "fake-model"],
            env=env, encoding="utf-8", timeout=30, dimensions=(50, 220), cwd=str(tmp_path),
        )  # fmt: skip
        try:
            child.expect(PROMPT)
            child.sendline("who directed [Forrest Gump]")
            child.expect(r"step 1: \S*search_in_graph")
            child.expect(r"step 2: \S*search_in_neighborhood")
            child.expect(f"{zemeckis}.+Robert Zemeckis.+person")  # the ranked answer
            child.expect(PROMPT)
            child.send(UP)  # the previous question, from history
            child.send("\r")
            child.expect(r"step 1: \S*search_in_graph")
            child.expect("Robert Zemeckis")
            child.expect(PROMPT)
            child.sendline(f"/why {zemeckis}")
            child.expect(r"step 1: search_in_graph\(query=\"Forrest Gump\"\)")
            child.expect(
                r"step 2: search_in_neighborhood\(.*\) → \[\d+\] Robert Zemeckis"
                r" via directed_by\(out\)"
            )
            child.expect(r"step 3: add_to_answer")
            child.expect(PROMPT)
            child.sendline("/agents")
            child.expect("agent 1: finish after 4 steps")
            child.expect(PROMPT)
            child.sendline("/steps")
            child.expect(r"step 4: finish\(\) → Finished with 1 node")
            child.expect(PROMPT)
            child.sendline("/save saved.jsonl")
            child.expect("Appended 2 trajectories")
            child.expect(PROMPT)
            child.sendline("/view")
            child.expect(r"Wrote \S*ark-chat.html")
            child.expect(PROMPT)
            child.sendline("/quit")
            child.expect("Bye.")
            child.expect(pexpect.EOF)
        finally:
            child.close()
    assert child.exitstatus == 0
    saved = list(read_trajectories(tmp_path / "saved.jsonl"))
    assert [t.question for t in saved] == ["who directed [Forrest Gump]"] * 2
    assert saved[0].answer == [zemeckis]
    assert (tmp_path / "ark-chat.html").stat().st_size > 100_000
    assert len(server.requests) == 8  # two questions of four model calls each


def test_reach_path_follows_centers_back_to_a_global_search(metaqa_index, tmp_path):
    from ark.session import ToolSession
    from ark.trajectory import StepRecord, ToolCallRecord, Trajectory

    session = ToolSession(metaqa_index)
    gump = node(metaqa_index, "Forrest Gump")
    zemeckis = node(metaqa_index, "Robert Zemeckis")
    plan = [
        ("search_in_graph", {"query": "Tom Hanks"}),
        ("search_in_graph", {"query": "Forrest Gump"}),
        ("search_in_neighborhood", {"node_index": gump, "edge_type": "directed_by"}),
        ("search_in_neighborhood", {"node_index": zemeckis, "edge_type": "directed_by"}),
    ]
    t = Trajectory(question="q", model="m", config={})
    for i, (name, args) in enumerate(plan):
        o = session.call(name, args)
        call = ToolCallRecord(f"c{i}", name, args, "", o.observation, o.ok, o.code, o.nodes,
                              0.0, o.center, o.relations())  # fmt: skip
        t.steps.append(StepRecord(i, 0.0, 0, 0, "", [call]))
    film = t.steps[3].tool_calls[0].nodes[0]  # a film Zemeckis directed
    path = reach_path(t, film, metaqa_index)
    assert [step for step, _ in path] == [2, 3, 4]  # the Tom Hanks search is no part of it
    assert path[0][1].endswith(f"→ [{gump}] Forrest Gump (hit 1 of 5)")
    assert path[1][1].endswith(f"→ [{zemeckis}] Robert Zemeckis via directed_by(out)")
    name = metaqa_index.graph.name(film)
    assert path[2][1].endswith(f"→ [{film}] {name} via directed_by(in)")
    assert reach_path(t, 0, metaqa_index) == []
