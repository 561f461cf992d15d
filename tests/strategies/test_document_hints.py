"""The hints of ``ark-guided`` on a graph built from documents: they send the search
to the passages (the facts are in their text) instead of along entity-to-entity
relation phrases, and never say a passage answers the question — run with the real
tools and the question's real reading on a small hand-made document graph."""

from __future__ import annotations

import pytest

from _helpers import hinted_session, index_of_graph
from _hint_calls import writes_its_calls
from _passages_fixture import (
    HARBOUR,
    LENA,
    P_HARBOUR,
    P_LENA,
    P_PORT,
    P_SEALS,
    P_TOMAS,
    PORT,
    QUESTION,
    build_document_index,
)
from ark.index import Index
from ark.session import CallOutcome, NextCall, Part, ToolSession
from ark.strategies.guided.hints import ChainHints
from ark.tools import ToolConfig


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_document_index(tmp_path_factory.mktemp("docs") / "idx")


def session(index: Index, question: str = QUESTION, multi: bool = True) -> ToolSession:
    # As the agent runs it: a call from a node no result or hint has shown is refused.
    return hinted_session(index, question, multi=multi, refuse_unseen=True)


def hint(outcome: CallOutcome) -> Part:
    """The one part a call's observation got."""
    (part,) = outcome.parts
    return part


def passages_of(target: object, query: str | None = None) -> NextCall:
    """The hop to the passages that mention ``target``, as a hint offers it."""
    arguments = {"node_index": target, "edge_type": "mentions", "node_type": "passage"}
    return NextCall("search_in_neighborhood", {**arguments, **({"query": query} if query else {})})


def adds(part: Part) -> list[int]:
    """The nodes the add a part offers would add."""
    (add,) = [c for c in part.calls if c.tool == "add_to_answer"]
    return add.arguments["node_indices"]


def test_after_a_global_search_the_hint_sends_to_the_named_nodes_passages(docs):
    s = session(docs)
    h = hint(s.call("search_in_graph", {"query": "Lena Marsh"}))
    # The passage titled with the question's name, to add if its text says so, and the
    # passages mentioning the entity, ranked by the question's other words; not the
    # chain along a relation phrase (that a hint never says a passage answers the
    # question: the golden set).
    assert h.kind == "read_passages" and h.nodes == (P_LENA, LENA)
    assert h.calls == (
        NextCall("add_to_answer", {"node_indices": [P_LENA]}),
        passages_of(LENA, "mayor town born"),
    )


def test_passages_reached_by_a_hop_are_offered_to_add_first_ranked_first(docs):
    s = session(docs)
    s.call("search_in_graph", {"query": "Lena Marsh"})
    out = s.call(
        "search_in_neighborhood",
        {"node_index": LENA, "edge_type": "mentions", "node_type": "passage", "query": "born"},
    )
    h = hint(out)
    assert out.nodes == [P_LENA, P_HARBOUR]
    assert h.kind == "add_passages" and adds(h) == [P_LENA, P_HARBOUR]


def test_a_hop_along_a_relation_phrase_is_answered_with_the_passages_of_both_ends(docs):
    s = session(docs)
    s.call("search_in_graph", {"query": "Lena Marsh"})
    out = s.call(
        "search_in_neighborhood",
        {"node_index": LENA, "edge_type": "born in", "node_type": "entity"},
    )
    # The passage that states "born in" mentions both ends: the hop over both finds it.
    h = hint(out)
    assert h.kind == "to_passages" and h.call == passages_of([LENA, PORT], "mayor town born")
    # With the single-node tool, one node at a time.
    s1 = session(docs, multi=False)
    s1.call("search_in_graph", {"query": "Lena Marsh"})
    out1 = s1.call("search_in_neighborhood", {"node_index": LENA, "edge_type": "born in"})
    assert hint(out1).call == passages_of(LENA, "mayor town born")


def test_an_empty_hop_along_a_phrase_also_points_to_the_passages(docs):
    s = session(docs)
    s.call("search_in_graph", {"query": "Lena Marsh"})
    out = s.call(
        "search_in_neighborhood",
        {"node_index": LENA, "edge_type": "hangs in", "node_type": "entity"},
    )
    assert out.ok and out.nodes == []
    assert hint(out).call == passages_of(LENA, "mayor town born")


def test_the_hop_over_a_set_shows_the_passages_text(docs):
    s = session(docs)
    s.call("search_in_graph", {"query": "Lena Marsh Port Avel"})
    out = s.call(
        "search_in_neighborhood",
        {"node_index": [LENA, PORT], "edge_type": "mentions", "node_type": "passage"},
    )
    # Before, a passage reached by the hop over a set showed its title only.
    line = next(x for x in out.observation.splitlines() if x.startswith(f"[{P_LENA}] "))
    assert "| Lena Marsh Lena Marsh is a painter born in Port Avel" in line
    # Mentioned by both centers: ranked first, so the hint offers it first.
    assert adds(hint(out))[0] == P_LENA


