"""Evidence paths: every returned node with the recorded chain of calls that reached it.

The main test runs the demo's question (``ark demo``) with the real tools on the
bundled MetaQA graph, driven by a scripted model, and checks every path edge by edge
against the graph's own triples file (read here, independently of the index).
"""

from __future__ import annotations

import gzip
from importlib.resources import files
from pathlib import Path

import pytest

from _doubles import ScriptedChatModel, tool_call
from _helpers import node
from ark import EvidencePath, NodeEvidence, Retriever, explain
from ark.index import Index, build_index
from ark.probes import DEMO_QUESTION
from ark.retrieval import paths_to, render_evidence
from ark.tools import GraphTools
from ark.trajectory import StepRecord, ToolCallRecord, Trajectory

KB = Path(str(files("ark") / "data" / "metaqa_kb.txt.gz"))


@pytest.fixture(scope="module")
def demo_index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_index(KB, tmp_path_factory.mktemp("demo") / "metaqa.idx")


@pytest.fixture(scope="module")
def triples() -> set[tuple[str, str, str]]:
    with gzip.open(KB, "rt", encoding="utf-8") as f:
        return {tuple(line.rstrip("\n").split("|")) for line in f if line.strip()}  # type: ignore[misc]


def demo_script(index: Index):  # type: ignore[no-untyped-def]
    """Two agents answer the demo question over the real tools: the first with a hop
    over the set of films (a genre is reached from several films), the second film by
    film for the first two films. Node indices come from the same tools the agents use."""
    tools = GraphTools(index)
    zemeckis = node(index, "Robert Zemeckis")
    films = [h.index for h in tools.search_in_neighborhood(zemeckis, edge_type="directed_by").hits]
    per_film = [
        [h.index for h in tools.search_in_neighborhood(f, edge_type="has_genre").hits]
        for f in films[:2]
    ]
    genres = list(dict.fromkeys(g for f in films for g in _genres(tools, f)))
    plans = [
        [
            tool_call("search_in_graph", query="Robert Zemeckis"),
            tool_call("search_in_neighborhood", node_index=zemeckis, edge_type="directed_by"),
            tool_call("search_in_neighborhood", node_index=films, edge_type="has_genre"),
            tool_call("add_to_answer", node_indices=genres[:10]),
            tool_call("finish"),
        ],
        [
            tool_call("search_in_graph", query="Zemeckis"),
            tool_call("search_in_neighborhood", node_index=zemeckis, edge_type="directed_by"),
            tool_call("search_in_neighborhood", node_index=films[0], edge_type="has_genre"),
            tool_call("search_in_neighborhood", node_index=films[1], edge_type="has_genre"),
            tool_call(
                "add_to_answer", node_indices=list(dict.fromkeys(g for f in per_film for g in f))
            ),
            tool_call("finish"),
        ],
    ]
    agent_of = {}

    def script(messages):  # type: ignore[no-untyped-def]
        who = agent_of.setdefault(id(messages[0]), len(agent_of))
        turn = sum(1 for m in messages if m.role == "assistant")
        return plans[who % 2][min(turn, len(plans[who % 2]) - 1)]

    return script


def _genres(tools: GraphTools, film: int) -> list[int]:
    return [h.index for h in tools.search_in_neighborhood(film, edge_type="has_genre").hits]


def check_path(path: EvidencePath, target: int, index: Index, triples: set) -> int:
    """Assert ``path`` is a chain of real edges from a searched anchor to ``target``;
    returns its number of hops."""
    g = index.graph
    assert path.anchor is not None and path.query is not None and path.step is not None
    assert path.query in ("Robert Zemeckis", "Zemeckis")
    assert g.name(path.anchor) == "Robert Zemeckis"  # what the global search returned
    at = path.anchor
    for hop in path.hops:
        assert hop.center == at, "a hop starts where the previous one ended"
        assert hop.relation is not None and hop.direction in ("out", "in")
        edge = (g.name(hop.center), hop.relation, g.name(hop.neighbor))
        if hop.direction == "in":
            edge = (edge[2], edge[1], edge[0])
        assert edge in triples, f"not an edge of the graph: {edge}"
        assert hop.step > path.step
        at = hop.neighbor
    assert at == target == path.node
    return len(path.hops)


