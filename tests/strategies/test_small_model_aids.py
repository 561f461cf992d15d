"""What helps a small model carry a chain: hints in observations, the worked example,
the hop over a set and latest-first fusion (all options, tested without a model)."""

import asyncio

from _doubles import ScriptedChatModel, tool_call
from _helpers import hinted_session, node
from ark.graph import DescribedSchema
from ark.probes import (
    after_add,
    after_neighborhood,
    chain_hint,
    mentioned_relations,
    named_relations,
    onward_relations,
    worked_example,
)
from ark.reading import RelationLinker
from ark.retrieval import Retriever
from ark.session import Hint, NextCall, Note, ToolSession
from ark.strategies import Agent, AgentConfig, AgentOptions, GuidedAgent, system_prompt
from ark.strategies.guided.hints import ChainHints
from ark.tools import ToolConfig


def _linked(schema, question):
    """The question read by a lexical linker over the schema's names (no model)."""
    return RelationLinker(DescribedSchema.from_names(schema)).link(question)


def mentioned(schema, question):
    return mentioned_relations(_linked(schema, question))


def named(schema, question):
    return named_relations(_linked(schema, question))


QUESTION = "Which genres do the films directed by Robert Zemeckis belong to?"


def _hop(target, relation, node_type):
    """The neighborhood call a hint offers, as its part carries it."""
    return NextCall(
        "search_in_neighborhood",
        {"node_index": target, "edge_type": relation, "node_type": node_type},
    )


def test_worked_example_is_a_two_hop_chain_on_real_nodes(movie_index):
    text = worked_example(movie_index, ToolConfig())
    g = movie_index.graph
    zemeckis = node(movie_index, "Robert Zemeckis")
    # The chain on the graph's most common relations: person -> movie -> genre.
    assert f'search_in_graph(query="Robert Zemeckis") -> [{zemeckis}] Robert Zemeckis' in text
    assert 'edge_type="directed_by", node_type="movie"' in text
    genres = [node(movie_index, n) for n in ("Drama", "Adventure", "Comedy")]
    assert f"add_to_answer(node_indices={genres})" in text
    assert text.count("search_in_neighborhood(") == 1 + 3  # one call per film
    multi = worked_example(movie_index, ToolConfig(multi_neighborhood=True))
    assert multi.count("search_in_neighborhood(") == 2 and "node_index=[" in multi
    assert all(g.name(i) in text for i in genres)
    # Ablations without filters get no example; the prompt carries it when given.
    assert worked_example(movie_index, ToolConfig(neighbor_filters=False)) is None
    prompt = system_prompt(movie_index.schema, ToolConfig(), 8, example=text)
    assert prompt.endswith(text) and "## A worked example on this graph" in prompt
    assert "worked example" not in system_prompt(movie_index.schema, ToolConfig(), 8)


def test_neighborhood_hint_names_the_type_and_the_relations_onward(movie_index):
    assert ("has_genre", "genre") in onward_relations(movie_index.schema, "movie")
    films = [node(movie_index, n) for n in ("Forrest Gump", "Cast Away")]
    hits = [(f, "movie") for f in films]
    hint = after_neighborhood(movie_index.schema, hits, [99], multi=True)
    # The hop onward is a template (``edge_type=R``, its text in the golden set): no call.
    assert isinstance(hint, Hint) and hint.kind == "onward" and hint.calls == ()
    single = after_neighborhood(movie_index.schema, hits, [99], multi=False)
    assert single is not None and single.kind == "onward" and single.calls == ()
    # Nothing new (only where it came from): no hint.
    assert after_neighborhood(movie_index.schema, hits[:1], films[:1], multi=True) is None


def test_reminder_when_adding_a_node_already_explored_past():
    note = after_add(QUESTION, [(5, "Cast Away", "movie")], explored=[5])
    assert isinstance(note, Note) and note.kind == "passed" and note.nodes == (5,)
    assert note.calls == ()  # the question restated (golden set), no call
    assert after_add(QUESTION, [(7, "Drama", "genre")], explored=[5]) is None