def test_adding_an_entity_points_to_the_passages_shown_that_mention_it(docs):
    s = session(docs)
    s.call("search_in_graph", {"query": "Lena Marsh"})
    out = hint(s.call("add_to_answer", {"node_indices": [LENA]}))
    assert out.kind == "mentioning" and out.nodes == (P_LENA, P_HARBOUR)
    assert adds(out) == [P_LENA, P_HARBOUR]
    after = hint(s.call("add_to_answer", {"node_indices": [P_LENA]}))
    # The passage added names Port Avel and The Harbour at Dawn, which other passages
    # mention too (bridges); the question names neither: their passages, ready to copy.
    assert after.kind == "bridges" and after.nodes == (HARBOUR, PORT)
    assert after.call == passages_of([HARBOUR, PORT], "mayor town born")
    hop = s.call(
        "search_in_neighborhood",
        {
            "node_index": [HARBOUR, PORT],
            "edge_type": "mentions",
            "node_type": "passage",
            "query": "mayor town born",
        },
    )
    # The next fact's passages, ranked by the query; the one already added not offered.
    ids = adds(hint(hop))
    assert P_LENA not in ids and ids[0] in (P_PORT, P_TOMAS)


def test_a_curated_graph_keeps_its_chain_hints(movie_index):
    question = "Which genres do the films directed by Robert Zemeckis belong to?"
    hints = ChainHints(movie_index, question)
    assert not hints.documents
    s = ToolSession(
        movie_index,
        config=ToolConfig(multi_neighborhood=True),
        question=question,
        observers=[hints],
    )
    first = hint(s.call("search_in_graph", {"query": "Robert Zemeckis"}))
    assert first.kind == "first_hop" and first.call is not None
    assert first.call.arguments["edge_type"] == "directed_by"


def test_a_passage_title_is_the_question_s_name_once_told_from_its_namesakes():
    from ark.probes import named_in, titled_in

    q = "What county shares a border with the county where Black Hawk Township is located?"
    assert titled_in(q, "Black Hawk Township, Jefferson County, Iowa")
    assert titled_in("Which range is Norris Mountain in?", "Norris Mountain (Montana)")
    assert not titled_in(q, "Poyner Township, Black Hawk County, Iowa")
    # A name as written, not a common noun of the question; a possessive is the name.
    assert not named_in("Who was president when the area became a state?", "the area")
    assert named_in("the state where Hello Love's performer lived", "Hello Love")


def _bridge_graph(path):  # type: ignore[no-untyped-def]
    """Passage 0, *Maiden Ray*, names the band *Iron Band* (its own passage, 1, and
    five more name it: 7 in all) and *British band* (one more passage names it, none
    is about it)."""
    import numpy as np

    from ark.graph import Graph, passage_text

    passages = [
        ("Maiden Ray", "Maiden Ray is a live album by the British band Iron Band."),
        ("Iron Band", "Iron Band are a British band formed in Leyton in 1975."),
        ("Classic", "A film about a British band."),
        *[(f"Song {i}", f"Song {i} is a single by Iron Band.") for i in range(5)],
    ]
    entities = ["Maiden Ray", "Iron Band", "British band"]
    mentions = {0: [0, 1, 2], 1: [1], 2: [2], **{3 + i: [1] for i in range(5)}}
    n = len(passages)
    edges = [(p, n + e) for p, es in mentions.items() for e in es]
    src, dst = (np.array(c, dtype=np.int64) for c in zip(*edges, strict=True))
    graph = Graph.from_edges(
        names=[t for t, _ in passages] + entities,
        node_type=np.array([0] * n + [1] * len(entities)),
        node_type_names=["passage", "entity"],
        texts=[passage_text(t, x) for t, x in passages] + entities,
        src=src,
        dst=dst,
        rel=np.zeros(len(edges), dtype=np.int64),
        relation_names=["mentions"],
    )
    return index_of_graph(graph, path)


def test_the_next_fact_is_read_first_from_a_named_node_with_a_passage_of_its_own(tmp_path):
    index = _bridge_graph(tmp_path / "idx")
    question = "Where did the band form that made the live album Maiden Ray?"
    s = session(index, question)
    s.call("search_in_graph", {"query": "Maiden Ray"})
    after = hint(s.call("add_to_answer", {"node_indices": [0]}))
    iron, british = 9, 10
    # Iron Band has its own passage (7 passages name it, past the 2-5 of a plain
    # bridge); British band only 2, none about it: Iron Band first.
    assert after.kind == "bridges" and after.nodes == (iron, british)
    assert after.call is not None and after.call.arguments["node_index"] == [iron, british]


