"""Nameless mediator nodes: found by name shape and structure, never a chain's end."""

import pytest

from _helpers import tsv_index
from ark.probes import mediator_steps, step_table
from ark.reading import identifier_name, mediators, read_chain, read_question

UUID = "3f2a9c1e-77b4-4d2e-9a1c-0b8e5d6f7a21"

# Facts of several parts routed through nodes with no name, each named another way:
# a Freebase mid, a UUID, an RDF blank node, a hex hash. Plus nodes whose names have
# digits a question does say.
OFFICES = "\n".join(
    [
        "Grace_Hopper\tposition_held\tm.0abc12",
        "m.0abc12\toffice\tRear_Admiral",
        "m.0abc12\temployer\tUnited_States_Navy",
        "Alan_Turing\tposition_held\t" + UUID,
        UUID + "\toffice\tReader",
        UUID + "\temployer\tUniversity_of_Manchester",
        "Ada_Lovelace\tposition_held\t_:b3",
        "_:b3\toffice\tCountess",
        "_:b3\temployer\tLovelace_Estate",
        "John_Hopper\tposition_held\t9f86d081884c7d659a2feaa0c55ad015",
        "9f86d081884c7d659a2feaa0c55ad015\toffice\tClerk",
        "9f86d081884c7d659a2feaa0c55ad015\temployer\tNew_York_City",
        "Grace_Hopper\tborn_in\tNew_York_City",
        "Alan_Turing\tborn_in\tLondon",
        "Grace_Hopper\tfavourite_decade\t1980s",
        "Alan_Turing\tfavourite_decade\t1980s",
        "Alan_Turing\tworked_on\tnode_17",
        "Grace_Hopper\tworked_on\tnode_17",
        # An identifier at the end of one edge is a value (a code one may ask for).
        "Grace_Hopper\tbadge_code\tx7f3a9b2c",
    ]
)


@pytest.fixture(scope="module")
def offices(tmp_path_factory):
    return tsv_index(tmp_path_factory.mktemp("offices"), OFFICES)


@pytest.mark.parametrize(
    "name",
    [
        "m.0abc12",
        "_:b3",
        UUID,
        "9f86d081884c7d659a2feaa0c55ad015",
        "cvt_f7f4f801f4",
        "tt0111161",
    ],
)
def test_identifier_shapes(name):
    assert identifier_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "1980s",
        "10000m",
        "node_17",
        "R2D2",
        "F-15",
        "se7en",
        "iphone_5s",
        "One_2_Ka_4",
        "Friday the 13th",
        "event_3fa85f64",
        "Q42",
        "Leonid Kravchuk",
        "1234567",
    ],
)
def test_names_people_write_are_not_identifiers(name):
    assert not identifier_name(name)


def test_mediators_need_two_neighbours(offices):
    g = offices.graph
    found = mediators(offices)
    names = {g.names[i] for i in range(g.n_nodes) if i in found}
    assert names == {"m.0abc12", UUID, "_:b3", "9f86d081884c7d659a2feaa0c55ad015"}
    assert mediators(offices) is found  # memoised per opened index


def test_a_graph_named_by_identifiers_has_no_mediators(tmp_path):
    rows = [f"{i:04x}a{i * 7919:06x}9\tlinks\t{i + 1:04x}b{i * 104729:06x}7" for i in range(30)]
    index = tsv_index(tmp_path, "\n".join(rows))
    assert identifier_name(index.graph.names[0])
    assert len(mediators(index)) == 0


def test_steps_into_mediators(offices):
    from ark.reading import linker_for

    table = step_table(offices, linker_for(offices, "off"))
    into = mediator_steps(offices, table)
    entering = {table.steps[k] for k in range(len(table.steps)) if into[k]}
    assert entering == {("position_held", "out"), ("office", "in"), ("employer", "in")}


def test_a_words_only_graph_has_no_mediator_steps(tmp_path):
    index = tsv_index(
        tmp_path,
        "\n".join(["Big\tdirected_by\tPenny_Marshall", "Big\trelease_year\t1988"]),
    )
    from ark.reading import linker_for

    table = step_table(index, linker_for(index, "off"))
    assert not mediator_steps(index, table).any()


@pytest.mark.parametrize("person", ["Grace Hopper", "Alan Turing", "Ada Lovelace", "John Hopper"])
def test_chain_goes_through_the_mediator(offices, person):
    question = f"Which position was held by {person}?"
    reading = read_question(offices, question, encoder="off")
    chain = read_chain(offices, reading, question, encoder="off")
    assert chain is not None
    # Not stopped at the nameless node, nor back the way it came: one hop out of it.
    assert chain.steps[0] == ("position_held", "out")
    assert len(chain.steps) == 2
    assert chain.steps[1] in {("office", "out"), ("employer", "out")}


def test_the_hop_out_is_the_one_the_question_names(offices):
    question = "Which employer did Alan Turing hold a position with?"
    reading = read_question(offices, question, encoder="off")
    chain = read_chain(offices, reading, question, encoder="off")
    assert chain is not None
    assert chain.steps == (("position_held", "out"), ("employer", "out"))