def test_session_appends_hints_only_when_asked(movie_index):
    zemeckis = node(movie_index, "Robert Zemeckis")
    args = {"node_index": zemeckis, "edge_type": "directed_by"}
    plain = ToolSession(movie_index).call("search_in_neighborhood", args)
    with_hints = hinted_session(movie_index, QUESTION)
    hinted = with_hints.call("search_in_neighborhood", args)
    assert hinted.observation.startswith(plain.observation) and plain.parts == []
    films = [node(movie_index, n) for n in ("Forrest Gump", "Cast Away", "Back to the Future")]
    # The question names has_genre, not followed yet: the next call, ready to copy.
    (hint,) = hinted.parts
    assert hint.kind == "next_relation"
    assert hint.call == NextCall(
        "search_in_neighborhood",
        {"node_index": films[0], "edge_type": "has_genre", "node_type": "genre"},
    )
    added = with_hints.call("add_to_answer", {"node_indices": [zemeckis]})
    (note,) = added.parts
    assert isinstance(note, Note) and note.kind == "passed" and note.nodes == (zemeckis,)


def zemeckis_script(movie_index):
    """Adds the films (the bridge), hops over them to the genres, adds those, finishes."""
    zemeckis = node(movie_index, "Robert Zemeckis")
    films = [node(movie_index, n) for n in ("Forrest Gump", "Cast Away", "Back to the Future")]
    genres = [node(movie_index, n) for n in ("Drama", "Adventure", "Comedy")]
    return (
        [
            tool_call("search_in_graph", query="Robert Zemeckis"),
            tool_call("search_in_neighborhood", node_index=zemeckis, edge_type="directed_by"),
            tool_call("add_to_answer", node_indices=films),
            tool_call("search_in_neighborhood", node_index=films, edge_type="has_genre"),
            tool_call("add_to_answer", node_indices=genres),
            tool_call("finish"),
        ],
        films,
        genres,
    )


def test_agent_with_all_aids_hops_over_the_set(movie_index):
    script, films, genres = zemeckis_script(movie_index)
    llm = ScriptedChatModel(script)
    agent = GuidedAgent(
        movie_index,
        llm,
        AgentConfig(max_steps=8, tools=ToolConfig(multi_neighborhood=True)),
        options=AgentOptions(example=True),
    )
    traj = asyncio.run(agent.run(QUESTION))
    assert traj.stop_reason == "finish" and traj.answer == films + genres
    assert "## A worked example on this graph" in traj.messages[0]["content"]
    hop = traj.steps[3].tool_calls[0]
    assert hop.centers == films and hop.nodes == genres  # the hop over the set ran
    assert traj.config["options"] == {"example": True, "hints": True}


def test_late_fusion_puts_the_last_add_call_first(movie_index):
    script, films, genres = zemeckis_script(movie_index)

    def run(fusion):
        return Retriever(
            movie_index,
            ScriptedChatModel(script),
            n_agents=1,
            max_steps=8,
            fusion=fusion,
            tools=ToolConfig(multi_neighborhood=True),
        ).retrieve(QUESTION)

    assert [r.index for r in run("vote").ranking] == films + genres
    assert [r.index for r in run("late").ranking] == genres + films


def test_a_repeated_call_with_hints_points_at_unexplored_nodes(movie_index):
    zemeckis = node(movie_index, "Robert Zemeckis")
    session = hinted_session(movie_index, QUESTION)
    session.call("search_in_graph", {"query": "Robert Zemeckis"})
    args = {"node_index": zemeckis, "edge_type": "directed_by"}
    films = session.call("search_in_neighborhood", args).nodes
    again = session.call("search_in_neighborhood", args)
    assert again.code == "repeated_call"
    (hint,) = again.parts
    assert hint.kind == "unexplored" and hint.nodes == tuple(films) and hint.calls == ()
    plain = ToolSession(movie_index)
    plain.call("search_in_neighborhood", args)
    assert plain.call("search_in_neighborhood", args).parts == []


