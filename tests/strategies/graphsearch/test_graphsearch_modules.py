"""GraphSearch's modules one by one, each driven by a scripted model on a tiny graph."""

import asyncio

from _doubles import ScriptedChatModel, json_reply, prose
from _helpers import node
from ark.session import ToolSession
from ark.strategies.graphsearch import modules as m
from ark.strategies.graphsearch import prompts


def asker(model: ScriptedChatModel, seen: list[str]):
    """An ``Ask`` over a scripted model that notes which modules called."""

    async def ask(module, system, user, schema, max_tokens):
        seen.append(module)
        from ark.llm import Message

        out = await model.complete(
            [Message(role="system", content=system), Message(role="user", content=user)],
            (),
            response_schema=schema,
            max_tokens=max_tokens,
        )
        return out.data

    return ask


def run(coro):
    return asyncio.run(coro)


def test_plan_maps_relations_to_the_schema_and_drops_what_does_not_fit():
    relations = ["directed_by", "has_genre", "starred_actors"]
    data = {
        "semantic": ["Which films did  Robert Zemeckis direct?", "  ", "Which genres are #1?"],
        "relational": [
            {"subject": "#1", "relation": "Directed By", "object": "Robert Zemeckis"},
            {"subject": "#1", "relation": "has_genres", "object": "#2"},  # near miss: mapped
            {"subject": "x", "relation": "born_in", "object": "#3"},  # no such relation
            {"subject": "", "relation": "has_genre", "object": "#4"},
            "not a triple",
        ],
    }
    semantic, relational = m.parse_plan(data, relations)
    assert [s.text for s in semantic] == [
        "Which films did Robert Zemeckis direct?",
        "Which genres are #1?",
    ]
    assert [s.number for s in semantic] == [1, 3]  # numbering follows what the model wrote
    assert [(s.triple.relation, s.number) for s in relational] == [
        ("directed_by", 1),
        ("has_genre", 2),
    ]
    assert m.parse_plan("prose", relations) == ([], [])
    later, _ = m.parse_plan({"semantic": ["q"]}, relations, first=(4, 2), origin="expansion")
    assert later[0].number == 4 and later[0].origin == "expansion"


def test_decomposition_asks_under_a_schema_that_enumerates_the_graph_relations(movie_index):
    reply = {
        "semantic": ["Which films did Robert Zemeckis direct?"],
        "relational": [{"subject": "#1", "relation": "directed_by", "object": "Robert Zemeckis"}],
    }
    model, seen = ScriptedChatModel([json_reply(reply)]), []
    semantic, relational = run(
        m.decompose(asker(model, seen), "films by [Robert Zemeckis]", movie_index.schema)
    )
    assert seen == ["query_decomposition"]
    schema = model.schemas[0]
    enum = schema["properties"]["relational"]["items"]["properties"]["relation"]["enum"]
    assert set(enum) == set(movie_index.schema.relation_names)
    assert "directed_by" in model.calls[0][0].content  # the schema is in the prompt
    assert len(semantic) == 1 and relational[0].triple == m.Triple(
        "#1", "directed_by", "Robert Zemeckis"
    )


def test_grounding_fills_placeholders_from_earlier_answers_and_asks_only_when_it_must():
    answers = {1: ["Forrest Gump", "Cast Away", "Big", "Back to the Future"], 2: []}
    assert m.ground_text("Which genres are #1 in?", answers, own=2) == (
        "Which genres are Forrest Gump, Cast Away, Big in?"
    )
    assert m.ground_text("(#1, has_genre, #2)", answers, own=2) == (
        "(Forrest Gump, Cast Away, Big, has_genre, #2)"
    )  # the step's own unknown stays
    assert m.ground_text("Who acted in #2?", answers, own=3) is None  # step 2 found nothing
    model, seen = ScriptedChatModel([json_reply({"text": "Robert Zemeckis"})]), []
    step = m.SubQuery(m.SEMANTIC, 3, "Who acted in #2?")
    question = "Who acted in the films Robert Zemeckis directed?"
    got = run(m.ground(asker(model, seen), step, "S2 ... -> nothing found", question))
    assert got == "Robert Zemeckis"
    assert seen == ["query_grounding"]
    assert question in model.calls[0][1].content  # the question is the clue to #2
    assert run(m.ground(asker(ScriptedChatModel([prose("no idea")]), []), step, "")) == ""


def test_relational_retrieval_anchors_by_name_then_follows_the_relation(movie_index):
    session = ToolSession(movie_index, answer_tools=False, detect_repeats=False)
    step = m.SubQuery(m.RELATIONAL, 1, "", m.Triple("#1", "directed_by", "[Robert Zemeckis]"))
    calls = m.retrieve_relational(session, step, {}, None)
    assert [name for name, _, _ in calls] == ["search_in_graph", "search_in_neighborhood"]
    zemeckis = node(movie_index, "Robert Zemeckis")
    _, args, outcome = calls[1]
    assert args == {"node_index": zemeckis, "edge_type": "directed_by"}
    assert outcome.center == zemeckis
    films = {node(movie_index, n) for n in ("Forrest Gump", "Cast Away", "Back to the Future")}
    assert set(m.candidates_of(calls)) == films  # the anchor search is not a candidate
    # Step 2 starts from step 1's nodes: no search, one neighborhood per anchor.
    step2 = m.SubQuery(m.RELATIONAL, 2, "", m.Triple("#1", "has_genre", "#2"))
    forrest, cast_away = node(movie_index, "Forrest Gump"), node(movie_index, "Cast Away")
    calls = m.retrieve_relational(session, step2, {1: [forrest, cast_away]}, None)
    assert [(n, a["node_index"]) for n, a, _ in calls] == [
        ("search_in_neighborhood", forrest),
        ("search_in_neighborhood", cast_away),
    ]
    names = {movie_index.graph.name(n) for n in m.candidates_of(calls)}
    assert names == {"Drama", "Adventure"}
    assert calls[0][2].relations() == [[{"type": "has_genre", "direction": "out"}]]


