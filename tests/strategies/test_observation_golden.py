"""The observations a model reads, byte for byte: the hints of ``ark-guided`` (the next
call, the add, the notes after an add, the passages on a graph built from documents,
whom a hint says wants a relation), the tools' fix of an empty hop, and the session's
refusals, as the code wrote them before the hints became typed parts
(:class:`ark.session.Hint`, :class:`ark.session.Note`).

The one place tests pin observation prose: every other test asserts on the parts
(their kind, the calls they offer, the nodes they name). A change here changes what
the agents read and the trajectories they record, so it is made on purpose only.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _helpers import hinted_session, node, tsv_index
from _hint_calls import writes_its_calls
from _passages_fixture import LENA, NORLAND, P_LENA, TOMAS, build_document_index
from _passages_fixture import QUESTION as DOC_QUESTION
from ark.graph import NodeTypeSummary, RelationSummary, Schema
from ark.index import Index
from ark.probes import DOCUMENT_HINT_KINDS as DOCUMENT_KINDS
from ark.probes import LINE_HINT_KINDS as LINE_KINDS
from ark.probes import chain_hint
from ark.session import CallOutcome, Hint, Note, ToolSession
from ark.strategies import ChainHints, steps_left_note
from ark.tools import ToolConfig

KINDS = (*LINE_KINDS, *DOCUMENT_KINDS)

QUESTION = "Which genres do the films directed by Robert Zemeckis belong to?"
FILMS = ("Forrest Gump", "Cast Away", "Back to the Future")
GENRES = ("Drama", "Adventure", "Comedy")


def chain(movie_index):
    z = node(movie_index, "Robert Zemeckis")
    films = [node(movie_index, n) for n in FILMS]
    genres = [node(movie_index, n) for n in GENRES]
    s = hinted_session(movie_index, QUESTION, multi=True)
    out = [s.call("search_in_graph", {"query": "Robert Zemeckis"})]
    out.append(s.call("search_in_neighborhood", {"node_index": z, "edge_type": "directed_by"}))
    out.append(s.call("search_in_neighborhood", {"node_index": z, "edge_type": "directed_by"}))
    out.append(s.call("add_to_answer", {"node_indices": films}))
    out.append(s.call("add_to_answer", {"node_indices": [z]}))
    out.append(s.call("search_in_neighborhood", {"node_index": films, "edge_type": "has_genre"}))
    out.append(s.call("add_to_answer", {"node_indices": genres}))
    return out


def unread(movie_index):
    s = hinted_session(movie_index, "which was Big headed by")
    big = node(movie_index, "Big")
    a = s.call("search_in_graph", {"query": "Big"})
    b = s.call("search_in_neighborhood", {"node_index": big, "edge_type": "starred_actors"})
    return [a, b]


FOOTBALL = "\n".join(
    [
        "Ann_A\tplays_in_club\tRovers_FC",
        "Ann_A\tplays_position\tForward",
        "Bo_B\tplays_in_club\tRovers_FC",
        "Bo_B\tplays_position\tDefender",
        "Cy_C\tplays_in_club\tRovers_FC",
        "Cy_C\tplays_position\tForward",
    ]
)


def intersection(root):
    index = tsv_index(root, FOOTBALL)
    question = "name a player who plays at Forward position at the club Rovers_FC ?"
    s = hinted_session(index, question, multi=True)
    forward, rovers = node(index, "Forward"), node(index, "Rovers_FC")
    a = s.call("search_in_graph", {"query": "Rovers_FC", "k": 1})
    b = s.call("search_in_neighborhood", {"node_index": [forward, rovers]})
    return [a, b]


OFFICES = "\n".join(
    [
        "Grace_Hopper\tposition_held\tm.0abc12",
        "m.0abc12\toffice\tRear_Admiral",
        "m.0abc12\temployer\tUnited_States_Navy",
        "Grace_Hopper\tborn_in\tNew_York_City",
    ]
)


def mediator(root):
    index = tsv_index(root, OFFICES)
    s = hinted_session(index, "Which position was held by Grace Hopper?")
    hop = s.call(
        "search_in_neighborhood",
        {"node_index": node(index, "Grace_Hopper"), "edge_type": "position_held"},
    )
    return [hop]


def documents(root):
    index = build_document_index(root / "idx")
    s = hinted_session(index, DOC_QUESTION, multi=True, refuse_unseen=True)
    out = [s.call("search_in_graph", {"query": "Lena Marsh"})]
    out.append(s.call("search_in_neighborhood", {"node_index": [TOMAS, NORLAND]}))
    out.append(
        s.call(
            "search_in_neighborhood",
            {
                "node_index": LENA,
                "edge_type": "mentions",
                "node_type": "passage",
                "query": "mayor town born",
            },
        )
    )
    out.append(s.call("add_to_answer", {"node_indices": [LENA]}))
    out.append(s.call("add_to_answer", {"node_indices": [P_LENA]}))
    return out


def session_refusals(movie_index):
    s = ToolSession(movie_index, refuse_unseen=True)
    out = [s.call("finish", {})]
    out.append(s.call("search_in_graph", {"query": "Tom Hanks"}))
    out.append(s.call("search_in_neighborhood", {"node_index": 999}))
    out.append(s.call("search_in_graph", {"query": "Tom Hanks"}))
    out.append(s.call("add_to_answer", {"node_indices": [999, "x"]}))
    out.append(s.call("nope", {}))
    return [
        *out,
        steps_left_note(1, answer_empty=True),
        steps_left_note(2),
    ]


def shared(movie_index):
    gump, z = node(movie_index, "Forrest Gump"), node(movie_index, "Robert Zemeckis")
    s = hinted_session(movie_index, "Which films share the director of Forrest Gump?", multi=True)
    a = s.call("search_in_neighborhood", {"node_index": gump, "edge_type": "directed_by"})
    b = s.call("search_in_neighborhood", {"node_index": z, "edge_type": "directed_by"})
    big = node(movie_index, "Big")
    off = hinted_session(movie_index, "What genre is Big?")
    c = off.call("search_in_neighborhood", {"node_index": big, "edge_type": "starred_actors"})
    return [a, b, c]


def documents_hop(root):
    index = build_document_index(root / "idx")
    s = hinted_session(index, DOC_QUESTION, multi=True)
    hop = s.call("search_in_neighborhood", {"node_index": LENA, "edge_type": "born in"})
    return [hop]


def onward(movie_index):
    z = node(movie_index, "Robert Zemeckis")
    out = []
    for multi in (True, False):
        s = ToolSession(
            movie_index,
            config=ToolConfig(multi_neighborhood=multi),
            observers=[ChainHints(movie_index)],
        )
        out.append(s.call("search_in_neighborhood", {"node_index": z, "edge_type": "directed_by"}))
    return out


def empty_hop(movie_index):
    films = [node(movie_index, n) for n in ("Forrest Gump", "Cast Away")]
    s = ToolSession(movie_index, config=ToolConfig(multi_neighborhood=True))
    filters = [("directed_by", "genre"), ("starred_actors", "genre"), ("directed_by", "year")]
    return [
        s.call("search_in_neighborhood", {"node_index": films, "edge_type": e, "node_type": t})
        for e, t in filters
    ]


PLAYERS = "\n".join(
    [
        "ann\tplays_for_country\tspain",
        "bob\tplays_for_country\tspain",
        "cid\tplays_for_country\tfrance",
        "ann\tplays_in_club\trovers",
        "bob\tplays_in_club\tunited",
        "cid\tplays_in_club\tcity_fc",
    ]
)


def wording(root):
    """Whom a hint says wants a relation: the question, or the path read for it."""
    index = tsv_index(root, PLAYERS)
    s = hinted_session(index, "name a club that has a player from spain ?")
    spain = node(index, "spain")
    out = [s.call("search_in_graph", {"query": "spain"})]
    out.append(
        s.call("search_in_neighborhood", {"node_index": spain, "edge_type": "plays_for_country"})
    )
    schema = Schema(
        (NodeTypeSummary("entity", 10),),
        (
            RelationSummary("parents", "entity", "entity", 5),
            RelationSummary("children", "entity", "entity", 5),
        ),
    )
    args = (schema, ["parents", "children"], [(7, "entity")], [1])
    for followed, unnamed in (
        (["parents"], {"children"}),
        (["parents", "children"], {"children"}),
        (["parents", "children"], set()),
    ):
        hint = chain_hint(*args, followed, multi=False, unnamed=unnamed)
        out.append(hint.render())
    return out


EXPECTED = {
    "onward": [
        (
            "Neighbors of [4] Robert Zemeckis (person) [edge_type=directed_by]: 3 "
            "neighbors.\n"
            "[0] Forrest Gump (movie) via directed_by(in)\n"
            "[1] Cast Away (movie) via directed_by(in)\n"
            "[2] Back to the Future (movie) via directed_by(in)\n"
            "Hint: 3 movie nodes. If the question asks for what these movie nodes link to, "
            "go one more hop: search_in_neighborhood(node_index=[0, 1, 2], edge_type=R) "
            "with R one of directed_by (to person), has_genre (to genre), starred_actors "
            "(to person). If these movie nodes are what the question asks for, add them."
        ),
        (
            "Neighbors of [4] Robert Zemeckis (person) [edge_type=directed_by]: 3 "
            "neighbors.\n"
            "[0] Forrest Gump (movie) via directed_by(in)\n"
            "[1] Cast Away (movie) via directed_by(in)\n"
            "[2] Back to the Future (movie) via directed_by(in)\n"
            "Hint: 3 movie nodes. If the question asks for what these movie nodes link to, "
            "go one more hop: search_in_neighborhood(node_index=<one of them>, edge_type=R) "
            "with R one of directed_by (to person), has_genre (to genre), starred_actors "
            "(to person). If these movie nodes are what the question asks for, add them."
        ),
    ],
    "empty_hop": [
        (
            "Neighbors of 2 nodes ([0], [1]) [node_type=genre; edge_type=directed_by]: no "
            "distinct neighbors found.\n"
            "No neighbor matches these filters. These nodes' neighbors are: 2 person via "
            "directed_by(out); 2 person via starred_actors(out); 2 genre via "
            "has_genre(out).\n"
            'Try search_in_neighborhood(node_index=[0, 1], edge_type="has_genre", '
            'node_type="genre").'
        ),
        (
            "Neighbors of 2 nodes ([0], [1]) [node_type=genre; edge_type=starred_actors]: "
            "no distinct neighbors found.\n"
            "No neighbor matches these filters. These nodes' neighbors are: 2 person via "
            "directed_by(out); 2 person via starred_actors(out); 2 genre via "
            "has_genre(out).\n"
            'Try search_in_neighborhood(node_index=[0, 1], edge_type="has_genre", '
            'node_type="genre").'
        ),
        (
            "Neighbors of 2 nodes ([0], [1]) [node_type=year; edge_type=directed_by]: no "
            "distinct neighbors found.\n"
            "No neighbor matches these filters. These nodes' neighbors are: 2 person via "
            "directed_by(out); 2 person via starred_actors(out); 2 genre via "
            "has_genre(out).\n"
            'Try search_in_neighborhood(node_index=[0, 1], edge_type="directed_by", '
            'node_type="person").'
        ),
    ],
    "wording": [
        (
            "Global search for 'spain': 1 node.\n"
            "[3] spain (entity) score=0.75\n"
            "Hint: [3] spain (entity) matches the question best; the path read from it to "
            "what the question asks for starts along plays_for_country: "
            'search_in_neighborhood(node_index=3, edge_type="plays_for_country", '
            'node_type="entity").'
        ),
        (
            "Neighbors of [3] spain (entity) [edge_type=plays_for_country]: 2 neighbors.\n"
            "[0] ann (entity) via plays_for_country(in)\n"
            "[1] bob (entity) via plays_for_country(in)\n"
            "Hint: 2 entity nodes. The question also names plays_in_club, not followed yet: "
            'search_in_neighborhood(node_index=0, edge_type="plays_in_club", '
            'node_type="entity").'
        ),
        (
            "Hint: 1 entity node. The path read for the question takes children too, not "
            'followed yet: search_in_neighborhood(node_index=7, edge_type="children", '
            'node_type="entity").'
        ),
        (
            "Hint: 1 entity node. Every relation of the path read for the question "
            "(parents, children) is followed, so these answer it. Add them now: "
            "add_to_answer(node_indices=[7]), then finish."
        ),
        (
            "Hint: 1 entity node. Every relation the question names (parents, children) is "
            "followed, so these answer it. Add them now: add_to_answer(node_indices=[7]), "
            "then finish."
        ),
    ],
    "chain": [
        (
            "Global search for 'Robert Zemeckis': 1 node.\n"
            "[4] Robert Zemeckis (person) score=1.49\n"
            "Hint: [4] Robert Zemeckis (person) matches the question best; the question "
            "names directed_by, which it has: search_in_neighborhood(node_index=4, "
            'edge_type="directed_by", node_type="movie").'
        ),
        (
            "Neighbors of [4] Robert Zemeckis (person) [edge_type=directed_by]: 3 "
            "neighbors.\n"
            "[0] Forrest Gump (movie) via directed_by(in)\n"
            "[1] Cast Away (movie) via directed_by(in)\n"
            "[2] Back to the Future (movie) via directed_by(in)\n"
            "Hint: 3 movie nodes. The question also names has_genre, not followed yet: "
            'search_in_neighborhood(node_index=[0, 1, 2], edge_type="has_genre", '
            'node_type="genre").'
        ),
        (
            "You already made this exact search_in_neighborhood call at step 1; its result "
            "is above and has not changed. Use a different node, filter or query, add the "
            "nodes that answer the question, or finish. Hint: not explored yet from your "
            "latest results: [0] Forrest Gump (movie), [1] Cast Away (movie), [2] Back to "
            "the Future (movie)."
        ),
        (
            "Added [0] Forrest Gump, [1] Cast Away, [2] Back to the Future. The answer has "
            "3 node(s). Note: the question also names has_genre, not followed yet; if these "
            "nodes are a step on the way, go on from them: "
            'search_in_neighborhood(node_index=[0, 1, 2], edge_type="has_genre", '
            'node_type="genre").'
        ),
        (
            "Added [4] Robert Zemeckis. The answer has 4 node(s). Note: you explored the "
            "neighbors of [4] Robert Zemeckis (person) to get further, so it is a step on "
            "the way rather than the answer, unless the question asks for it. The question: "
            '"Which genres do the films directed by Robert Zemeckis belong to?"'
        ),
        (
            "Neighbors of 3 nodes ([0], [1], [2]) [edge_type=has_genre]: 3 distinct "
            "neighbors.\n"
            "[6] Drama (genre) via has_genre(out) from [0]\n"
            "[7] Adventure (genre) via has_genre(out) from [1]\n"
            "[8] Comedy (genre) via has_genre(out) from [2]\n"
            "Hint: 3 genre nodes. No relation followed so far explains 'belong' in the "
            "question. These may answer it: add_to_answer(node_indices=[6, 7, 8])."
        ),
        "Added [6] Drama, [7] Adventure, [8] Comedy. The answer has 7 node(s).",
    ],
    "unread": [
        (
            "Global search for 'Big': 1 node.\n"
            "[3] Big (movie) score=0.89\n"
            "Hint: [3] Big (movie) matches the question best. No relation's name or words "
            "match 'headed' in the question, so no path was read from it. Its relations: "
            "directed_by (1 person); starred_actors (1 person); has_genre (1 genre). "
            "Explore it along the one that answers the question: "
            "search_in_neighborhood(node_index=3, edge_type=...)."
        ),
        (
            "Neighbors of [3] Big (movie) [edge_type=starred_actors]: 1 neighbor.\n"
            "[5] Tom Hanks (person) via starred_actors(out)\n"
            "Hint: 1 person node. No relation followed so far explains 'headed' in the "
            "question. These may answer it: add_to_answer(node_indices=[5])."
        ),
    ],
    "session_refusals": [
        (
            "Your answer list is empty. Add the answer nodes with add_to_answer, or call "
            "finish again to end with an empty answer."
        ),
        ("Global search for 'Tom Hanks': 1 node.\n[5] Tom Hanks (person) score=1.49"),
        (
            "Error in search_in_neighborhood: not run: node [999] never appeared in a "
            "result. A node's index is the number in square brackets before its name, as in "
            "[5] Tom Hanks (person); the other numbers in results are counts and scores. "
            "Explore from a node listed in the results above."
        ),
        (
            "You already made this exact search_in_graph call at step 1; its result is "
            "above and has not changed. Use a different node, filter or query, add the "
            "nodes that answer the question, or finish."
        ),
        (
            "Not added, never returned by a search: [999]. Only nodes shown in tool results "
            "can be added. Not node indices: ['x']. The answer has 0 node(s)."
        ),
        (
            "Error: there is no tool 'nope'. Tools: search_in_graph, "
            "search_in_neighborhood, add_to_answer, finish."
        ),
        (
            "\n"
            "(1 step left and your answer is empty: add the nodes from the results above "
            "that answer the question, then finish.)"
        ),
        ("\n(2 steps left.)"),
    ],
    "shared": [
        (
            "Neighbors of [0] Forrest Gump (movie) [edge_type=directed_by]: 1 neighbor.\n"
            "[4] Robert Zemeckis (person) via directed_by(out)\n"
            "Hint: 1 person node. The question uses directed_by twice, followed once so "
            'far: search_in_neighborhood(node_index=4, edge_type="directed_by", '
            'node_type="movie").'
        ),
        (
            "Neighbors of [4] Robert Zemeckis (person) [edge_type=directed_by]: 3 "
            "neighbors.\n"
            "[0] Forrest Gump (movie) via directed_by(in)\n"
            "[1] Cast Away (movie) via directed_by(in)\n"
            "[2] Back to the Future (movie) via directed_by(in)\n"
            "Hint: 2 movie nodes. Every relation the question names (directed_by) is "
            "followed, so these answer it. Add them now: add_to_answer(node_indices=[1, "
            "2]), then finish."
        ),
        (
            "Neighbors of [3] Big (movie) [edge_type=starred_actors]: 1 neighbor.\n"
            "[5] Tom Hanks (person) via starred_actors(out)\n"
            "Hint: 1 person node. The question names has_genre, which person nodes do not "
            "have; the movie node you came from does: search_in_neighborhood(node_index=3, "
            'edge_type="has_genre", node_type="genre").'
        ),
    ],
    "intersection": [
        (
            "Global search for 'Rovers_FC': 1 node.\n"
            "[3] Rovers_FC (entity) score=1.56\n"
            "Hint: the question names 2 nodes ([4] Forward, [3] Rovers_FC); what it asks "
            "for is linked to each of them: search_in_neighborhood(node_index=[4, 3], "
            "edge_type=['plays_position', 'plays_in_club']) lists first the nodes linked to "
            "all of them."
        ),
        (
            "Neighbors of 2 nodes ([4], [3]): 3 distinct neighbors.\n"
            "[0] Ann_A (entity) via plays_position(in), plays_in_club(in) from [4], [3]\n"
            "[2] Cy_C (entity) via plays_position(in), plays_in_club(in) from [4], [3]\n"
            "[1] Bo_B (entity) via plays_in_club(in) from [3]\n"
            "Hint: 2 nodes are linked to all 2; they likely answer the question (it also "
            "says 'name'): add_to_answer(node_indices=[0, 2])."
        ),
    ],
    "mediator": [
        (
            "Neighbors of [0] Grace_Hopper (entity) [edge_type=position_held]: 1 neighbor.\n"
            "[1] m.0abc12 (entity) via position_held(out)\n"
            "Hint: 1 entity node. The path read for the question takes office too, not "
            'followed yet: search_in_neighborhood(node_index=1, edge_type="office", '
            'node_type="entity").'
        ),
    ],
    "documents": [
        (
            "Global search for 'Lena Marsh': 3 nodes.\n"
            "[5] Lena Marsh (entity) score=1.65 | Lena Marsh\n"
            "[0] Lena Marsh (passage) score=1.39 | Lena Marsh Lena Marsh is a painter born "
            "in Port Avel. In 1921 she painted The Harbour at Dawn.\n"
            "[3] The Harbour at Dawn (passage) score=0.80 | The Harbour at Dawn The Harbour "
            "at Dawn is an oil painting by Lena Marsh. It hangs in the Kestrel Museum.\n"
            "Hint: on this graph the facts are stated in the text of passage nodes. [0] "
            "Lena Marsh (passage) is titled with a name the question uses: if its text "
            "states a fact the question needs, add it: add_to_answer(node_indices=[0]). The "
            "passages that mention [5] Lena Marsh (entity): "
            'search_in_neighborhood(node_index=5, edge_type="mentions", '
            'node_type="passage", query="mayor town born").'
        ),
        (
            "Error in search_in_neighborhood: not run: nodes [9, 8] never appeared in a "
            "result. A node's index is the number in square brackets before its name, as in "
            "[5] Lena Marsh (entity); the other numbers in results are counts and scores. "
            "Explore from a node listed in the results above."
        ),
        (
            "Neighbors of [5] Lena Marsh (entity) [node_type=passage; edge_type=mentions; "
            "query='mayor town born']: 2 neighbors.\n"
            "[0] Lena Marsh (passage) score=0.62 via mentions(in) | Lena Marsh Lena Marsh "
            "is a painter born in Port Avel. In 1921 she painted The Harbour at Dawn.\n"
            "[3] The Harbour at Dawn (passage) score=0.00 via mentions(in) | The Harbour at "
            "Dawn The Harbour at Dawn is an oil painting by Lena Marsh. It hangs in the "
            "Kestrel Museum.\n"
            "Hint: 2 passage nodes; their text is above. Add those that state a fact the "
            "question needs, best first (the listed first: add_to_answer(node_indices=[0, "
            "3]), if they do). If the question needs a further fact about something a "
            "passage names (a person, place or work), search for that name with "
            "search_in_graph and read its passages the same way."
        ),
        (
            "Added [5] Lena Marsh. The answer has 1 node(s). Note: on this graph the "
            "evidence is in passages; shown above, [0] Lena Marsh (passage) mentions [5], "
            "[3] The Harbour at Dawn (passage) mentions [5]. Add the passages whose text "
            "states the facts: add_to_answer(node_indices=[0, 3]), if they do."
        ),
        (
            "Added [0] Lena Marsh. The answer has 2 node(s). Note: a question that chains "
            "facts needs a passage for each of them. These passages name [7] The Harbour at "
            "Dawn (entity), [6] Port Avel (entity), which other passages are about or "
            "mention too; to read them for the next fact: "
            'search_in_neighborhood(node_index=[7, 6], edge_type="mentions", '
            'node_type="passage", query="mayor town born").'
        ),
    ],
    "documents_hop": [
        (
            "Neighbors of [5] Lena Marsh (entity) [edge_type=born in]: 1 neighbor.\n"
            "[6] Port Avel (entity) via born in(out) | Port Avel\n"
            "Hint: on this graph the relations between entities are few and the facts are "
            "in the passages. To read the passages that mention [5] Lena Marsh (entity), "
            "[6] Port Avel (entity): search_in_neighborhood(node_index=[5, 6], "
            'edge_type="mentions", node_type="passage", query="mayor town born").'
        ),
    ],
}


MOVIE_CASES = ["chain", "unread", "shared", "session_refusals", "onward", "empty_hop"]
SMALL_CASES = ["intersection", "mediator", "documents", "documents_hop", "wording"]


def _text(made: CallOutcome | str) -> str:
    return made.observation if isinstance(made, CallOutcome) else made


@pytest.mark.parametrize("case", MOVIE_CASES)
def test_observations_on_the_movie_graph_are_unchanged(movie_index: Index, case: str) -> None:
    assert [_text(o) for o in globals()[case](movie_index)] == EXPECTED[case]


@pytest.mark.parametrize("case", SMALL_CASES)
def test_observations_on_small_graphs_are_unchanged(tmp_path: Path, case: str) -> None:
    assert [_text(o) for o in globals()[case](tmp_path)] == EXPECTED[case]


def _check_parts(outcomes: list[CallOutcome | str]) -> list[str]:
    """The kinds of the parts of ``outcomes``, once each part is checked: it ends its
    observation as rendered, its kind is a hint's, and its text writes exactly the
    calls it carries (the call the model copies is the call the plans run)."""
    kinds = []
    for o in outcomes:
        if not isinstance(o, CallOutcome) or not o.parts:
            continue
        glue = "\n" if o.result is not None and o.ok else " "
        assert o.observation.endswith(glue + glue.join(p.render() for p in o.parts))
        for part in o.parts:
            assert isinstance(part, Hint | Note) and part.kind in KINDS
            assert writes_its_calls(part), part
            kinds.append(part.kind)
    return kinds


def test_the_parts_render_to_the_observations_and_write_their_calls(
    movie_index: Index, tmp_path: Path
) -> None:
    kinds = [k for case in MOVIE_CASES for k in _check_parts(globals()[case](movie_index))]
    for case in SMALL_CASES:
        (tmp_path / case).mkdir()
        kinds += _check_parts(globals()[case](tmp_path / case))
    assert set(kinds) >= {"first_hop", "next_relation", "answer", "passed", "read_passages"}