def test_an_empty_hop_over_a_set_says_what_the_nodes_link_to(movie_index):
    films = [node(movie_index, n) for n in ("Forrest Gump", "Cast Away")]
    session = ToolSession(movie_index, config=ToolConfig(multi_neighborhood=True))
    out = session.call(
        "search_in_neighborhood",
        {"node_index": films, "edge_type": "directed_by", "node_type": "genre"},
    )
    # Nothing matches; what the nodes link to is there to say so (the words, and the
    # fixed call that keeps the asked type: the golden set's ``empty_hop``).
    assert out.ok and out.nodes == []
    links = {(t, r) for t, r, _, _ in out.result.available}
    assert {("genre", "has_genre"), ("person", "directed_by")} <= links


def test_with_hints_an_empty_answer_near_the_budget_is_pointed_out(movie_index):
    script = [tool_call("search_in_graph", query=f"Robert Zemeckis {i}") for i in range(4)]

    def last_observation(hints):
        agent = (GuidedAgent if hints else Agent)(
            movie_index, ScriptedChatModel(script), AgentConfig(max_steps=4)
        )
        traj = asyncio.run(agent.run(QUESTION))
        return [m["content"] for m in traj.messages if m["role"] == "tool"][-2]

    assert last_observation(True).endswith(
        "(1 step left and your answer is empty: add the nodes from the results above that "
        "answer the question, then finish.)"
    )
    assert last_observation(False).endswith("(1 step left.)")


def test_the_relations_a_question_names_are_found_by_their_words(movie_index):
    schema = movie_index.schema
    assert mentioned(schema, QUESTION) == ["directed_by", "has_genre"]
    assert mentioned(schema, "the films acted by Tom Hanks") == ["starred_actors"]
    assert mentioned(schema, "Who is the director of Big?") == ["directed_by"]
    assert mentioned(schema, "Tell me about Big") == []
    # A node type's name (genre) is what is asked for, not a second use of has_genre.
    (genre,) = named(schema, "the genres that are the genre of the films of Big")
    assert genre.uses == 1 and len(genre.positions) == 2


def test_chain_hint_gives_the_next_named_relation_then_the_add(movie_index):
    schema = movie_index.schema
    hanks = node(movie_index, "Tom Hanks")
    films = [node(movie_index, n) for n in ("Forrest Gump", "Cast Away", "Big")]
    hits = [(f, "movie") for f in films]
    named = mentioned(schema, "Which genres are the films starred by Tom Hanks?")
    # After the first hop: has_genre is named and not followed.
    hint = chain_hint(schema, named, hits, [hanks], ["starred_actors"], multi=True)
    assert hint is not None and hint.kind == "next_relation"
    assert hint.call == _hop(films, "has_genre", "genre")
    single = chain_hint(schema, named, hits, [hanks], ["starred_actors"], multi=False)
    assert single is not None and single.call == _hop(films[0], "has_genre", "genre")
    # Every named relation followed: the ready-made add of the returned nodes.
    genres = [(node(movie_index, n), "genre") for n in ("Drama", "Adventure")]
    done = chain_hint(schema, named, genres, films, ["starred_actors", "has_genre"], multi=True)
    assert done is not None and done.kind == "answer"
    assert done.call == NextCall("add_to_answer", {"node_indices": [g for g, _ in genres]})
    # A named relation the returned nodes do not touch: one hop first, to a type that does.
    people = [(hanks, "person")]
    far = chain_hint(
        schema,
        mentioned(schema, "genres of films by the director of Big"),
        people,
        [films[2]],
        ["directed_by"],
        multi=True,
        centers=[(films[2], "movie")],
        hop=["directed_by"],
    )
    # The hop followed a named relation, so the hint goes on, not back to Big.
    assert far is not None and far.kind == "detour"
    assert far.call == _hop(hanks, "directed_by", "movie")


