"""The GraphSearch workflow end to end with a scripted model: modules in order, every
call recorded, the answer fused from the verified chain; through the retriever too."""

import json
import re

import pytest

from _doubles import ScriptedChatModel, json_reply
from _helpers import node
from ark.answer import answer_question, answer_retrieval
from ark.llm import LLMError, Message
from ark.retrieval import Retriever, fuse_trajectories
from ark.strategies import (
    AgentConfig,
    GraphSearch,
    GraphSearchConfig,
    recorded_basis,
    strategy_names,
)
from ark.strategies.graphsearch import graphsearch_factory

QUESTION = "which genres are the films directed by [Robert Zemeckis] in"
PLAN = {
    "semantic": ["Which films did Robert Zemeckis direct?", "Which genres are #1 in?"],
    "relational": [
        {"subject": "#1", "relation": "directed_by", "object": "Robert Zemeckis"},
        {"subject": "#1", "relation": "has_genre", "object": "#2"},
    ],
}


def module_of(messages: list[Message]) -> str:
    system = messages[0].content
    for key, name in [
        ("You plan how", "decomposition"),
        ("did not find enough evidence", "expansion"),
        ("You filter", "refinement"),
        ("using only the evidence given", "answer"),  # ark.answer's prompt
        ("You answer a question", "drafting"),
        ("You check", "verification"),
        ("You rewrite", "grounding"),
    ]:
        if key in system:
            return name
    raise AssertionError(f"unknown module prompt: {system[:60]}")


def shown_nodes(messages: list[Message]) -> list[int]:
    return [int(n) for n in re.findall(r"^\[(\d+)\]", messages[1].content, re.M)]


def scripted(index, verdicts=("yes",), expansion=None, keep_all=True):
    """A model that plans PLAN, keeps every node shown, drafts the genres it sees in
    the evidence, and judges by ``verdicts`` in turn."""
    verdicts = list(verdicts)

    def script(messages):
        kind = module_of(messages)
        if kind == "decomposition":
            return json_reply(PLAN)
        if kind == "expansion":
            return json_reply(expansion or {"semantic": [], "relational": []})
        if kind == "refinement":
            return json_reply({"keep": shown_nodes(messages) if keep_all else []})
        if kind == "drafting":
            found = [int(n) for n in re.findall(r"\[(\d+)\] ([^(;]+) \(genre\)",
                                                 messages[1].content) for n in [n[0]]]  # fmt: skip
            return json_reply({"chain": "Zemeckis directed films; their genres.", "answer": found})
        if kind == "answer":
            cited = [int(n) for n in re.findall(r"\[(\d+)\]", messages[1].content)][:2]
            return json_reply(
                {"answerable": True, "answer": "Drama, Adventure and Comedy", "citations": cited}
            )
        if kind == "verification":
            v = verdicts.pop(0) if verdicts else "no"
            return json_reply({"verdict": v, "missing": "" if v == "yes" else "the genres"})
        return json_reply({"text": "Robert Zemeckis"})

    return ScriptedChatModel(script)


def modules(traj):
    return [s.module for s in traj.steps]


def test_graphsearch_is_registered_when_ark_agent_is_imported():
    assert "graphsearch" in strategy_names()


