"""The tool session: answer state, normalised repeat detection, finish, error codes."""

from _helpers import node
from ark.llm import ToolCall
from ark.session import ToolSession, normalise_arguments
from ark.tools import ERROR_CODES, ErrorCode


def call(name, **arguments):
    return ToolCall(id=f"c_{name}", name=name, arguments=arguments, raw_arguments="")


def test_repeats_are_detected_after_normalising_arguments(movie_index):
    s = ToolSession(movie_index)
    forrest = node(movie_index, "Forrest Gump")
    first = s.call("search_in_neighborhood", {"node_index": forrest, "node_type": "genre"})
    assert first.ok and first.nodes == [node(movie_index, "Drama")]
    # The same search spelt differently: a quoted index, the default k given, a list of
    # one differently cased name, a blank query.
    again = s.call(
        "search_in_neighborhood",
        {"node_index": str(forrest), "node_type": ["Genre"], "k": 20, "query": " "},
    )
    assert again.code == ErrorCode.REPEATED_CALL == "repeated_call"
    other_k = s.call(
        "search_in_neighborhood", {"node_index": forrest, "node_type": "genre", "k": 3}
    )
    assert other_k.ok
    assert s.call("search_in_graph", {"query": "Tom  Hanks"}).ok
    assert s.call("search_in_graph", {"query": "Tom Hanks", "k": 5}).code == "repeated_call"


def test_normalise_arguments():
    assert normalise_arguments("search_in_graph", {"query": "x"}) == {"query": "x", "k": 5}
    assert normalise_arguments(
        "search_in_neighborhood", {"node_index": "7", "edge_type": ["b", "A", "a"]}
    ) == {"node_index": 7, "edge_type": ["a", "b"], "k": 20}


def test_detect_repeats_can_be_off(movie_index):
    s = ToolSession(movie_index, detect_repeats=False)
    assert s.call("search_in_graph", {"query": "Big"}).ok
    assert s.call("search_in_graph", {"query": "Big"}).ok


def test_add_finish_and_calls_after_finish_in_one_reply(movie_index):
    s = ToolSession(movie_index)
    drama = node(movie_index, "Drama")
    assert s.call("add_to_answer", {"node_indices": [drama]}).code == "unseen_node"
    s.call("search_in_graph", {"query": "Drama"})
    outcomes = s.run_reply(
        [
            call("add_to_answer", node_indices=[drama]),
            call("finish"),
            call("search_in_graph", query="Comedy"),
            call("add_to_answer", node_indices=[drama]),
        ]
    )
    assert [o.ok for o in outcomes] == [True, True, False, False]
    assert outcomes[1].finish and s.finished
    assert [o.code for o in outcomes[2:]] == ["after_finish", "after_finish"]
    assert outcomes[2].nodes == [] and outcomes[2].result is None  # not run
    assert s.answer == [drama]


def test_one_code_for_a_bad_argument_from_tool_or_session(movie_index):
    s = ToolSession(movie_index)
    # found by the tools (a node index that is not a number) ...
    by_tool = s.call("search_in_neighborhood", {"node_index": "x"})
    # ... and by the session (an argument the tool does not take, a non-object)
    by_session = s.call("search_in_graph", {"query": "x", "colour": "red"})
    not_object = s.call("search_in_graph", None, raw_arguments="[1]")
    assert by_tool.code == by_session.code == not_object.code == "bad_argument"
    assert set(ERROR_CODES) == {c.value for c in ErrorCode}


def test_retrieval_only_session_offers_no_answer_tools(movie_index):
    s = ToolSession(movie_index, answer_tools=False)
    assert [sp["function"]["name"] for sp in s.specs] == [
        "search_in_graph",
        "search_in_neighborhood",
    ]
    assert s.call("finish", {}).code == "unknown_tool"


def test_neighborhood_outcome_records_center_and_relations(movie_index):
    s = ToolSession(movie_index)
    zemeckis = node(movie_index, "Robert Zemeckis")
    out = s.call("search_in_neighborhood", {"node_index": zemeckis})
    assert out.center == zemeckis
    rels = out.relations()
    assert rels is not None and len(rels) == len(out.nodes) == 3
    assert all(r == [{"type": "directed_by", "direction": "in"}] for r in rels)
    assert s.call("search_in_graph", {"query": "Big"}).relations() is None
