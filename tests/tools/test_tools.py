"""The two tools on the real MetaQA graph, their errors, and their JSON shape."""

import pytest

from ark.tools import GraphTools, SearchResult, ToolError, tool_specs


@pytest.fixture(scope="module")
def tools(metaqa_index):
    return GraphTools(metaqa_index)


def idx(tools, name):
    return tools.graph.names.to_pylist().index(name)


@pytest.mark.parametrize("person", ["Tom Hanks", "Michelle Trachtenberg", "Robert Zemeckis"])
def test_searching_a_name_returns_that_person_first(tools, person):
    result = tools.search_in_graph(person)
    assert isinstance(result, SearchResult)
    assert result.hits[0].name == person and result.hits[0].type == "person"
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True) and len(result.hits) == 5


def test_k_controls_the_number_of_results(tools):
    assert len(tools.search_in_graph("love", k=30).hits) == 30
    assert len(tools.search_in_graph("love", k=1).hits) == 1


def test_neighborhood_filters_directions_and_relations(tools):
    film = idx(tools, "Forrest Gump")
    result = tools.search_in_neighborhood(film, edge_type="directed_by")
    assert [h.name for h in result.hits] == ["Robert Zemeckis"]
    assert [(r.type, r.direction) for r in result.hits[0].relations] == [("directed_by", "out")]
    person = idx(tools, "Tom Hanks")
    films = tools.search_in_neighborhood(
        person, node_type="movie", edge_type=["starred_actors"], k=100
    )
    assert "Forrest Gump" in {h.name for h in films.hits}
    assert all(h.type == "movie" for h in films.hits)
    assert all(r.direction == "in" for h in films.hits for r in h.relations)
    assert films.total == len(films.hits)


def test_neighborhood_without_query_is_in_index_order_and_cut_to_k(tools):
    person = idx(tools, "Tom Hanks")
    result = tools.search_in_neighborhood(person, k=5)
    indices = [h.index for h in result.hits]
    assert indices == sorted(indices) and len(indices) == 5
    assert result.total > 5
    assert "showing 5 of" in result.render()


def test_neighborhood_query_ranks_matching_neighbors_first(tools):
    person = idx(tools, "Tom Hanks")
    result = tools.search_in_neighborhood(person, query="Forrest", node_type="movie")
    assert result.hits[0].name == "Forrest Gump" and result.hits[0].score > 0


def test_type_names_are_matched_case_insensitively(tools):
    film = idx(tools, "Forrest Gump")
    result = tools.search_in_neighborhood(film, node_type="Person", edge_type="DIRECTED_BY")
    assert [h.name for h in result.hits] == ["Robert Zemeckis"]


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"node_index": -1}, "unknown_node"),
        ({"node_index": 10**9}, "unknown_node"),
        ({"node_index": "12"}, "bad_argument"),
        ({"node_index": 1.5}, "bad_argument"),
        ({"node_index": True}, "bad_argument"),
        ({"node_index": 0, "node_type": "persn"}, "unknown_node_type"),
        ({"node_index": 0, "edge_type": "directed"}, "unknown_edge_type"),
        ({"node_index": 0, "edge_type": [1, 2]}, "bad_argument"),
        ({"node_index": 0, "k": 0}, "bad_k"),
        ({"node_index": 0, "k": 101}, "bad_k"),
        ({"node_index": 0, "k": True}, "bad_k"),
        ({"node_index": 0, "query": 3}, "bad_argument"),
    ],
)
def test_neighborhood_errors(tools, kwargs, code):
    result = tools.search_in_neighborhood(**kwargs)
    assert isinstance(result, ToolError) and result.code == code
    assert result.to_dict()["error"]["code"] == code


def test_unknown_type_suggests_closest_names(tools):
    result = tools.search_in_neighborhood(0, node_type="persn")
    assert "person" in result.suggestions
    assert "movie" in result.message  # lists the valid names
    result = tools.search_in_neighborhood(0, edge_type="directed")
    assert result.suggestions[0] == "directed_by"


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"query": ""}, "empty_query"),
        ({"query": "   "}, "empty_query"),
        ({"query": "the of and"}, "no_terms"),
        ({"query": None}, "empty_query"),
        ({"query": "x", "k": 0}, "bad_k"),
        ({"query": "x", "k": 1000}, "bad_k"),
        ({"query": "x", "k": "five"}, "bad_k"),
    ],
)
def test_global_search_errors(tools, args, code):
    result = tools.search_in_graph(**args)
    assert isinstance(result, ToolError) and result.code == code


@pytest.mark.parametrize(
    ("name", "args", "code"),
    [
        ("search_everything", {"query": "x"}, "unknown_tool"),
        ("search_in_graph", {"q": "x"}, "bad_argument"),
        ("search_in_graph", {}, "bad_argument"),
        ("search_in_neighborhood", {"query": "x"}, "bad_argument"),
        ("search_in_graph", ["x"], "bad_argument"),
        ("search_in_neighborhood", {"node_index": "abc"}, "bad_argument"),
        (["search_in_graph"], {"query": "x"}, "unknown_tool"),  # unhashable: no TypeError
        ({"name": "search_in_graph"}, {"query": "x"}, "unknown_tool"),
        (None, {"query": "x"}, "unknown_tool"),
        (7, {"query": "x"}, "unknown_tool"),
    ],
)
def test_call_errors(tools, name, args, code):
    result = tools.call(name, args)
    assert isinstance(result, ToolError) and result.code == code
    assert result.render()  # the observation renders, whatever the name was


