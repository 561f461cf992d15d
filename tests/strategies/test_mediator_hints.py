"""The hints never call a nameless mediator node an answer (issue 41)."""

import pytest

from _helpers import hinted_session, tsv_index
from ark.probes import after_intersection, after_neighborhood, chain_hint
from ark.session import NextCall

# A fact of several parts through a node with no name (a Freebase mid), and one
# through an RDF blank node.
OFFICES = "\n".join(
    [
        "Grace_Hopper\tposition_held\tm.0abc12",
        "m.0abc12\toffice\tRear_Admiral",
        "m.0abc12\temployer\tUnited_States_Navy",
        "Ada_Lovelace\tposition_held\t_:b3",
        "_:b3\toffice\tCountess",
        "_:b3\temployer\tLovelace_Estate",
        "Grace_Hopper\tborn_in\tNew_York_City",
        "Ada_Lovelace\tborn_in\tLondon",
    ]
)


@pytest.fixture(scope="module")
def offices(tmp_path_factory):
    return tsv_index(tmp_path_factory.mktemp("offices"), OFFICES)


def _ids(index):
    g = index.graph
    return {g.name(i): i for i in range(g.n_nodes)}


def test_the_hop_to_a_mediator_is_followed_by_the_hop_out(offices):
    ids = _ids(offices)
    question = "Which position was held by Grace Hopper?"
    session = hinted_session(offices, question)
    (hop,) = session.call(
        "search_in_neighborhood",
        {"node_index": ids["Grace_Hopper"], "edge_type": "position_held"},
    ).parts
    assert [c.tool for c in hop.calls] == ["search_in_neighborhood"]
    assert hop.call is not None and hop.call.arguments["node_index"] == ids["m.0abc12"]


def test_a_hint_about_nameless_nodes_never_adds_them():
    hits = [(7, "entity"), (8, "entity")]
    hint = chain_hint(
        None, ["position_held"], hits, [1], ["position_held"], multi=True, nameless=[7, 8]
    )
    through = (NextCall("search_in_neighborhood", {"node_index": [7, 8]}),)
    assert hint is not None and hint.kind == "through" and hint.calls == through
    plain = after_neighborhood(None, hits, [1], multi=True, nameless=[7, 8])
    assert plain is not None and plain.kind == "through" and plain.calls == through
    # Named nodes are still offered as the answer.
    named = chain_hint(None, ["position_held"], hits, [1], ["position_held"], multi=True)
    assert named is not None and named.kind == "answer"
    assert named.call == NextCall("add_to_answer", {"node_indices": [7, 8]})


# Two named nodes that meet only at the record of a part (a blank node and a UUID).
PARTS = "\n".join(
    [
        "Odysseus\tportrayed_in\t_:b3",
        "_:b3\tactor\tSean_Bean",
        "Troy\tstarring\t_:b3",
        "Troy\tstarring\t3f2a9c1e-77b4-4d2e-9a1c-0b8e5d6f7a21",
        "Achilles\tportrayed_in\t3f2a9c1e-77b4-4d2e-9a1c-0b8e5d6f7a21",
        "3f2a9c1e-77b4-4d2e-9a1c-0b8e5d6f7a21\tactor\tBrad_Pitt",
        "Troy\tdirected_by\tWolfgang_Petersen",
        "Odysseus\tappears_in\tThe_Odyssey",
    ]
)


def test_named_nodes_meeting_at_a_mediator_are_sent_one_hop_on(tmp_path):
    index = tsv_index(tmp_path, PARTS)
    ids = _ids(index)
    question = "Which actor played Odysseus in Troy?"
    session = hinted_session(index, question, multi=True)
    (hop,) = session.call(
        "search_in_neighborhood", {"node_index": [ids["Odysseus"], ids["Troy"]]}
    ).parts
    # Linked to both, and no answer: the question names the relation out of the record
    # ("actor"), and the hop on takes it.
    assert hop.kind == "through"
    assert hop.calls == (
        NextCall("search_in_neighborhood", {"node_index": ids["_:b3"], "edge_type": "actor"}),
    )
    # Named by none of the question's words, the hop on is left unfiltered.
    vague = hinted_session(index, "Who was Odysseus in Troy?", multi=True)
    (hop,) = vague.call(
        "search_in_neighborhood", {"node_index": [ids["Odysseus"], ids["Troy"]]}
    ).parts
    assert hop.calls == (NextCall("search_in_neighborhood", {"node_index": ids["_:b3"]}),)


def test_an_intersection_of_named_nodes_is_still_added():
    hint = after_intersection([7], 2, (), [1, 2], False, nameless=[9])
    assert hint.kind == "common"
    assert hint.call == NextCall("add_to_answer", {"node_indices": [7]})