@pytest.mark.parametrize("multi", [True, False])
def test_the_bridges_declared_seen_are_the_ones_the_call_writes(tmp_path, multi):
    index = _bridge_graph(tmp_path / "idx")
    question = "Where did the band form that made the live album Maiden Ray?"
    s = session(index, question, multi=multi)
    s.call("search_in_graph", {"query": "Maiden Ray"})
    after = hint(s.call("add_to_answer", {"node_indices": [0]}))
    iron, british = 9, 10
    explore = {"edge_type": "mentions", "node_type": "passage"}
    # The call as written runs under the session that refuses unseen nodes ...
    assert s.call("search_in_neighborhood", {"node_index": iron, **explore}).ok
    # ... and a bridge the one-node call did not write stays unseen.
    other = s.call("search_in_neighborhood", {"node_index": british, **explore})
    assert other.ok is multi
    assert (british in after.nodes) is multi


def test_a_call_already_made_is_never_offered_again(docs):
    """After the named node's passages were read, searching for it again offers them
    no more (the session would refuse the call as a repeat): the titled passage's add
    is what is left."""
    s = session(docs)
    first = hint(s.call("search_in_graph", {"query": "Lena Marsh"}))
    assert "search_in_neighborhood" in [c.tool for c in first.calls]
    s.call(
        "search_in_neighborhood",
        {
            "node_index": LENA,
            "edge_type": "mentions",
            "node_type": "passage",
            "query": "mayor town born",
        },
    )
    again = hint(s.call("search_in_graph", {"query": "Lena Marsh painter"}))
    assert again.calls == (NextCall("add_to_answer", {"node_indices": [P_LENA]}),)
    assert s.made(
        "search_in_neighborhood",
        {
            "node_index": LENA,
            "edge_type": "mentions",
            "node_type": "passage",
            "query": "mayor town born",
        },
    )
    assert not s.made("search_in_graph", {"query": "Lena Marsh harbour"})


@pytest.mark.parametrize("ids", [[5], [5, 7]])
@pytest.mark.parametrize("multi", [True, False])
@pytest.mark.parametrize("query", ["", "mayor town"])
def test_the_passages_call_written_is_the_one_checked_for_a_repeat(ids, multi, query):
    from ark.probes import hints_documents as _documents

    call = _documents.passages_call(ids, query, multi)
    assert call.arguments == _documents.passages_arguments(ids, query, multi)
    nodes = [(i, f"Node {i}", "entity") for i in ids]
    part = _documents.to_passages(nodes, query, multi=multi, named_by_passages=False)
    assert part is not None and part.call == call and writes_its_calls(part)


@pytest.mark.parametrize("once", [True, False])
def test_a_passage_s_text_is_printed_once_in_a_conversation(docs, once):
    """With ``texts_once`` (the guided agent's), a passage an earlier observation
    showed with its text is listed again by index and name, its text pointed to;
    without it (a session whose observations feed separate prompts) it is printed
    each time."""
    from ark.tools import TEXT_SHOWN

    s = ToolSession(docs, config=ToolConfig(multi_neighborhood=True), texts_once=once)
    first = s.call("search_in_graph", {"query": "Lena Marsh"}).observation
    line = next(x for x in first.splitlines() if x.startswith(f"[{P_LENA}] "))
    assert "painter born in Port Avel" in line and TEXT_SHOWN not in line
    hop = s.call(
        "search_in_neighborhood",
        {"node_index": LENA, "edge_type": "mentions", "node_type": "passage"},
    ).observation
    line = next(x for x in hop.splitlines() if x.startswith(f"[{P_LENA}] "))
    if once:
        assert line.endswith(TEXT_SHOWN) and "painter" not in line
        assert s.texts_shown >= {P_LENA}
    else:
        assert "painter born in Port Avel" in line and not s.texts_shown


def test_the_guided_agent_shows_each_text_once_and_the_paper_loop_as_the_paper(docs):
    from ark.strategies import Agent, AgentConfig, StrategyContext
    from ark.strategies.guided import guided_agent
    from ark.testing import ScriptedChatModel
    from ark.tools import GraphTools

    ctx = StrategyContext(
        index=docs, llm=ScriptedChatModel([]), tools=GraphTools(docs), config=AgentConfig()
    )
    assert guided_agent(ctx).new_session("q").texts_once is True
    assert Agent.from_context(ctx).new_session("q").texts_once is False


def test_an_add_that_leaves_question_words_unstated_does_not_invite_finishing(docs):
    # The seals' passage names nothing that leads on (no bridge), and no word of the
    # question but the name it names is in it: a fact is missing, so the note says
    # which words and does not offer the way out a small model took after one passage.
    s = session(docs)
    s.call("search_in_graph", {"query": "Harbour seals"})
    after = hint(s.call("add_to_answer", {"node_indices": [P_SEALS]}))
    assert after.kind == "unstated"
    assert "'mayor', 'town', 'born'" in after.render() and "finish" not in after.render()


def test_an_add_whose_passages_state_every_question_word_may_finish(docs):
    s = session(docs, "When do harbour seals feed?")
    s.call("search_in_graph", {"query": "Harbour seals"})
    after = hint(s.call("add_to_answer", {"node_indices": [P_SEALS]}))
    assert after.kind == "further_fact" and "else finish" in after.render()
