"""Property tests: no argument combination makes a tool raise."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ark.graph import Graph
from ark.index import BM25Params, Index, Tokenizer, build_bm25
from ark.tools import GraphTools, SearchResult, ToolError


@pytest.fixture(scope="module")
def tools():
    names = ["alpha paper", "beta paper", "carol", "graphs"]
    graph = Graph.from_edges(
        names=names,
        node_type=np.array([0, 0, 1, 2]),
        node_type_names=["paper", "author", "field"],
        texts=["about graphs", "", "an author", ""],
        src=np.array([0, 2, 2, 0]),
        dst=np.array([1, 0, 1, 3]),
        rel=np.array([0, 1, 1, 2]),
        relation_names=["cites", "writes", "has_topic"],
    )
    bm25 = build_bm25((graph.descriptor(i) for i in range(4)), 4, Tokenizer(), BM25Params())
    return GraphTools(Index(path=None, graph=graph, bm25=bm25, meta={}))  # type: ignore[arg-type]


junk = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=20)
    | st.sampled_from(["paper", "author", "cites", "writes", "", " "]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
ok = (SearchResult, ToolError)
SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(query=junk, k=junk)
def test_search_in_graph_never_raises(tools, query, k):
    assert isinstance(tools.search_in_graph(query, k), ok)


@SETTINGS
@given(node=junk, query=junk, node_type=junk, edge_type=junk, k=junk)
def test_search_in_neighborhood_never_raises(tools, node, query, node_type, edge_type, k):
    result = tools.search_in_neighborhood(node, query, node_type, edge_type, k)
    assert isinstance(result, ok)
    result.render()
    result.to_dict()


@SETTINGS
@given(name=st.sampled_from(["search_in_graph", "search_in_neighborhood", "nope", ""]), args=junk)
def test_call_never_raises(tools, name, args):
    assert isinstance(tools.call(name, args), ok)