def test_the_workflow_runs_its_modules_in_order_and_records_each(movie_index):
    model = scripted(movie_index)
    retriever = Retriever(movie_index, model, strategy="graphsearch", n_agents=1)
    traj = answer_question(retriever, QUESTION, "q1").retrieval.trajectories[0]
    assert modules(traj) == [
        "query_decomposition",
        "retrieval", "context_refinement",  # S1
        "retrieval", "context_refinement",  # S2, grounded with S1's films
        "retrieval", "context_refinement",  # R1
        "retrieval", "context_refinement",  # R2, from R1's films
        "logic_drafting",
        "evidence_verification",
        "answer_generation",
    ]  # fmt: skip
    assert traj.stop_reason == "finish" and traj.config["strategy"] == "graphsearch"
    model_steps = [s for s in traj.steps if s.module != "retrieval"]
    assert len(model_steps) == len(model.calls) == 8
    assert all(s.prompt_tokens > 0 and json.loads(s.content) for s in model_steps)
    assert all(schema is not None for schema in model.schemas)  # every call structured
    assert traj.usage["prompt_tokens"] == sum(s.prompt_tokens for s in traj.steps)
    # Relational retrieval: R2 explores each film R1 kept, along has_genre.
    r2 = traj.steps[7]
    films = {node(movie_index, n) for n in ("Forrest Gump", "Cast Away", "Back to the Future")}
    assert {c.center for c in r2.tool_calls} == films
    assert all(c.arguments["edge_type"] == "has_genre" and c.relations for c in r2.tool_calls)
    # Semantic grounding put the names S1 kept into S2.
    steps = traj.extra["graphsearch"]["steps"]
    first = movie_index.graph.name(steps[0]["nodes"][0])
    assert "#1" not in steps[1]["grounded"] and first in steps[1]["grounded"]
    genres = {node(movie_index, g) for g in ("Drama", "Adventure", "Comedy")}
    assert set(traj.answer[:3]) == genres and len(traj.answer) == len(set(traj.answer))
    assert traj.to_dict()["steps"][0]["module"] == "query_decomposition"


def test_rejection_expands_the_plan_once_then_stops(movie_index):
    expansion = {
        "semantic": [],
        "relational": [{"subject": "#1", "relation": "has_genre", "object": "#3"}],
    }
    model = scripted(movie_index, verdicts=("no", "no", "no"), expansion=expansion)
    gs = GraphSearch(movie_index, model, AgentConfig(), workflow=GraphSearchConfig(expansions=1))
    import asyncio

    traj = asyncio.run(gs.run(QUESTION))
    mods = modules(traj)
    assert mods.count("evidence_verification") == 2 and mods.count("query_expansion") == 1
    assert mods.index("query_expansion") == mods.index("evidence_verification") + 1
    new = [s for s in traj.extra["graphsearch"]["steps"] if s["origin"] == "expansion"]
    assert [(s["channel"], s["number"]) for s in new] == [("relational", 3)]
    assert traj.stop_reason == "max_steps"  # never verified
    assert traj.answer  # the last draft still ranks


def test_acceptance_skips_expansion_and_zero_rounds_never_expand(movie_index):
    import asyncio

    traj = asyncio.run(GraphSearch(movie_index, scripted(movie_index)).run(QUESTION))
    assert "query_expansion" not in modules(traj)
    no_rounds = GraphSearch(
        movie_index, scripted(movie_index, verdicts=("no",)),
        workflow=GraphSearchConfig(expansions=0, channels=("relational",)),
    )  # fmt: skip
    traj = asyncio.run(no_rounds.run(QUESTION))
    assert "query_expansion" not in modules(traj) and traj.stop_reason == "max_steps"
    assert {s["channel"] for s in traj.extra["graphsearch"]["steps"]} == {"relational"}


def test_the_step_budget_bounds_model_calls_and_still_ranks(movie_index):
    import asyncio

    model = scripted(movie_index)
    gs = GraphSearch(movie_index, model, AgentConfig(max_steps=4))
    traj = asyncio.run(gs.run(QUESTION))
    # The budget bounds the workflow, which writes no answer but records its basis ...
    assert len(model.calls) == 4 and traj.stop_reason == "max_steps"
    assert recorded_basis(traj) is not None and "answer_generation" not in modules(traj)
    # ... and the answer step writes it: one call past the budget.
    retrieval = fuse_trajectories(movie_index, QUESTION, [traj])
    asyncio.run(answer_retrieval(model, movie_index, retrieval))
    assert len(model.calls) == 5 and modules(traj)[-1] == "answer_generation"
    # Budget spent before drafting: the semantic chain's last kept nodes still rank.
    assert traj.answer and "logic_drafting" not in modules(traj)