@pytest.mark.parametrize("name", [["search_in_graph"], {"a": 1}, None, 3.5])
def test_a_session_turns_a_non_string_tool_name_into_an_observation(metaqa_index, name):
    from ark.session import ToolSession

    outcome = ToolSession(metaqa_index).call(name, {"query": "x"})
    assert not outcome.ok and outcome.code == "unknown_tool"


def test_call_accepts_stringified_integers(tools):
    film = idx(tools, "Forrest Gump")
    result = tools.call("search_in_neighborhood", {"node_index": str(film), "k": "3"})
    assert isinstance(result, SearchResult) and len(result.hits) == 3


def test_json_shape(tools):
    g = tools.search_in_graph("Tom Hanks").to_dict()
    assert set(g) == {"results", "total"}
    assert set(g["results"][0]) == {"index", "type", "name", "score", "snippet"}
    n = tools.search_in_neighborhood(idx(tools, "Forrest Gump"), k=3).to_dict()
    assert set(n["results"][0]) == {"index", "type", "name", "score", "snippet", "relations"}
    assert set(n["results"][0]["relations"][0]) == {"type", "direction"}


def test_tool_specs_enumerate_the_schema(metaqa_index):
    specs = {s["function"]["name"]: s["function"] for s in tool_specs(metaqa_index.schema)}
    node_type = specs["search_in_neighborhood"]["parameters"]["properties"]["node_type"]
    assert "movie" in node_type["anyOf"][0]["enum"]
    assert specs["search_in_graph"]["parameters"]["required"] == ["query"]


def test_empty_filtered_neighborhood_says_what_is_there(tools):
    person = idx(tools, "Tom Hanks")
    result = tools.search_in_neighborhood(person, node_type="person", edge_type="starred_actors")
    assert result.total == 0 and result.hits == ()
    assert result.available[0][:3] == ("movie", "starred_actors", "in")
    assert "movie via starred_actors(in)" in result.render()
    assert result.to_dict()["available"][0]["node_type"] == "movie"
    assert tools.search_in_neighborhood(person, node_type="movie").available == ()


def test_empty_filtered_neighborhood_suggests_the_fixed_filter(tools):
    movie = idx(tools, "Forrest Gump")
    # The small-model slip: the start node's own type given as the neighbor type.
    wrong_type = tools.search_in_neighborhood(movie, node_type="Movie", edge_type="directed_by")
    assert wrong_type.total == 0
    assert (
        f'Try search_in_neighborhood(node_index={movie}, edge_type="directed_by", '
        'node_type="person")' in wrong_type.render()
    )
    # A relation the type cannot be reached by: keep the type, fix the relation.
    person = idx(tools, "Tom Hanks")
    wrong_edge = tools.search_in_neighborhood(person, node_type="movie", edge_type="has_genre")
    assert 'edge_type="starred_actors", node_type="movie"' in wrong_edge.render()
    # Both wrong: no single fix to offer, only the listing.
    both = tools.search_in_neighborhood(person, node_type="genre", edge_type="has_genre")
    assert both.total == 0 and "Try " not in both.render()


def test_a_tie_across_the_cut_is_still_broken_by_name(tmp_path):
    """Equal scores straddling position k: the tool fetches the tied documents past the
    cut, so the exact name wins even when it has the highest index of the tie."""
    from ark.index import build_index

    rows = ["Film A|has_tags|tom hanks", "Film B|has_tags|TOM HANKS", "Film C|has_tags|Tom hanks"]
    rows.append("Film D|starred_actors|Tom Hanks")
    (tmp_path / "kb.txt").write_text("\n".join(rows) + "\n", encoding="utf-8")
    tools = GraphTools(build_index(tmp_path / "kb.txt", tmp_path / "idx"))
    scores = {h.name: h.score for h in tools.search_in_graph("Tom Hanks", k=10).hits}
    assert len(set(scores.values())) == 1 and len(scores) == 4  # one four-way tie
    names = tools.graph.names.to_pylist()
    assert names.index("Tom Hanks") > max(names.index(n) for n in scores if n != "Tom Hanks")
    for k in (1, 2, 3):
        hits = tools.search_in_graph("Tom Hanks", k=k).hits
        assert hits[0].name == "Tom Hanks" and len(hits) == k


def test_a_call_is_written_as_name_json_pairs_and_unparsed_arguments_say_so():
    from ark.tools import written_arguments

    assert written_arguments({"node_index": [3, 7], "edge_type": "mentions"}) == (
        'node_index=[3, 7], edge_type="mentions"'
    )
    assert written_arguments({"query": "Émile"}) == 'query="Émile"'  # not \u-escaped
    assert written_arguments(None) == "<invalid arguments>"  # the CLI's and chat's line
