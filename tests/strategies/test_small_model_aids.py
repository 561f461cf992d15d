"""What helps a small model carry a chain: hints in observations, the worked example,
the hop over a set and latest-first fusion (all options, tested without a model)."""

import asyncio

from _doubles import ScriptedChatModel, tool_call
from _helpers import hinted_session, node
from ark.graph import DescribedSchema
from ark.linking import RelationLinker
from ark.probes import (
    after_add,
    after_neighborhood,
    chain_hint,
    mentioned_relations,
    named_relations,
    onward_relations,
    worked_example,
)
from ark.retrieval import Retriever
from ark.session import ToolSession
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
    assert hint.startswith("Hint: 2 movie nodes.")
    assert f"search_in_neighborhood(node_index={films}, edge_type=R)" in hint
    assert "has_genre (to genre)" in hint
    single = after_neighborhood(movie_index.schema, hits, [99], multi=False)
    assert "node_index=<one of them>" in single
    # Nothing new (only where it came from): no hint.
    assert after_neighborhood(movie_index.schema, hits[:1], films[:1], multi=True) == ""


def test_reminder_when_adding_a_node_already_explored_past():
    note = after_add(QUESTION, [(5, "Cast Away", "movie")], explored=[5])
    assert "[5] Cast Away (movie)" in note and QUESTION in note
    assert after_add(QUESTION, [(7, "Drama", "genre")], explored=[5]) == ""


def test_session_appends_hints_only_when_asked(movie_index):
    zemeckis = node(movie_index, "Robert Zemeckis")
    args = {"node_index": zemeckis, "edge_type": "directed_by"}
    plain = ToolSession(movie_index).call("search_in_neighborhood", args)
    with_hints = hinted_session(movie_index, QUESTION)
    hinted = with_hints.call("search_in_neighborhood", args)
    assert hinted.observation.startswith(plain.observation)
    assert "Hint: 3 movie nodes." in hinted.observation and "Hint" not in plain.observation
    # The question names has_genre, not followed yet: the next call, ready to copy.
    assert 'edge_type="has_genre", node_type="genre")' in hinted.observation
    added = with_hints.call("add_to_answer", {"node_indices": [zemeckis]})
    assert "Note: you explored the neighbors of" in added.observation
    assert QUESTION in added.observation


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
    observations = [m["content"] for m in traj.messages if m["role"] == "tool"]
    assert "Neighbors of 3 nodes" in observations[3] and "Hint: 3 genre nodes." in observations[3]
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
    assert f"Hint: not explored yet from your latest results: [{films[0]}]" in again.observation
    plain = ToolSession(movie_index)
    plain.call("search_in_neighborhood", args)
    assert "Hint" not in plain.call("search_in_neighborhood", args).observation


def test_an_empty_hop_over_a_set_says_what_the_nodes_link_to(movie_index):
    films = [node(movie_index, n) for n in ("Forrest Gump", "Cast Away")]
    session = ToolSession(movie_index, config=ToolConfig(multi_neighborhood=True))
    out = session.call(
        "search_in_neighborhood",
        {"node_index": films, "edge_type": "directed_by", "node_type": "genre"},
    )
    assert "No neighbor matches these filters" in out.observation
    assert (
        f'Try search_in_neighborhood(node_index={films}, edge_type="has_genre", '
        'node_type="genre")' in out.observation
    )


def test_an_empty_hop_over_a_set_keeps_the_asked_type_when_fixing_filters(movie_index):
    films = [node(movie_index, n) for n in ("Forrest Gump", "Cast Away")]
    session = ToolSession(movie_index, config=ToolConfig(multi_neighborhood=True))
    out = session.call(
        "search_in_neighborhood",
        {"node_index": films, "edge_type": "starred_actors", "node_type": "genre"},
    )
    assert 'edge_type="has_genre", node_type="genre"' in out.observation
    # Where no relation leads to the asked type, the edge is kept and the type fixed.
    out = session.call(
        "search_in_neighborhood",
        {"node_index": films, "edge_type": "directed_by", "node_type": "year"},
    )
    assert 'edge_type="directed_by", node_type="person"' in out.observation


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
    assert f'search_in_neighborhood(node_index={films}, edge_type="has_genre", ' in hint
    single = chain_hint(schema, named, hits, [hanks], ["starred_actors"], multi=False)
    assert f"search_in_neighborhood(node_index={films[0]}, " in single
    # Every named relation followed: the ready-made add of the returned nodes.
    genres = [(node(movie_index, n), "genre") for n in ("Drama", "Adventure")]
    done = chain_hint(schema, named, genres, films, ["starred_actors", "has_genre"], multi=True)
    assert f"Add them now: add_to_answer(node_indices={[g for g, _ in genres]})" in done
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
    assert 'edge_type="directed_by", node_type="movie")' in far and "Hop to them first" in far


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
    assert "the question also names has_genre, not followed yet" in early.observation
    genres = session.call("search_in_neighborhood", {"node_index": films, "node_type": "genre"})
    assert hints.followed == ["directed_by", "has_genre"]  # read from the results
    assert f"add_to_answer(node_indices={genres.nodes})" in genres.observation


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
    assert 'edge_type="directed_by", node_type="person")' in hint