def test_session_tracks_followed_relations_for_the_chain(movie_index):
    zemeckis = node(movie_index, "Robert Zemeckis")
    hints = ChainHints(movie_index, QUESTION)
    session = ToolSession(
        movie_index, config=ToolConfig(multi_neighborhood=True), observers=[hints]
    )
    films = session.call(
        "search_in_neighborhood", {"node_index": zemeckis, "edge_type": "directed_by"}
    ).nodes
    assert hints.followed == ["directed_by"]
    early = session.call("add_to_answer", {"node_indices": films[:1]})
    (note,) = early.parts
    assert note.kind == "remaining" and note.call == _hop(films[0], "has_genre", "genre")
    genres = session.call("search_in_neighborhood", {"node_index": films, "node_type": "genre"})
    assert hints.followed == ["directed_by", "has_genre"]  # read from the results
    (hint,) = genres.parts
    assert hint.calls[-1] == NextCall("add_to_answer", {"node_indices": genres.nodes})


def test_chain_hint_ignores_stray_typings_of_a_relation():
    from ark.graph import NodeTypeSummary, RelationSummary, Schema

    # A name shared by a movie and a person puts a few directed_by edges on movie->movie.
    schema = Schema(
        (NodeTypeSummary("movie", 100), NodeTypeSummary("person", 80)),
        (
            RelationSummary("directed_by", "movie", "movie", 1),
            RelationSummary("directed_by", "movie", "person", 900),
            RelationSummary("starred_actors", "movie", "person", 2000),
        ),
    )
    hint = chain_hint(
        schema,
        mentioned(schema, "films acted by X were directed by who"),
        [(1, "movie")],
        [0],
        ["starred_actors"],
        multi=False,
    )
    assert hint is not None and hint.call == _hop(1, "directed_by", "person")


def test_the_guided_strategy_is_ark_with_hints_and_the_hop_over_a_set(movie_index):
    script, films, genres = zemeckis_script(movie_index)
    result = Retriever(
        movie_index, ScriptedChatModel(script), strategy="ark-guided", n_agents=1, max_steps=8
    ).retrieve(QUESTION)
    traj = result.trajectories[0]
    assert traj.config["strategy"] == "ark-guided"
    assert traj.config["options"] == {"hints": True, "texts_once": True}
    assert traj.config["tools"]["multi_neighborhood"] is True
    # The chain hint after the first hop, as the model read it: the hop to the genres.
    hint = ChainHints(movie_index, QUESTION)
    replay = ToolSession(movie_index, config=ToolConfig(multi_neighborhood=True), observers=[hint])
    for call in [c for s in traj.steps for c in s.tool_calls][:2]:
        replay.call(call.name, call.arguments)
    assert hint.last_part is not None and hint.last_part.call == _hop(films, "has_genre", "genre")
    assert traj.steps[1].tool_calls[0].observation.endswith(hint.last_part.render())
    hop = traj.steps[3].tool_calls[0]
    assert hop.centers == films and hop.nodes == genres  # the hop over the set ran
    assert [r.index for r in result.ranking] == films + genres


def test_mentions_count_as_uses_and_other_word_forms_match():
    from ark.graph import NodeTypeSummary, RelationSummary, Schema

    schema = Schema(
        (NodeTypeSummary("movie", 100), NodeTypeSummary("person", 80)),
        (
            RelationSummary("directed_by", "movie", "person", 900),
            RelationSummary("starred_actors", "movie", "person", 2000),
            RelationSummary("written_by", "movie", "person", 700),
        ),
    )

    def uses(question):
        return {n.relation: n.uses for n in named(schema, question)}

    # The linker's reading counts mentions; that one mention can be two uses (the films
    # that *share* Big's director) is read from the graph's paths
    # (tests/reading/test_chains.py), with no list of words of sharing.
    assert uses("the director of Big also directed which films") == {"directed_by": 2}
    assert uses("which films share the same actor of Big") == {"starred_actors": 1}
    # Two words of one relation's name are one use.
    assert uses("the film Big starred which actors") == {"starred_actors": 1}
    assert uses("which films did the director of Big also write") == {
        "directed_by": 1,
        "written_by": 1,
    }
    # A compound (screenwriter) and an irregular form (wrote) name written_by.
    assert uses("who is the screenwriter of Big") == {"written_by": 1}
    assert uses("who wrote Big") == {"written_by": 1}
    assert named(schema, "films acted by Tom Hanks")[0].positions == (1,)
    # Mentions far apart are two uses: the films of the director of Big.
    assert uses("the films directed by the director of Big") == {"directed_by": 2}
    assert uses("the films directed by the Big director") == {"directed_by": 2}


