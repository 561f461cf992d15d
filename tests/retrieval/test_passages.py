"""Evidence passages: the passages along each evidence path, ranked by the answers they
support — on a small hand-made document graph, from scripted trajectories run with
the real tools."""

from __future__ import annotations

import pytest

from _doubles import ScriptedChatModel, tool_call
from _passages_fixture import (
    HARBOUR,
    LENA,
    P_HARBOUR,
    P_LENA,
    P_PORT,
    P_SEALS,
    P_TOMAS,
    PORT,
    TOMAS,
    build_document_index,
)
from ark import Retriever
from ark.index import Index
from ark.retrieval import (
    EvidencePassage,
    EvidencePath,
    Hop,
    NodeEvidence,
    evidence_passages,
    linked_passages,
    question_relevance,
)


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_document_index(tmp_path_factory.mktemp("docs") / "idx")


def retrieve(index: Index, script, linked: int = 0):  # type: ignore[no-untyped-def]
    """The order tests below read what the agents reached (``linked=0``); the linked
    passages have their own tests at the end."""
    model = ScriptedChatModel(script)
    retriever = Retriever(index, model, n_agents=1, seed=0, linked_passages=linked)
    return retriever.retrieve("who is the mayor")


def chain_script(*adds: list[int]):  # type: ignore[no-untyped-def]
    """Lena Marsh -born in-> Port Avel <-mayor of- Tomas Reed, then ``adds``."""
    return [
        tool_call("search_in_graph", query="Lena Marsh painter"),
        tool_call("search_in_neighborhood", node_index=LENA),
        tool_call("search_in_neighborhood", node_index=PORT),
        *(tool_call("add_to_answer", node_indices=a) for a in adds),
        tool_call("finish"),
    ]


def supporting(result):  # type: ignore[no-untyped-def]
    """The passages that support an answer (not those only seen)."""
    return [p for p in result.passages if p.via != "seen"]


def test_the_passages_of_each_hop_of_the_chain(docs):
    result = retrieve(docs, chain_script([TOMAS]))
    assert [r.index for r in result.ranking] == [TOMAS]
    (path,) = result.why(TOMAS).paths
    assert [(h.center, h.neighbor) for h in path.hops] == [(LENA, PORT), (PORT, TOMAS)]
    # Hop Lena -> Port Avel: the one passage naming both; hop Port Avel -> Tomas Reed:
    # both passages naming both (as many of the path's nodes each: by index).
    assert [p.node for p in supporting(result)] == [P_LENA, P_PORT, P_TOMAS]
    assert all(p.via == "hop" and p.supports == (TOMAS,) for p in supporting(result))
    assert result.passages[0].paths == (path,)
    assert result.passages[0].name == "Lena Marsh"
    d = result.to_dict()["passages"][0]
    assert d["index"] == P_LENA and d["supports"] == [TOMAS] and d["via"] == "hop"


def test_passages_follow_the_order_of_the_answers_they_support(docs):
    result = retrieve(docs, chain_script([TOMAS], [HARBOUR]))
    assert [r.index for r in result.ranking] == [TOMAS, HARBOUR]
    # Tomas Reed's chain first; then Lena -painted-> Harbour adds the painting's passage
    # (the Lena passage names both too, and now supports both answers).
    assert [p.node for p in supporting(result)] == [P_LENA, P_PORT, P_TOMAS, P_HARBOUR]
    assert result.passages[0].supports == (TOMAS, HARBOUR)
    assert result.passages[3].supports == (HARBOUR,)
    assert P_SEALS not in [p.node for p in supporting(result)]  # on no path


def test_a_passage_on_the_path_or_in_the_ranking_is_its_own_evidence(docs):
    script = [
        tool_call("search_in_graph", query="mayor of Port Avel since 2010"),
        tool_call("search_in_neighborhood", node_index=P_TOMAS),
        tool_call("add_to_answer", node_indices=[P_TOMAS, PORT]),
        tool_call("finish"),
    ]
    result = retrieve(docs, script)
    assert [r.index for r in result.ranking] == [P_TOMAS, PORT]
    by_node = {p.node: p for p in result.passages}
    assert by_node[P_TOMAS].via == "answer"
    # Port Avel was reached from the passage (P_TOMAS -mentions-> Port Avel): the
    # passage lies on that path and supports it.
    assert by_node[P_TOMAS].supports == (P_TOMAS, PORT)
    assert [p.node for p in supporting(result)] == [P_TOMAS]


def test_a_curated_graph_has_no_passages(movie_index):
    from _helpers import node

    gump = node(movie_index, "Forrest Gump")
    script = [
        tool_call("search_in_graph", query="Forrest Gump"),
        tool_call("search_in_neighborhood", node_index=gump, edge_type="directed_by"),
        tool_call("add_to_answer", node_indices=[node(movie_index, "Robert Zemeckis")]),
        tool_call("finish"),
    ]
    result = retrieve(movie_index, script)
    assert result.ranking and result.evidence[0].paths
    assert result.passages == [] and result.to_dict()["passages"] == []


