"""A hop over a set: search_in_neighborhood over several node indices (an option)."""

import pytest

from _helpers import node
from ark.llm.local import tool_call_grammar
from ark.session import ToolSession
from ark.tools import (
    MAX_CENTERS,
    GraphTools,
    MultiNeighborhoodResult,
    SearchResult,
    ToolConfig,
    ToolError,
    tool_specs,
)


def zemeckis_films(index) -> list[int]:
    result = GraphTools(index).search_in_neighborhood(
        node(index, "Robert Zemeckis"), edge_type="directed_by"
    )
    return [h.index for h in result.hits]


def test_merges_neighborhoods_ranked_by_centers_reaching_each_neighbor(metaqa_index):
    tools = GraphTools(metaqa_index)
    films = zemeckis_films(metaqa_index)
    result = tools.neighborhood_over_set(films, edge_type="has_genre")
    assert isinstance(result, MultiNeighborhoodResult)
    # Every genre of every film is there once, with the films it came from.
    expected: dict[int, set[int]] = {}
    for f in films:
        for h in tools.search_in_neighborhood(f, edge_type="has_genre").hits:
            expected.setdefault(h.index, set()).add(f)
    assert {m.hit.index: set(m.centers) for m in result.merged} == expected
    assert result.total == len(expected)
    counts = [len(m.centers) for m in result.merged]
    assert counts == sorted(counts, reverse=True)
    assert [c.index for c in result.centers] == films
    text = result.render()
    assert text.startswith(f"Neighbors of {len(films)} nodes")
    assert "Comedy (genre) via has_genre(out) from" in text


def test_one_index_is_the_paper_tool_and_k_cuts_the_merged_list(metaqa_index):
    tools = GraphTools(metaqa_index)
    films = zemeckis_films(metaqa_index)
    single = tools.neighborhood_over_set([films[0]], edge_type="has_genre")
    assert isinstance(single, SearchResult) and single.center.index == films[0]
    cut = tools.neighborhood_over_set(films, edge_type="has_genre", k=2)
    assert len(cut.merged) == 2 and cut.total > 2


def test_bad_members_are_reported_like_the_single_node_tool(metaqa_index):
    tools = GraphTools(metaqa_index)
    films = zemeckis_films(metaqa_index)
    bad = tools.neighborhood_over_set([films[0], 10**9])
    assert isinstance(bad, ToolError) and bad.code == "unknown_node"
    assert tools.neighborhood_over_set([films[0], "x"]).code == "bad_argument"
    assert tools.neighborhood_over_set([]).code == "bad_argument"
    assert tools.neighborhood_over_set(list(range(MAX_CENTERS + 1))).code == "bad_argument"
    assert tools.neighborhood_over_set(films, k=0).code == "bad_k"
    typo = tools.neighborhood_over_set(films, edge_type="has_genres")
    assert typo.code == "unknown_edge_type" and "has_genre" in typo.suggestions


def test_schema_offers_a_list_only_with_the_option(metaqa_index):
    def node_arg(config):
        specs = tool_specs(metaqa_index.schema, config)
        return next(
            s["function"]["parameters"]["properties"]["node_index"]
            for s in specs
            if s["function"]["name"] == "search_in_neighborhood"
        )

    assert node_arg(ToolConfig())["type"] == "integer"
    multi = node_arg(ToolConfig(multi_neighborhood=True))
    assert multi["anyOf"][1]["maxItems"] == MAX_CENTERS
    assert "multi_neighborhood" not in ToolConfig().to_dict()  # old run configs unchanged
    pytest.importorskip("llama_cpp")
    from llama_cpp import LlamaGrammar

    specs = tool_specs(metaqa_index.schema, ToolConfig(multi_neighborhood=True), answer_tools=True)
    LlamaGrammar.from_string(tool_call_grammar(specs), verbose=False)