@pytest.mark.slow
def test_demo_question_evidence_paths_are_edges_of_the_graph(demo_index, triples):
    retriever = Retriever(
        demo_index, ScriptedChatModel(demo_script(demo_index)), strategy="ark-guided", n_agents=2
    )
    result = retriever.retrieve(DEMO_QUESTION)
    assert not result.failed and result.ranking
    assert [e.node for e in result.evidence] == [r.index for r in result.ranking]
    g = demo_index.graph
    multi_centre = 0
    for ranked, ev in zip(result.ranking, result.evidence, strict=True):
        assert isinstance(ev, NodeEvidence)
        assert g.type_name(ev.node) == "genre"
        assert ev.votes == ranked.votes == len(ev.added_by) >= 1
        assert ev.paths, f"no evidence for {ranked.name}"
        agents_with_paths = {p.agent for p in ev.paths}
        assert agents_with_paths == {a.agent for a in ev.added_by}
        for p in ev.paths:
            assert check_path(p, ev.node, demo_index, triples) == 2
            added = next(a for a in ev.added_by if a.agent == p.agent)
            assert added.step is not None and p.hops[-1].step < added.step
        centres = {p.hops[-1].center for p in ev.paths if p.agent == 0}
        multi_centre += len(centres) > 1
    # The hop over a set reached some genre from several films: one path per film.
    assert multi_centre >= 1
    # Both agents added the genres of the first film: two votes, two adding steps.
    top = result.evidence[0]
    assert top.votes == 2
    assert {(a.agent, a.step) for a in top.added_by} == {(0, 4), (1, 5)}
    lines = render_evidence(top, g)
    assert "added by agent 1 at step 4, agent 2 at step 5" in lines[0]
    assert any("<-directed_by-" in line and "-has_genre->" in line for line in lines[1:])
    # The JSON form carries the same paths.
    shape = result.to_dict()["evidence"][0]
    assert shape["node"] == top.node and shape["votes"] == 2
    hop = shape["paths"][0]["hops"][0]
    assert set(hop) == {"center", "relation", "direction", "neighbor", "step"}
    assert hop["relation"] == "directed_by" and hop["direction"] == "in"


@pytest.mark.slow
def test_hop_over_a_set_is_recorded_per_centre(demo_index):
    """The trajectory records which center reached which neighbor, by which relation."""
    retriever = Retriever(
        demo_index, ScriptedChatModel(demo_script(demo_index)), strategy="ark-guided", n_agents=1
    )
    t = retriever.retrieve(DEMO_QUESTION).trajectories[0]
    call = t.steps[2].tool_calls[0]
    assert call.centers is not None and len(call.centers) > 1
    assert call.relations is not None and len(call.relations) == len(call.nodes)
    for links in call.relations:
        assert links and all(link["center"] in call.centers for link in links)
        assert {(link["type"], link["direction"]) for link in links} == {("has_genre", "out")}
    again = Trajectory.from_dict(t.to_dict())
    assert again.steps[2].tool_calls[0].centers == call.centers


def _call(name: str, nodes: list[int], **fields: object) -> ToolCallRecord:
    args = fields.pop("arguments", {})
    return ToolCallRecord(
        id="c", name=name, arguments=args, raw_arguments="", observation="", ok=True,
        nodes=nodes, **fields,  # type: ignore[arg-type]
    )  # fmt: skip


def _trajectory(*calls: ToolCallRecord, answer: list[int]) -> Trajectory:
    steps = [StepRecord(i, 0.0, 0, 0, "", [c]) for i, c in enumerate(calls)]
    return Trajectory("q", "m", {"agent": 0}, steps=steps, answer=answer, stop_reason="finish")