def test_hub_pairs_are_capped_and_unknown_centers_skipped(docs):
    g = docs.graph
    hop = Hop(PORT, "mayor of", "in", TOMAS, 2)
    path = EvidencePath(0, LENA, "q", 1, (Hop(LENA, "born in", "out", PORT, 2), hop))
    ev = [NodeEvidence(TOMAS, 1, (), (path,))]
    assert [p.node for p in evidence_passages(g, ev, max_per_hop=1)] == [P_LENA, P_PORT]
    unknown = EvidencePath(0, None, None, None, (Hop(None, None, None, TOMAS, 2),))
    assert evidence_passages(g, [NodeEvidence(TOMAS, 1, (), (unknown,))]) == []
    assert isinstance(evidence_passages(g, ev)[0], EvidencePassage)


def test_passages_the_agents_were_shown_come_after_the_supporting_ones(docs):
    """A search showed passages no path was built on: they follow the supporting ones,
    in the order shown, supporting nothing; a passage already supporting is not
    repeated."""
    result = retrieve(docs, chain_script([TOMAS]))
    first_search = result.trajectories[0].steps[0].tool_calls[0].nodes
    shown = [n for n in first_search if n < 5]  # the passages among the search's hits
    assert shown, "the search shows passages"
    seen = [p for p in result.passages if p.via == "seen"]
    assert [p.node for p in result.passages[: len(supporting(result))]] == [
        p.node for p in supporting(result)
    ]
    assert all(p.supports == () and p.paths == () for p in seen)
    expected = [n for n in dict.fromkeys(shown) if n not in {P_LENA, P_PORT, P_TOMAS}]
    assert [p.node for p in seen][: len(expected)] == expected
    assert len({p.node for p in result.passages}) == len(result.passages)


# -- linked passages: the lead passage, then those sharing a bridge entity with it -----

MUSEUM_Q = "which museum holds the painting of the painter born in Port Avel"


def test_the_most_relevant_reached_passage_leads_and_its_linked_passages_follow(docs):
    g, rel = docs.graph, question_relevance(docs, MUSEUM_Q)
    got = evidence_passages(g, [], seen=[P_SEALS, P_LENA], relevance=rel, max_linked=1)
    # Lena Marsh's passage is the most relevant reached one; the painting's passage
    # shares the bridge entities Lena Marsh and The Harbour at Dawn with it, and names
    # the museum: it comes next, then what was reached, in order.
    assert [p.node for p in got] == [P_LENA, P_HARBOUR, P_SEALS]
    linked = got[1]
    assert linked.via == "linked" and linked.supports == () and linked.paths == ()
    assert got[0].via == "seen" and got[2].via == "seen"


def test_an_added_passage_less_relevant_than_the_lead_follows_it(docs):
    g, rel = docs.graph, question_relevance(docs, MUSEUM_Q)
    # An agent added the seals' passage; Lena Marsh's, only reached, is the one the
    # question scores highest: it leads, the add follows, then the linked passage.
    added = [NodeEvidence(P_SEALS, 1, (), ())]
    got = evidence_passages(g, added, seen=[P_LENA], relevance=rel, max_linked=1)
    assert [p.node for p in got] == [P_LENA, P_SEALS, P_HARBOUR]
    assert got[1].via == "answer" and got[0].via == "seen"


def test_an_entity_many_passages_name_links_nothing(docs):
    g, rel = docs.graph, question_relevance(docs, "the mayor and the fishing town")
    # Tomas Reed's passage names Tomas Reed (two passages name him) and Port Avel
    # (three): at max_mentions=2 Port Avel is a hub and only the other passage naming
    # Tomas Reed is linked; at 3 Lena Marsh's passage too; at 1 nothing.
    assert set(linked_passages(g, P_TOMAS, rel, max_mentions=3, limit=5)) == {P_LENA, P_PORT}
    assert linked_passages(g, P_TOMAS, rel, max_mentions=2, limit=5) == [P_PORT]
    assert linked_passages(g, P_TOMAS, rel, max_mentions=1, limit=5) == []
    # Ranked by the question: the town's passage names the mayor and the fishing town.
    assert linked_passages(g, P_TOMAS, rel, max_mentions=3, limit=1) == [P_PORT]


def test_max_linked_zero_keeps_the_reached_order(docs):
    g, rel = docs.graph, question_relevance(docs, MUSEUM_Q)
    got = evidence_passages(g, [], seen=[P_SEALS, P_LENA], relevance=rel, max_linked=0)
    assert [p.node for p in got] == [P_SEALS, P_LENA]
    assert evidence_passages(g, [], seen=[P_SEALS, P_LENA]) == got


def test_the_retriever_lists_linked_passages_by_default(docs):
    script = [
        tool_call("search_in_graph", query="Kestrel Museum"),
        tool_call("add_to_answer", node_indices=[P_HARBOUR]),
        tool_call("finish"),
    ]
    model = ScriptedChatModel(script)
    result = Retriever(docs, model, n_agents=1, seed=0).retrieve(MUSEUM_Q)
    assert result.passages[0].node == P_HARBOUR and result.passages[0].via == "answer"
    # The painter's passage shares Lena Marsh and the painting with the answer's.
    assert P_LENA in [p.node for p in result.passages if p.via == "linked"]
    off = Retriever(docs, ScriptedChatModel(script), n_agents=1, seed=0, linked_passages=0)
    assert all(p.via != "linked" for p in off.retrieve(MUSEUM_Q).passages)
