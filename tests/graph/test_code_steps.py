"""The step of each adjacency code: a stored reverse reads as its relation the other way,
so a relation and its ``_inverse`` copy give one step (the reading's chain search and
``ark index describe`` walk the arrays by these)."""

import numpy as np

from ark.graph import DescribedSchema, Graph, code_steps


def test_a_stored_reverse_reads_as_its_relation_the_other_way():
    # Ann plays in Rovers, stored both ways: Ann -plays_in_club-> Rovers and its reverse.
    graph = Graph.from_edges(
        names=["Ann", "Rovers"],
        node_type=np.array([0, 0]),
        node_type_names=["entity"],
        texts=["", ""],
        src=np.array([0, 1]),
        dst=np.array([1, 0]),
        rel=np.array([0, 1]),
        relation_names=["plays_in_club", "plays_in_club_inverse"],
    )
    canonical = DescribedSchema.from_names(graph.schema, graph).canonical
    assert canonical["plays_in_club_inverse"] == "plays_in_club"
    steps = code_steps(graph, canonical)
    # Code 2 * relation + direction (OUT 0, IN 1); the reverse's codes are flipped.
    assert steps == [
        ("plays_in_club", "out"),
        ("plays_in_club", "in"),
        ("plays_in_club", "in"),
        ("plays_in_club", "out"),
    ]
    # Both of Ann's adjacency rows (the edge and the reverse's) go out along the club.
    row = slice(int(graph.indptr[0]), int(graph.indptr[1]))
    assert {steps[int(c)] for c in np.asarray(graph.adj_code[row])} == {("plays_in_club", "out")}
    # Without the reverse read as such, the copy is a step of its own.
    assert code_steps(graph, {})[2] == ("plays_in_club_inverse", "out")