def test_the_guided_strategy_is_ark_with_hints_and_the_hop_over_a_set(movie_index):
    script, films, genres = zemeckis_script(movie_index)
    result = Retriever(
        movie_index, ScriptedChatModel(script), strategy="ark-guided", n_agents=1, max_steps=8
    ).retrieve(QUESTION)
    traj = result.trajectories[0]
    assert traj.config["strategy"] == "ark-guided"
    assert traj.config["options"] == {"hints": True, "texts_once": True}
    assert traj.config["tools"]["multi_neighborhood"] is True
    observations = [m["content"] for m in traj.messages if m["role"] == "tool"]
    assert 'edge_type="has_genre", node_type="genre")' in observations[1]  # the chain hint
    assert "Neighbors of 3 nodes" in observations[3]  # the hop over the set ran
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
    # (tests/linking/test_chains.py), with no list of words of sharing.
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
    assert found.observation.endswith(
        f"Hint: [{zemeckis}] Robert Zemeckis (person) matches the question best; the "
        f"question names directed_by, which it has: search_in_neighborhood(node_index="
        f'{zemeckis}, edge_type="directed_by", node_type="movie").'
    )
    # The relation named nearest the node's name in the question comes first.
    hanks = node(movie_index, "Tom Hanks")
    starring = "who directed the films starring Tom Hanks"
    acted = hinted_session(movie_index, starring)
    hint = acted.call("search_in_graph", {"query": "Tom Hanks"}).observation
    assert f'(node_index={hanks}, edge_type="starred_actors", node_type="movie")' in hint
    # Only before the first hop, and only with hints.
    session.call("search_in_neighborhood", {"node_index": zemeckis, "edge_type": "directed_by"})
    again = session.call("search_in_graph", {"query": "Zemeckis"})
    assert "matches the question best" not in again.observation
    plain = ToolSession(movie_index, question=QUESTION).call(
        "search_in_graph", {"query": "Robert Zemeckis"}
    )
    assert "Hint" not in plain.observation


def test_a_shared_relation_is_followed_twice_before_the_add(movie_index):
    gump, zemeckis = node(movie_index, "Forrest Gump"), node(movie_index, "Robert Zemeckis")
    others = [node(movie_index, n) for n in ("Cast Away", "Back to the Future")]
    hints = ChainHints(movie_index, "Which films share the director of Forrest Gump?")
    session = ToolSession(
        movie_index, config=ToolConfig(multi_neighborhood=True), observers=[hints]
    )
    first = session.call("search_in_neighborhood", {"node_index": gump, "edge_type": "directed_by"})
    assert (
        "The question uses directed_by twice, followed once so far: search_in_neighborhood("
        f'node_index={zemeckis}, edge_type="directed_by", node_type="movie")'
    ) in first.observation
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
    assert films.observation.endswith(
        f"Add them now: add_to_answer(node_indices={others}), then finish."
    )


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
    assert off.observation.endswith(
        "The question names has_genre, which person nodes do not have; the movie node you "
        f'came from does: search_in_neighborhood(node_index={big}, edge_type="has_genre", '
        'node_type="genre").'
    )


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
    assert f"Hint: [{player}] PAULINHO" in found.observation
    assert f"node_index={player}, " in found.observation
    assert f"[{club}] Club_Nacional_de_Football (entity) matches" not in found.observation
    # A query of the other words alone does not return the player: the hint names him,
    # says the search did not return him, and the session lets the model explore him.
    other = hinted_session(index, question, refuse_unseen=True)
    clubs = other.call("search_in_graph", {"query": "football club"})
    assert player not in [h.index for h in clubs.result.hits]
    assert clubs.observation.splitlines()[-1] == (
        f"Hint: [{player}] PAULINHO (entity) is the node the question names, and this search "
        "did not return it; the question names plays_in_club, which it has: "
        f'search_in_neighborhood(node_index={player}, edge_type="plays_in_club", '
        'node_type="entity").'
    )
    hop = other.call("search_in_neighborhood", {"node_index": player, "edge_type": "plays_in_club"})
    assert "Club_Santos" in hop.observation


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
    assert found.observation.splitlines()[-1] == (
        f"Hint: [{big}] Big (movie) matches the question best. No relation's name or words "
        "match 'headed' in the question, so no path was read from it. Its relations: "
        "directed_by (1 person); starred_actors (1 person); has_genre (1 genre). Explore it "
        f"along the one that answers the question: search_in_neighborhood(node_index={big}, "
        "edge_type=...)."
    )
    hop = session.call("search_in_neighborhood", {"node_index": big, "edge_type": "starred_actors"})
    assert "path read" not in hop.observation and "names" not in hop.observation
    assert "No relation followed so far explains 'headed'" in hop.observation
    # A relation the question's words name is still read and stated.
    named = ChainHints(movie_index, "which person directed Big")
    assert named.guess is None and named.chain is not None and not named.chain.guessed
    # From a node with relations of one meaning the first hop is the only way on: the
    # path is stated as before (FreebaseQA's marriages and terms of office).
    forced = ChainHints(movie_index, "which was Drama headed by")
    assert forced.chain is not None and forced.chain.guessed and forced.guess is None
