"""A question that names several nodes is an intersection: the hints give the hop over
all of them and then the nodes every one of them reaches; a question with words the
linker cannot account for never gets "Add them now"."""

import pytest

from _helpers import hinted_session
from ark.index import build_index
from ark.session import NextCall
from ark.strategies import ChainHints

# Players, clubs, countries and positions: one node type, relations with reverse copies.
PLAYERS = {
    "Ann_A": ("Rovers_FC", "Mexico", "Forward"),
    "Bo_B": ("Rovers_FC", "Mexico", "Defender"),
    "Cy_C": ("Rovers_FC", "Spain", "Forward"),
    "Di_D": ("United_FC", "Mexico", "Forward"),
}


@pytest.fixture(scope="module")
def football(tmp_path_factory):
    lines = []
    for player, (club, country, position) in PLAYERS.items():
        lines += [
            f"{player}\tplays_in_club\t{club}",
            f"{club}\tplays_in_club_inverse\t{player}",
            f"{player}\tplays_for_country\t{country}",
            f"{player}\tplays_position\t{position}",
        ]
    lines += ["Rovers_FC\tis_in_country\tMexico", "United_FC\tis_in_country\tSpain"]
    root = tmp_path_factory.mktemp("football")
    (root / "kb.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return build_index(root / "kb.tsv", root / "idx")


def _node(index, name):
    return index.graph.names.to_pylist().index(name)


@pytest.mark.slow
def test_two_named_nodes_get_the_hop_over_both_then_the_common_nodes(football):
    question = "name a player who plays at Forward position at the club Rovers_FC ?"
    session = hinted_session(football, question, multi=True)
    forward, rovers = _node(football, "Forward"), _node(football, "Rovers_FC")
    found = session.call("search_in_graph", {"query": "Forward Rovers_FC"})
    ids = sorted([forward, rovers], key=lambda i: question.index(football.graph.name(i)))
    (meet,) = found.parts
    assert meet.kind == "intersection" and meet.nodes == tuple(ids)
    assert meet.call == NextCall(
        "search_in_neighborhood",
        {"node_index": ids, "edge_type": ["plays_position", "plays_in_club"]},
    )
    hop = session.call(
        "search_in_neighborhood",
        {"node_index": ids, "edge_type": ["plays_position", "plays_in_club"]},
    )
    both = sorted(_node(football, n) for n in ("Ann_A", "Cy_C"))
    (common,) = hop.parts  # the 2 nodes linked to both, to add
    assert common.kind == "unexplained" and common.call is not None  # "name": not read
    assert common.call.tool == "add_to_answer"
    assert sorted(common.call.arguments["node_indices"]) == both
    # The intersection used each named relation: adding its nodes is not nagged.
    added = session.call("add_to_answer", {"node_indices": both})
    assert added.added == both and added.parts == []


def test_a_filter_that_cuts_every_common_node_is_given_back(football):
    question = "which player in Rovers_FC is from Mexico ?"
    session = hinted_session(football, question, multi=True)
    ids = [_node(football, "Rovers_FC"), _node(football, "Mexico")]
    hop = session.call("search_in_neighborhood", {"node_index": ids, "edge_type": "plays_in_club"})
    # No node linked to both with this filter: the hop again with each one's relation.
    (again,) = hop.parts
    assert again.kind == "refilter"
    assert again.call == NextCall(
        "search_in_neighborhood",
        {"node_index": ids, "edge_type": ["plays_in_club", "plays_for_country"]},
    )


def test_one_named_node_is_a_chain_not_an_intersection(football):
    session = hinted_session(football, "which club does Ann_A play for ?", multi=True)
    found = session.call("search_in_graph", {"query": "Ann_A"})
    (first,) = found.parts
    assert first.kind == "first_hop" and first.call is not None
    assert first.call.arguments["edge_type"] == "plays_in_club"


def test_an_unaccounted_word_turns_the_add_into_likely(football):
    # "professional" is in no label: the chain is not asserted complete.
    question = "which club does Ann_A play professional football for ?"
    session = hinted_session(football, question)
    ann = _node(football, "Ann_A")
    hop = session.call("search_in_neighborhood", {"node_index": ann, "edge_type": "plays_in_club"})
    (likely,) = hop.parts  # the add, not asserted; 'professional' unexplained
    assert likely.kind == "unexplained"
    assert likely.calls == (NextCall("add_to_answer", {"node_indices": hop.nodes}),)
    assert "professional" in ChainHints(football, question).unaccounted
    simple = "which club does Ann_A play for ?"
    plain = hinted_session(football, simple)
    (sure,) = plain.call(
        "search_in_neighborhood", {"node_index": ann, "edge_type": "plays_in_club"}
    ).parts
    assert sure.kind == "answer"
