"""With the hints of ``ark-guided``, exploring from a node index that no result (nor a
hint) has shown is refused, with what the indices are: a 1.5B model took the counts of
"These nodes' neighbors are: 334 passage via mentions(in); 58 entity via …" for
indices. The paper's loop (``ark``) runs such a call as before."""

from __future__ import annotations

import asyncio

import pytest

from _doubles import ScriptedChatModel, calls, tool_call
from _passages_fixture import (
    LENA,
    NORLAND,
    P_TOMAS,
    QUESTION,
    TOMAS,
    build_document_index,
)
from ark.index import Index, build_index
from ark.session import SessionObserver, ToolSession
from ark.strategies import Agent, AgentConfig, GuidedAgent
from ark.tools import ToolConfig


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_document_index(tmp_path_factory.mktemp("docs") / "idx")


def run(index: Index, script, hints: bool, question: str = QUESTION):  # type: ignore[no-untyped-def]
    config = AgentConfig(max_steps=len(script) + 1, tools=ToolConfig(multi_neighborhood=True))
    agent = (GuidedAgent if hints else Agent)(index, ScriptedChatModel(script), config)
    return asyncio.run(agent.run(question))


def records(traj):  # type: ignore[no-untyped-def]
    return [c for s in traj.steps for c in s.tool_calls]


def test_exploring_from_counts_is_refused_and_says_what_an_index_is(docs):
    script = [
        tool_call("search_in_graph", query="Lena Marsh"),
        # [9] Tomas Reed and [8] Norland were never shown: numbers read from elsewhere.
        tool_call("search_in_neighborhood", node_index=[TOMAS, NORLAND], node_type="passage"),
        tool_call("search_in_neighborhood", node_index=[LENA, TOMAS], node_type="passage"),
        tool_call("finish"),
    ]
    traj = run(docs, script, hints=True)
    refused = records(traj)[1:3]
    # The refusal says which nodes and what an index is, on a node of the latest result
    # (its words: the golden set).
    for record in refused:
        assert not record.ok and record.error_code == "unseen_node"
        assert record.nodes == []  # nothing ran: no neighbors returned


def test_the_paper_loop_runs_the_same_call_as_before(docs):
    script = [
        tool_call("search_in_graph", query="Lena Marsh"),
        tool_call("search_in_neighborhood", node_index=[TOMAS, NORLAND], node_type="passage"),
        tool_call("finish"),
    ]
    traj = run(docs, script, hints=False)
    record = records(traj)[1]
    assert record.ok and P_TOMAS in record.nodes


def test_a_node_returned_earlier_in_the_same_reply_may_be_explored(docs):
    script = [
        calls(
            tool_call("search_in_graph", query="Tomas Reed"),
            tool_call("search_in_neighborhood", node_index=TOMAS, node_type="passage"),
        ),
        tool_call("finish"),
    ]
    traj = run(docs, script, hints=True)
    explore = records(traj)[1]
    assert explore.ok and P_TOMAS in explore.nodes


def test_a_node_a_hint_named_may_be_explored(tmp_path):
    """The intersection hint names the question's nodes by index, found by the search
    or not: its ready-made call runs."""
    lines = [
        "Ann_A\tplays_in_club\tRovers_FC",
        "Ann_A\tplays_position\tForward",
        "Bo_B\tplays_in_club\tRovers_FC",
        "Bo_B\tplays_position\tDefender",
    ]
    (tmp_path / "kb.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    index = build_index(tmp_path / "kb.tsv", tmp_path / "idx")
    names = index.graph.names.to_pylist()
    forward, rovers = names.index("Forward"), names.index("Rovers_FC")
    question = "name a player who plays at Forward position at the club Rovers_FC ?"
    script = [
        # Finds Rovers_FC only; the hint names Forward too.
        tool_call("search_in_graph", query="Rovers_FC", k=1),
        tool_call("search_in_neighborhood", node_index=[forward, rovers]),
        tool_call("finish"),
    ]
    traj = run(index, script, hints=True, question=question)
    first, hop = records(traj)[:2]
    # Never returned, Forward is explored: the hint named it (declared shown).
    assert forward not in first.nodes
    assert hop.ok and hop.error_code is None


# -- the session option itself: any caller (not only the agent) can ask for it --------


class _Names(SessionObserver):
    """An aid whose lines wrote ``shown`` by index."""

    def __init__(self, shown: set[int]) -> None:
        self.shown = shown


def test_the_session_refuses_unseen_centers_only_when_asked(docs):
    explore = {"node_index": TOMAS, "node_type": "passage"}
    plain = ToolSession(docs)
    assert plain.call("search_in_neighborhood", explore).ok  # the paper's session
    strict = ToolSession(docs, refuse_unseen=True)
    refused = strict.call("search_in_neighborhood", explore)
    assert not refused.ok and refused.code == "unseen_node" and strict.seen == set()
    # Once a result shows the node, the same call runs (the refusal's example, the
    # latest result's first node: the golden set).
    strict.call("search_in_graph", {"query": "Lena Marsh"})
    again = strict.call("search_in_neighborhood", {"node_index": 9999999})
    assert again.code == "unseen_node"
    assert strict.call("search_in_neighborhood", {"node_index": LENA}).ok


def test_a_node_an_observer_showed_may_be_explored(docs):
    session = ToolSession(docs, refuse_unseen=True, observers=[_Names({TOMAS})])
    assert session.call("search_in_neighborhood", {"node_index": TOMAS}).ok
    assert not session.call("search_in_neighborhood", {"node_index": NORLAND}).ok