def test_the_first_hop_after_a_global_search_is_ready_made(movie_index):
    zemeckis = node(movie_index, "Robert Zemeckis")
    session = hinted_session(movie_index, QUESTION)
    found = session.call("search_in_graph", {"query": "Robert Zemeckis"})
    # The question names directed_by and has_genre; Zemeckis has only directed_by.
    (first,) = found.parts
    assert first.kind == "first_hop" and first.nodes == (zemeckis,)
    assert first.call == _hop(zemeckis, "directed_by", "movie")
    # The relation named nearest the node's name in the question comes first.
    hanks = node(movie_index, "Tom Hanks")
    starring = "who directed the films starring Tom Hanks"
    acted = hinted_session(movie_index, starring)
    (hint,) = acted.call("search_in_graph", {"query": "Tom Hanks"}).parts
    assert hint.call == _hop(hanks, "starred_actors", "movie")
    # Only before the first hop, and only with hints.
    session.call("search_in_neighborhood", {"node_index": zemeckis, "edge_type": "directed_by"})
    again = session.call("search_in_graph", {"query": "Zemeckis"})
    assert [p.kind for p in again.parts] != ["first_hop"]
    plain = ToolSession(movie_index, question=QUESTION).call(
        "search_in_graph", {"query": "Robert Zemeckis"}
    )
    assert plain.parts == []


def test_a_shared_relation_is_followed_twice_before_the_add(movie_index):
    gump, zemeckis = node(movie_index, "Forrest Gump"), node(movie_index, "Robert Zemeckis")
    others = [node(movie_index, n) for n in ("Cast Away", "Back to the Future")]
    hints = ChainHints(movie_index, "Which films share the director of Forrest Gump?")
    session = ToolSession(
        movie_index, config=ToolConfig(multi_neighborhood=True), observers=[hints]
    )
    first = session.call("search_in_neighborhood", {"node_index": gump, "edge_type": "directed_by"})
    # The question uses directed_by twice, followed once so far.
    (hint,) = first.parts
    assert hint.kind == "next_relation" and hint.call == _hop(zemeckis, "directed_by", "movie")
    # The same hop again from the same node is not a second use.
    session.call(
        "search_in_neighborhood",
        {"node_index": gump, "edge_type": "directed_by", "query": "director"},
    )
    assert hints.followed == ["directed_by"]
    films = session.call(
        "search_in_neighborhood", {"node_index": zemeckis, "edge_type": "directed_by"}
    )
    assert hints.followed == ["directed_by", "directed_by"]
    # The film the question starts from is not suggested.
    (done,) = films.parts
    assert done.kind == "answer"
    assert done.call == NextCall("add_to_answer", {"node_indices": others})


def test_a_hop_off_the_chain_points_back_to_where_it_started(movie_index):
    big, hanks = node(movie_index, "Big"), node(movie_index, "Tom Hanks")
    hints = ChainHints(movie_index, "What genre is Big?")
    session = ToolSession(movie_index, observers=[hints])
    # Two relations at once: which one the chain took is unknown, so neither counts.
    session.call(
        "search_in_neighborhood",
        {"node_index": big, "edge_type": ["starred_actors", "directed_by"], "query": "x"},
    )
    assert hints.followed == []
    off = session.call("search_in_neighborhood", {"node_index": big, "edge_type": "starred_actors"})
    assert off.nodes == [hanks]
    # has_genre, which person nodes do not have: back to the movie node it came from.
    (back,) = off.parts
    assert back.kind == "back" and back.call == _hop(big, "has_genre", "genre")