def test_a_backend_failure_ends_with_error_and_keeps_what_was_found(movie_index):
    import asyncio

    inner = scripted(movie_index)
    calls = {"n": 0}

    def script(messages):
        calls["n"] += 1
        if module_of(messages) == "drafting":
            return LLMError("server down")
        return inner._script(messages)

    traj = asyncio.run(GraphSearch(movie_index, ScriptedChatModel(script)).run(QUESTION))
    assert traj.stop_reason == "error" and "server down" in traj.error
    genres = {node(movie_index, g) for g in ("Drama", "Adventure", "Comedy")}
    assert genres <= set(traj.answer)  # the relational chain's end still ranks


def test_n_workflows_fuse_by_vote_and_a_factory_carries_settings(movie_index):
    r = Retriever(
        movie_index,
        scripted(movie_index, verdicts=("yes",) * 3),
        strategy=graphsearch_factory(GraphSearchConfig(expansions=0)),
        n_agents=3,
    )
    assert r.strategy_name == "graphsearch"
    result = r.retrieve(QUESTION)
    assert len(result.trajectories) == 3
    assert all(t.config["graphsearch"]["expansions"] == 0 for t in result.trajectories)
    assert result.ranking[0].votes == 3


@pytest.mark.parametrize("bad", ["not json at all", '{"semantic": "x"}'])
def test_an_unusable_plan_ends_without_retrieval(movie_index, bad):
    import asyncio

    def script(messages):
        if module_of(messages) == "decomposition":
            return Message(role="assistant", content=bad)
        return scripted(movie_index)._script(messages)

    traj = asyncio.run(GraphSearch(movie_index, ScriptedChatModel(script)).run(QUESTION))
    assert traj.steps[0].note == "reply is not JSON" or bad.startswith("{")
    assert not [s for s in traj.steps if s.module == "retrieval"]
    assert traj.answer == []


@pytest.mark.parametrize(
    "failure", [RuntimeError("backend bug"), ValueError("bad reply"), KeyError("choices")]
)
def test_run_never_raises_whatever_the_backend_raises(movie_index, failure):
    """Not only ArkError: any exception ends the workflow with stop_reason "error"."""
    import asyncio

    inner = scripted(movie_index)

    class Broken(ScriptedChatModel):
        async def complete(self, messages, tools, **kwargs):  # type: ignore[no-untyped-def]
            if module_of(list(messages)) == "drafting":
                raise failure
            return await super().complete(messages, tools, **kwargs)

    traj = asyncio.run(GraphSearch(movie_index, Broken(inner._script)).run(QUESTION))
    assert traj.stop_reason == "error" and type(failure).__name__ in traj.error
    genres = {node(movie_index, g) for g in ("Drama", "Adventure", "Comedy")}
    assert genres <= set(traj.answer)  # what the retrieval found still ranks


def test_a_triple_with_no_known_end_is_grounded_by_the_model_and_still_searches(movie_index):
    """A plan whose first triple has placeholders at both ends (("#1", directed_by,
    "#2"), as a small model writes): the model names the known end, and the channel
    searches from it instead of making no call at all."""
    import asyncio

    plan = {
        "semantic": ["q"],
        "relational": [{"subject": "#1", "relation": "directed_by", "object": "#2"}],
    }
    inner = scripted(movie_index)

    def script(messages):
        if module_of(messages) == "decomposition":
            return json_reply(plan)
        return inner._script(messages)

    gs = GraphSearch(
        movie_index, ScriptedChatModel(script),
        workflow=GraphSearchConfig(expansions=0, channels=("relational",)),
    )  # fmt: skip
    traj = asyncio.run(gs.run(QUESTION))
    mods = modules(traj)
    assert mods[:3] == ["query_decomposition", "query_grounding", "retrieval"]
    calls = traj.steps[2].tool_calls
    zemeckis = node(movie_index, "Robert Zemeckis")
    assert calls[0].name == "search_in_graph" and calls[0].arguments["query"] == "Robert Zemeckis"
    assert {c.center for c in calls[1:]} == {zemeckis}
    assert traj.extra["graphsearch"]["steps"][0]["grounded"] == "Robert Zemeckis"