def test_session_routes_lists_and_spots_a_reordered_repeat(metaqa_index):
    films = zemeckis_films(metaqa_index)
    session = ToolSession(metaqa_index, config=ToolConfig(multi_neighborhood=True))
    out = session.call("search_in_neighborhood", {"node_index": films, "edge_type": "has_genre"})
    assert out.ok and isinstance(out.result, MultiNeighborhoodResult)
    assert set(out.nodes) <= session.seen and set(films) <= session.seen
    assert session.explored == films
    again = session.call(
        "search_in_neighborhood",
        {"node_index": list(reversed(films)), "edge_type": ["has_genre"]},
    )
    assert again.code == "repeated_call"
    # Without the option a list is a bad node index, as before.
    plain = ToolSession(metaqa_index)
    assert not plain.call("search_in_neighborhood", {"node_index": films}).ok


@pytest.fixture(scope="module")
def hubs(tmp_path_factory):
    """Two hubs: Alpha tags 6,000 items, Beta the last 100 of them (the highest
    indices), more than any per-center cut would keep."""
    from ark.index import build_index

    root = tmp_path_factory.mktemp("hubs")
    lines = [f"Item {i}|tagged|Alpha\n" for i in range(6000)]
    lines += [f"Item {i}|tagged|Beta\n" for i in range(5900, 6000)]
    (root / "kb.txt").write_text("".join(lines))
    return build_index(root / "kb.txt", root / "idx")


@pytest.mark.parametrize("query", [None, "Item"])
def test_hubs_are_merged_whole_so_counts_and_totals_are_exact(hubs, query):
    tools = GraphTools(hubs)
    alpha, beta = node(hubs, "Alpha"), node(hubs, "Beta")
    shared = {node(hubs, f"Item {i}") for i in range(5900, 6000)}
    assert len(tools.graph.neighborhood(alpha).neighbors) == 6000
    result = tools.neighborhood_over_set([alpha, beta], query=query, k=100)
    assert isinstance(result, MultiNeighborhoodResult)
    assert result.total == 6000  # the union, not what survived a cut per center
    assert {m.hit.index for m in result.merged} == shared  # reached by both: first
    assert all(m.centers == (alpha, beta) for m in result.merged)
    assert all(r.type == "tagged" for m in result.merged for r in m.hit.relations)
    assert "from [" in result.render() and "of 6,000 distinct neighbor" in result.render()


def _facts(text: str) -> set[tuple[str, ...]]:
    """(node, type, relations, centers) of an observation in either form: a line
    ``[i] name (type) via r(d) from [c]``, or a group ``type via r(d): [i] name, ...``
    (over a set: ``type via r(d): [i] name from [c]; ...``)."""
    import re

    facts = set()
    for line in text.splitlines()[1:]:
        if line.startswith("["):
            m = re.fullmatch(r"(\[\d+\]) .+? \((\w+)\) via (.+?)(?: from (.+))?", line)
            facts.add((m[1], m[2], m[3], m[4] or ""))
            continue
        key, _, members = line.partition(": ")
        kind, _, via = key.partition(" via ")
        for member in re.split("; " if " from " in members else r", (?=\[)", members):
            m = re.fullmatch(r"(\[\d+\]) .+?(?: from (.+))?", member)
            facts.add((m[1], kind, via, m[2] or ""))
    return facts


@pytest.mark.parametrize("multi", [False, True])
def test_grouped_observations_say_the_same_in_fewer_words(metaqa_index, multi):
    """``grouped_observations``: a neighbor's relations and type are said once per group,
    not once per line; every (neighbor, how it was reached) pair is still there."""
    films = zemeckis_films(metaqa_index)
    target = films if multi else node(metaqa_index, "Robert Zemeckis")
    args = {"node_index": target, "k": 40}
    if multi:
        args["edge_type"] = ["has_genre", "starred_actors"]
    texts = []
    for grouped in (False, True):
        config = ToolConfig(multi_neighborhood=True, grouped_observations=grouped)
        session = ToolSession(metaqa_index, config=config)
        texts.append(session.call("search_in_neighborhood", args, "").observation)
    lines, grouped = texts
    assert lines.splitlines()[0] == grouped.splitlines()[0]
    assert len(grouped.splitlines()) < len(lines.splitlines())
    assert _facts(grouped) == _facts(lines) and len(_facts(lines)) > 5
    assert len(grouped) < 0.8 * len(lines)
    assert ToolConfig(grouped_observations=True).to_dict()["grouped_observations"] is True
    assert "grouped_observations" not in ToolConfig().to_dict()