def test_relational_retrieval_without_a_matching_edge_ranks_the_whole_neighborhood(movie_index):
    session = ToolSession(movie_index, answer_tools=False, detect_repeats=False)
    step = m.SubQuery(m.RELATIONAL, 1, "", m.Triple("Big", "written_by", "#1"))
    calls = m.retrieve_relational(session, step, {}, None)
    assert [n for n, _, _ in calls] == [
        "search_in_graph",
        "search_in_neighborhood",
        "search_in_neighborhood",
    ]
    assert not calls[1][2].nodes and "edge_type" not in calls[2][1]
    assert calls[2][2].nodes  # Big's neighbors, ranked by the relation's words


def test_refinement_keeps_only_shown_nodes_and_relational_steps_keep_their_edges(movie_index):
    session = ToolSession(movie_index, answer_tools=False, detect_repeats=False)
    step = m.SubQuery(m.RELATIONAL, 1, "", m.Triple("#1", "directed_by", "Robert Zemeckis"))
    calls = m.retrieve_relational(session, step, {}, None)
    forrest, big = node(movie_index, "Forrest Gump"), node(movie_index, "Big")
    model, seen = ScriptedChatModel([json_reply({"keep": [forrest, big, forrest, 10**6]})]), []
    kept = run(m.refine(asker(model, seen), "q", step, "films by Zemeckis", calls))
    assert kept == [forrest]  # Big was never shown; duplicates and strangers dropped
    assert "Forrest Gump" in model.calls[0][1].content
    # Keeping nothing of a relation-filtered neighborhood keeps the neighborhood.
    nothing = ScriptedChatModel([json_reply({"keep": []})])
    kept = run(m.refine(asker(nothing, []), "q", step, "films by Zemeckis", calls))
    assert set(kept) == set(m.candidates_of(calls)) and len(kept) == 3
    # A semantic step that keeps nothing has nothing.
    sem = m.SubQuery(m.SEMANTIC, 1, "Zemeckis films")
    sem_calls = m.retrieve_semantic(session, "Robert Zemeckis")
    assert run(m.refine(asker(ScriptedChatModel([json_reply({"keep": []})]), []), "q", sem,
                        "Zemeckis films", sem_calls)) == []  # fmt: skip
    # Nothing retrieved: no model call at all.
    idle, seen = ScriptedChatModel([]), []
    assert run(m.refine(asker(idle, seen), "q", sem, "x", [])) == [] and seen == []


def test_drafting_answers_from_evidence_and_verification_reads_yes_as_accept():
    model, seen = (
        ScriptedChatModel(
            [
                json_reply(
                    {"chain": "Zemeckis directed Forrest Gump, a drama.", "answer": [7, 99, 7]}
                ),
                json_reply({"verdict": "yes", "missing": ""}),
                json_reply({"verdict": "no", "missing": "the genres"}),
                prose("I think so"),
            ],
            per_call=True,
        ),
        [],
    )
    ask = asker(model, seen)
    chain, answer = run(m.draft(ask, "q", "S1 ... -> [7] Drama (genre)", [7, 8]))
    assert chain.startswith("Zemeckis") and answer == [7]
    yes = run(m.verify(ask, "q", "ev", chain, "[7] Drama"))
    assert (yes.accepted, yes.missing, yes.valid) == (True, "", True)
    no = run(m.verify(ask, "q", "ev", chain, "[7] Drama"))
    assert (no.accepted, no.missing, no.valid) == (False, "the genres", True)
    bad = run(m.verify(ask, "q", "ev", chain, ""))  # no JSON: not accepted, and counted
    assert (bad.accepted, bad.valid) == (False, False)
    assert seen == ["logic_drafting"] + ["evidence_verification"] * 3
    assert model.schemas[1] == prompts.VERIFICATION_SCHEMA


def test_expansion_numbers_new_steps_after_the_existing_ones(movie_index):
    reply = {
        "semantic": ["Which genre is Cast Away?"],
        "relational": [{"subject": "#2", "relation": "has_genre", "object": "#4"}],
    }
    model, seen = ScriptedChatModel([json_reply(reply)]), []
    semantic, relational = run(
        m.expand(asker(model, seen), "q", movie_index.schema, "ev", "genres", (3, 4))
    )
    assert seen == ["query_expansion"]
    assert (semantic[0].number, relational[0].number) == (3, 4)
    assert {s.origin for s in semantic + relational} == {"expansion"}
    assert model.schemas[0]["properties"]["semantic"]["maxItems"] == prompts.MAX_NEW_STEPS


def test_the_document_schemas_compile_to_local_grammars():
    """The schemas a graph built from documents uses (free-text relations, reading)
    decode under llama.cpp's grammar as the others do."""
    import importlib.util

    import pytest

    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed")
    from llama_cpp import LlamaGrammar

    from ark.llm.local import json_grammar

    for schema in (
        prompts.plan_schema(["born in", "mentions"], free=True),
        prompts.reading_schema([4, 5, 6]),
    ):
        LlamaGrammar.from_string(json_grammar(schema), verbose=False)
    assert '"\\"born in\\""' not in json_grammar(prompts.plan_schema(["born in"], free=True))