def test_old_records_leave_unrecorded_relations_unknown():
    """A trajectory written before relations and centers were recorded: the centre
    comes from the call's argument, the relation is None — never guessed."""
    t = _trajectory(
        _call("search_in_graph", [5, 6], arguments={"query": "five"}),
        _call("search_in_neighborhood", [7], arguments={"node_index": 5}),
        _call("search_in_neighborhood", [8], arguments={"node_index": [7, 6]}),
        _call("add_to_answer", [], arguments={"node_indices": [7, 8]}),
        answer=[7, 8],
    )
    (seven, eight) = explain([t], [(7, 1), (8, 1)])
    (path,) = seven.paths
    assert (path.anchor, path.query, path.step) == (5, "five", 1)
    assert [(h.center, h.relation, h.direction, h.neighbor) for h in path.hops] == [
        (5, None, None, 7)
    ]
    assert [(a.agent, a.step) for a in seven.added_by] == [(0, 4)]
    (unknown,) = eight.paths  # an old hop over a set: which centre is not known
    assert unknown.anchor is None and unknown.hops[0].center is None


def test_paths_stop_at_the_add_and_adds_that_did_not_run_do_not_count():
    """An old record (no ``added``): an add counts once its node was seen, and only
    when the call ran."""
    t = _trajectory(
        _call("search_in_graph", [1], arguments={"query": "one"}),
        _call("add_to_answer", [], arguments={"node_indices": [2]}),  # 2 unseen: not added
        _call(
            "search_in_neighborhood", [2], center=1, relations=[[{"type": "r", "direction": "out"}]]
        ),
        _call("add_to_answer", [], arguments={"node_indices": [2]}, error_code="output_cut"),
        _call("add_to_answer", [], arguments={"node_indices": [2]}),
        _call("search_in_graph", [2], arguments={"query": "two"}),  # after the add
        answer=[2],
    )
    (ev,) = explain([t], [(2, 1)])
    assert [(a.agent, a.step) for a in ev.added_by] == [(0, 5)]  # the cut call never ran
    (path,) = ev.paths
    assert path.query == "one" and [h.relation for h in path.hops] == ["r"]
    assert len(paths_to(t, 2)) == 2  # every arrival, the later search included


def test_errored_agents_give_no_evidence():
    ok = _trajectory(_call("search_in_graph", [3], arguments={"query": "x"}), answer=[3])
    failed = _trajectory(_call("search_in_graph", [3], arguments={"query": "y"}), answer=[3])
    failed.stop_reason = "error"
    failed.config = {"agent": 1}
    (ev,) = explain([ok, failed], [(3, 1)])
    assert [a.agent for a in ev.added_by] == [0] and [p.query for p in ev.paths] == ["x"]
    assert ev.added_by[0].step is None  # in the answer with no add call (like GraphSearch)


def test_a_centre_no_search_returned_starts_a_path_explored_directly():
    t = _trajectory(
        _call(
            "search_in_neighborhood", [10], center=9, relations=[[{"type": "r", "direction": "in"}]]
        ),
        _call("add_to_answer", [], arguments={"node_indices": [9, 10]}),
        answer=[9, 10],
    )
    nine, ten = explain([t], [(9, 1), (10, 1)])
    assert [(p.anchor, p.query, p.hops) for p in nine.paths] == [(9, None, ())]
    (path,) = ten.paths
    assert (path.anchor, path.query, path.step) == (9, None, None)
    assert [(h.center, h.relation, h.direction, h.neighbor) for h in path.hops] == [
        (9, "r", "in", 10)
    ]


def test_the_recorded_additions_say_who_added_a_node_and_when(demo_index):
    retriever = Retriever(
        demo_index, ScriptedChatModel(demo_script(demo_index)), strategy="ark-guided", n_agents=1
    )
    t = retriever.retrieve(DEMO_QUESTION).trajectories[0]
    add = t.steps[3].tool_calls[0]
    assert add.name == "add_to_answer" and add.added == t.answer
    assert Trajectory.from_dict(t.to_dict()).steps[3].tool_calls[0].added == t.answer
