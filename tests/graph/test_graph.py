"""The CSR graph on a small hand-made graph: directions, grouping, filters, schema."""

import numpy as np
import pytest

from ark.graph import IN, OUT, Graph

# 0 paper A, 1 paper B, 2 author X, 3 field F
NAMES = ["A", "B", "X", "F"]
TYPES = ["paper", "author", "field"]
NODE_TYPE = np.array([0, 0, 1, 2])
RELS = ["cites", "writes", "has_topic"]
EDGES = [
    (0, 1, 0),  # A cites B
    (1, 0, 0),  # B cites A (both directions between A and B)
    (2, 0, 1),  # X writes A
    (2, 1, 1),  # X writes B
    (0, 3, 2),  # A has_topic F
]


@pytest.fixture()
def graph() -> Graph:
    src, dst, rel = (np.array(c) for c in zip(*EDGES, strict=True))
    return Graph.from_edges(
        names=NAMES,
        node_type=NODE_TYPE,
        node_type_names=TYPES,
        texts=["", "", "", ""],
        src=src,
        dst=dst,
        rel=rel,
        relation_names=RELS,
    )


def relations_of(graph: Graph, center: int, **filters):
    hood = graph.neighborhood(center, **filters)
    out = {}
    for i, n in enumerate(hood.neighbors.tolist()):
        s, e = hood.group_starts[i], hood.group_starts[i + 1]
        out[n] = sorted(
            (RELS[r], d)
            for r, d in zip(hood.entry_relations[s:e], hood.entry_directions[s:e], strict=True)
        )
    return out


def test_neighbors_in_both_directions_grouped_per_neighbor(graph):
    assert relations_of(graph, 0) == {
        1: [("cites", OUT), ("cites", IN)],
        2: [("writes", IN)],
        3: [("has_topic", OUT)],
    }
    assert relations_of(graph, 2) == {0: [("writes", OUT)], 1: [("writes", OUT)]}
    assert relations_of(graph, 3) == {0: [("has_topic", IN)]}


def test_neighbors_are_sorted_by_index(graph):
    assert graph.neighborhood(0).neighbors.tolist() == [1, 2, 3]


def test_node_type_and_relation_filters(graph):
    assert list(relations_of(graph, 0, node_types=[1])) == [2]
    assert list(relations_of(graph, 0, node_types=[0, 2])) == [1, 3]
    assert list(relations_of(graph, 0, relations=[2])) == [3]
    assert relations_of(graph, 0, relations=[0], node_types=[0]) == {
        1: [("cites", OUT), ("cites", IN)]
    }
    assert relations_of(graph, 0, relations=[1], node_types=[2]) == {}


def test_degree_counts_both_directions(graph):
    assert [graph.degree(i) for i in range(4)] == [4, 3, 2, 1]
    assert graph.n_edges == 5 and graph.n_nodes == 4


def test_schema_summary_counts(graph):
    schema = graph.schema
    assert {(t.name, t.count) for t in schema.node_types} == {
        ("paper", 2),
        ("author", 1),
        ("field", 1),
    }
    assert {(r.name, r.source_type, r.target_type, r.count) for r in schema.relations} == {
        ("cites", "paper", "paper", 2),
        ("writes", "author", "paper", 2),
        ("has_topic", "paper", "field", 1),
    }
    text = schema.describe()
    assert "writes: author -> paper (2)" in text


def test_schema_round_trips(graph):
    from ark.graph import Schema

    assert Schema.from_dict(graph.schema.to_dict()) == graph.schema


def test_out_of_range_endpoints_are_refused():
    with pytest.raises(ValueError, match="out of range"):
        Graph.from_edges(
            names=["a"],
            node_type=np.array([0]),
            node_type_names=["t"],
            texts=[""],
            src=np.array([0]),
            dst=np.array([1]),
            rel=np.array([0]),
            relation_names=["r"],
        )