def test_the_first_hop_starts_at_the_node_the_question_names_not_the_top_hit(tmp_path):
    """A query repeating the question's other words ranks a club named "... Football"
    above the player the question names; the hint starts from the player (the reading's
    anchor), not from the top hit."""
    from ark.index import build_index

    lines = [
        "PAULINHO|plays_in_club|Club_Santos",
        "Club_Santos|is_in_country|Brazil",
        "Sebastian_COATES|plays_in_club|Club_Nacional_de_Football",
        "Club_Nacional_de_Football|is_in_country|Uruguay",
        "Luis_SUAREZ|plays_in_club|Club_Barcelona",
        "Club_Barcelona|is_in_country|Spain",
        "PAULINHO_SOUZA|plays_in_club|Club_Barcelona",  # a second Paulinho: a commoner word
        "PAULINHO_ALVES|plays_in_club|Club_Santos",
    ]
    (tmp_path / "kb.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    index = build_index(tmp_path / "kb.txt", tmp_path / "idx")
    question = "where is the football club that PAULINHO plays for ?"
    session = hinted_session(index, question)
    found = session.call("search_in_graph", {"query": "football club paulinho plays for"})
    club, player = node(index, "Club_Nacional_de_Football"), node(index, "PAULINHO")
    hits = [h.index for h in found.result.hits]
    assert hits.index(club) < hits.index(player)  # the search ranks the club first
    (first,) = found.parts
    assert first.kind == "first_hop" and first.nodes == (player,)
    assert first.call is not None and first.call.arguments["node_index"] == player
    # A query of the other words alone does not return the player: the hint names him,
    # says the search did not return him, and the session lets the model explore him.
    other = hinted_session(index, question, refuse_unseen=True)
    clubs = other.call("search_in_graph", {"query": "football club"})
    assert player not in [h.index for h in clubs.result.hits]
    (named,) = clubs.parts
    assert named.kind == "first_hop" and named.nodes == (player,)
    assert named.call == _hop(player, "plays_in_club", "entity")
    hop = other.call("search_in_neighborhood", {"node_index": player, "edge_type": "plays_in_club"})
    assert hop.ok and node(index, "Club_Santos") in hop.nodes


def test_a_chain_no_word_names_is_handed_to_the_model_not_stated(movie_index):
    """The question "which was Big headed by": no relation's words say *headed*, so the chain the
    graph's shape picks (directed_by here, the cast on MetaQA) is a guess; the hint
    lists the node's relations and says none was read, and the later hints claim no
    path either."""
    big = node(movie_index, "Big")
    hints = ChainHints(movie_index, "which was Big headed by")
    assert hints.chain is None and hints.guess is not None and hints.guess.guessed
    assert hints.guess.unexplained == ("headed",)
    session = ToolSession(movie_index, observers=[hints])
    found = session.call("search_in_graph", {"query": "Big"})
    # The node and its relations, none claimed (the text: the golden set); no call.
    (unread,) = found.parts
    assert unread.kind == "unread_hop" and unread.nodes == (big,) and unread.calls == ()
    hop = session.call("search_in_neighborhood", {"node_index": big, "edge_type": "starred_actors"})
    (hint,) = hop.parts  # 'headed' unexplained: the add, not asserted
    assert hint.kind == "unexplained"
    assert hint.calls == (NextCall("add_to_answer", {"node_indices": hop.nodes}),)
    # A relation the question's words name is still read and stated.
    named = ChainHints(movie_index, "which person directed Big")
    assert named.guess is None and named.chain is not None and not named.chain.guessed
    # From a node with relations of one meaning the first hop is the only way on: the
    # path is stated as before (FreebaseQA's marriages and terms of office).
    forced = ChainHints(movie_index, "which was Drama headed by")
    assert forced.chain is not None and forced.chain.guessed and forced.guess is None
