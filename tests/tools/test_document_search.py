"""Global search on a graph built from documents returns passages beside entities:
BM25's length normalisation would otherwise rank every short entity name that repeats
a query word above the passage that states the fact."""

from __future__ import annotations

import pytest

from _graphsearch_docs import PASSAGES, write_document_graph
from ark.index import build_index
from ark.tools import GraphTools


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> GraphTools:
    root = tmp_path_factory.mktemp("docsearch")
    return GraphTools(build_index(write_document_graph(root / "tables"), root / "idx"))


def test_a_search_returns_the_best_passages_beside_the_best_entities(tools):
    g = tools.graph
    result = tools.search_in_graph("mayor Tomas Reed of Port Avel", k=4)
    kinds = [g.type_name(h.index) for h in result.hits]
    assert kinds.count("passage") == 2 and kinds.count("entity") == 2
    assert kinds[0] != kinds[1]  # alternating, from the best of either
    passages = [h for h in result.hits if g.type_name(h.index) == "passage"]
    # The passages by their own BM25: the one about the mayor first.
    assert g.name(passages[0].index) in ("Tomas Reed", "Port Avel")
    assert all(h.score > 0 for h in result.hits)


def test_an_odd_k_gives_the_passages_the_larger_half(tools):
    g = tools.graph
    kinds = [g.type_name(h.index) for h in tools.search_in_graph("Port Avel", k=3).hits]
    assert kinds.count("passage") == 2 and kinds.count("entity") == 1


def test_passages_that_match_nothing_are_not_shown(tools):
    g = tools.graph
    hits = tools.search_in_graph("Norland", k=10).hits
    passages = [h.index for h in hits if g.type_name(h.index) == "passage"]
    assert passages and all("Norland" in g.text(p) for p in passages)
    assert len(passages) < len(PASSAGES)
