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
    text = schema.render()
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


# -- the limits of the stored codes ----------------------------------------------------


def star(n_types: int, n_relations: int) -> Graph:
    """A hub (node 0) linked to one node per relation; node ``i`` has type ``i`` mod
    ``n_types``, so the last relation and the last type are both used."""
    n = max(n_types, n_relations + 1)
    leaves = np.arange(1, n_relations + 1)
    return Graph.from_edges(
        names=[f"n{i}" for i in range(n)],
        node_type=np.arange(n) % n_types,
        node_type_names=[f"t{i}" for i in range(n_types)],
        texts=[""] * n,
        src=np.zeros(n_relations, dtype=np.int64),
        dst=leaves,
        rel=np.arange(n_relations),
        relation_names=[f"r{i}" for i in range(n_relations)],
    )


@pytest.mark.parametrize(
    ("n_types", "n_relations", "type_dtype", "code_dtype"),
    [
        (32_768, 2, np.int16, np.int16),  # the last type code int16 holds
        (32_769, 2, np.int32, np.int16),  # one more: widened, not wrapped to -32768
        (2, 16_384, np.int16, np.int16),  # relation 16383 * 2 + 1 = 32767
        (2, 16_385, np.int16, np.int32),  # relation 16384 would wrap
    ],
)
def test_codes_past_int16_are_widened_not_wrapped(n_types, n_relations, type_dtype, code_dtype):
    g = star(n_types, n_relations)
    assert g.node_type.dtype == type_dtype and g.adj_code.dtype == code_dtype
    last = len(g.node_type) - 1
    assert g.type_name(last) == f"t{last % n_types}"
    # The hub's last neighbor is reached by the last relation, read back exactly.
    hood = g.neighborhood(0)
    assert hood.neighbors[-1] == n_relations
    assert hood.entry_relations[-1] == n_relations - 1 and hood.entry_directions[-1] == OUT
    only_last = g.neighborhood(0, relations=[n_relations - 1], node_types=[n_relations % n_types])
    assert only_last.neighbors.tolist() == [n_relations]
    assert {(r.name, r.count) for r in g.schema.relations} == {
        (f"r{i}", 1) for i in range(n_relations)
    }


def test_limits_past_int32_are_refused_at_build():
    from ark.errors import ArkError
    from ark.probes import MAX_NODES, MAX_RELATIONS, check_limits

    check_limits(MAX_NODES, 10, MAX_RELATIONS)
    with pytest.raises(ArkError, match="2,147,483,648 nodes; ARK indexes at most"):
        check_limits(MAX_NODES + 1, 10, 10)
    with pytest.raises(ArkError, match="relations; ARK indexes at most 1,073,741,823"):
        check_limits(10, 10, MAX_RELATIONS + 1)


def test_codes_outside_their_names_are_refused():
    with pytest.raises(ValueError, match="node type code 3 out of range"):
        Graph.from_edges(
            names=["a"],
            node_type=np.array([3]),
            node_type_names=["t"],
            texts=[""],
            src=np.array([0]),
            dst=np.array([0]),
            rel=np.array([0]),
            relation_names=["r"],
        )


@pytest.mark.parametrize(
    ("n", "n_codes"),
    [
        (3_037_000_499, 1),  # n * n just under 2**63
        (3_037_000_500, 2),  # past it: the packed key would overflow
        (2**31 - 1, 32_768),  # int32 node indices with the most int16 relation codes
        (10, 4),
    ],
)
def test_the_adjacency_order_is_exact_at_the_key_limits(n, n_codes):
    from ark.graph.columns import adjacency_order

    rng = np.random.default_rng(0)
    values = np.array([0, 1, n // 2, n - 2, n - 1], dtype=np.int64)
    center = rng.choice(values, 200)
    other = rng.choice(values, 200)
    code = rng.integers(0, n_codes, 200)
    order = adjacency_order(center, other, code, n, n_codes)
    expected = np.lexsort((code, other, center))
    assert order.tolist() == expected.tolist()


@pytest.mark.parametrize("bases", [(5, 7, 3), (2**31, 2**31, 2**31), (2**40, 2**30)])
def test_unique_rows_counts_exactly_whatever_the_bases(bases):
    from ark.graph.columns import unique_rows

    rng = np.random.default_rng(1)
    cols = [rng.choice([0, 1, b - 1], 300) for b in bases]
    *got, counts = unique_rows(cols, bases)
    expected, expected_counts = np.unique(np.stack(cols, axis=1), axis=0, return_counts=True)
    assert np.stack(got, axis=1).tolist() == expected.tolist()
    assert counts.tolist() == expected_counts.tolist()


@pytest.mark.parametrize(
    "chunks",
    [
        [["a", "bé"]],  # one chunk: an index as built
        [["a", "bé", ""], ["añadido", "x"]],  # base + the added nodes: an updated index
        [["a"], [], ["mid", "dle"], ["last", "añadido"]],  # more chunks, one empty
    ],
)
def test_string_column_reads_every_chunk_as_one_list(chunks):
    """An updated graph's names and texts are the base's chunk plus the added nodes':
    each index, read alone or in a batch, gives the string a flat list gives."""
    import pyarrow as pa

    from ark.graph.columns import StringColumn

    col = StringColumn(pa.chunked_array([pa.array(c, pa.string()) for c in chunks], pa.string()))
    flat = [s for c in chunks for s in c]
    assert len(col) == len(flat)
    assert [col[i] for i in range(len(flat))] == flat
    assert col.take(range(len(flat))) == flat
    assert col.take(list(reversed(range(len(flat))))) == flat[::-1]
    assert col[-1] == flat[-1]
    with pytest.raises(IndexError):
        col[len(flat)]
