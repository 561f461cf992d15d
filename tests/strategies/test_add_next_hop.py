"""Adding a node while the reading has hops left is answered with the next hop.

A 1.5B model that reaches the bridge of a two-hop chain (the films, on the way to
their genres) adds it and stops; the observation of the add then carries the next
call, ready to copy, from the nodes just added (as a hint after a neighborhood does).
"""

from _helpers import hinted_session, node
from ark.probes import after_add
from ark.session import NextCall, Note

QUESTION = "Which genres do the films directed by Robert Zemeckis belong to?"
FILMS = ("Forrest Gump", "Cast Away", "Back to the Future")


def _genres_of(target):
    return NextCall(
        "search_in_neighborhood",
        {"node_index": target, "edge_type": "has_genre", "node_type": "genre"},
    )


def _session(index, *, multi):
    return hinted_session(index, QUESTION, multi=multi)


def test_adding_the_bridge_gives_the_hop_to_what_is_asked(movie_index):
    zemeckis = node(movie_index, "Robert Zemeckis")
    films = [node(movie_index, n) for n in FILMS]
    session = _session(movie_index, multi=True)
    session.call("search_in_neighborhood", {"node_index": zemeckis, "edge_type": "directed_by"})
    added = session.call("add_to_answer", {"node_indices": films})
    (note,) = added.parts
    assert isinstance(note, Note) and note.kind == "remaining"
    assert note.call == _genres_of(films)
    # The hop taken, nothing is left: adding the genres gets no note.
    session.call("search_in_neighborhood", {"node_index": films, "edge_type": "has_genre"})
    genres = [node(movie_index, n) for n in ("Drama", "Adventure", "Comedy")]
    done = session.call("add_to_answer", {"node_indices": genres})
    assert done.added == genres and done.parts == []


def test_one_node_at_a_time_without_the_hop_over_a_set(movie_index):
    films = [node(movie_index, n) for n in FILMS]
    session = _session(movie_index, multi=False)
    zemeckis = node(movie_index, "Robert Zemeckis")
    session.call("search_in_neighborhood", {"node_index": zemeckis, "edge_type": "directed_by"})
    added = session.call("add_to_answer", {"node_indices": films[:2]})
    (note,) = added.parts
    assert note.call == _genres_of(films[0])


def test_adding_the_start_node_unexplored_gives_the_first_hop(movie_index):
    zemeckis = node(movie_index, "Robert Zemeckis")
    session = _session(movie_index, multi=True)
    session.call("search_in_graph", {"query": "Robert Zemeckis"})
    added = session.call("add_to_answer", {"node_indices": [zemeckis]})
    (note,) = added.parts
    assert note.kind == "remaining"
    assert note.call == NextCall(
        "search_in_neighborhood",
        {"node_index": zemeckis, "edge_type": "directed_by", "node_type": "movie"},
    )


def test_no_call_when_the_added_nodes_do_not_have_the_relation(movie_index):
    # No relation of this graph touches a year node: the note stays, without a call.
    note = after_add(
        QUESTION,
        [(1, "1994", "year")],
        explored=[],
        remaining=["has_genre"],
        schema=movie_index.schema,
        multi=True,
    )
    assert note is not None and note.kind == "remaining" and note.calls == ()
