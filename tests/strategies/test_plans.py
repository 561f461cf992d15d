"""The reading's plan run without the model (issue 62): the calls hints offer as
parts, the plan's run through the session, the fitted confidence, and the agent that
runs a sure plan with no model call and asks the model otherwise."""

import asyncio
import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from _doubles import ScriptedChatModel, json_reply, tool_call
from _helpers import hinted_session, node
from _passages_fixture import LENA, P_HARBOUR, P_LENA, build_document_index
from _passages_fixture import QUESTION as DOC_QUESTION
from ark.distill import fit_plans
from ark.index import Index, build_index, open_index, save_described
from ark.probes import FINISH_READ_NOTE, after_neighborhood
from ark.retrieval import Retriever
from ark.session import Hint, NextCall
from ark.strategies import Agent, AgentConfig, AgentOptions, StrategyContext
from ark.strategies.guided import GuidedOptions, guided_agent
from ark.strategies.guided.plans import (
    FEATURES,
    FIT_KEY,
    PlanModel,
    calibration_error,
    calls_in,
    choice_schema,
    concluding_add,
    fit_model,
    plan_features,
    plan_model,
    read_choice,
    reading_digest,
    reading_finishes,
    ready_call,
    run_plan,
)
from ark.tools import GraphTools, ToolConfig
from ark.trajectory import StepRecord, Trajectory

QUESTION = "Which genres do the films directed by Robert Zemeckis belong to?"

# -- the calls a hint's part offers ------------------------------------------------------


def test_the_one_call_a_part_offers_is_the_plans_with_its_arguments():
    hop = NextCall(
        "search_in_neighborhood",
        {"node_index": [3, 7], "edge_type": "directed_by", "node_type": "movie"},
    )
    part = Hint("[3] X (person) matches ...", "first_hop", (hop,), (3,))
    assert ready_call(part) == ("search_in_neighborhood", hop.arguments)
    # A copy: the plan's run never changes the part it came from.
    ready_call(part)[1]["node_index"].append(9)  # type: ignore[index]
    assert hop.arguments["node_index"] == [3, 7]
    add = NextCall("add_to_answer", {"node_indices": [4, 5]})
    assert ready_call(Hint("...", "answer", (add,))) == ("add_to_answer", {"node_indices": [4, 5]})


def test_a_template_or_a_choice_is_no_ready_call(movie_index):
    films = [node(movie_index, n) for n in ("Forrest Gump", "Cast Away")]
    # A template (``edge_type=R``) is no call.
    template = after_neighborhood(movie_index.schema, [(f, "movie") for f in films], [], multi=True)
    assert template is not None and template.calls == () and ready_call(template) is None
    # A hop and an add: a choice, the model's.
    hop = NextCall("search_in_neighborhood", {"node_index": 2, "edge_type": "has_genre"})
    add = NextCall("add_to_answer", {"node_indices": [2]})
    choice = Hint("...", "unexplained", (hop, add))
    assert calls_in(choice) == [(hop.tool, hop.arguments), (add.tool, add.arguments)]
    assert ready_call(choice) is None and ready_call(None) is None and calls_in(None) == []


# -- the plan's run ---------------------------------------------------------------------


def test_the_plan_runs_the_chain_to_its_finish_with_the_answer(movie_index):
    session = hinted_session(movie_index, QUESTION, multi=True, refuse_unseen=True)
    hints = session.observers[0]
    run = run_plan(session, hints, 8)
    assert run.complete and session.finished
    names = [s.name for s in run.steps]
    assert names == [
        "search_in_graph",
        "search_in_neighborhood",
        "search_in_neighborhood",
        "add_to_answer",
        "finish",
    ]
    assert run.steps[0].arguments == {"query": "Robert Zemeckis"}
    genres = {node(movie_index, n) for n in ("Drama", "Adventure", "Comedy")}
    assert set(run.answer) == genres == set(session.answer)


def test_the_plan_stops_where_the_budget_ends_and_leaves_the_session_there(movie_index):
    session = hinted_session(movie_index, QUESTION, multi=True, refuse_unseen=True)
    run = run_plan(session, session.observers[0], 2)
    assert run.stop == "max steps" and not run.complete and not session.finished
    assert len(run.steps) == 2 and not session.answer


def test_no_plan_for_a_question_naming_no_node(movie_index):
    session = hinted_session(movie_index, "Which genres are there?", multi=True)
    run = run_plan(session, session.observers[0], 8)
    assert run.stop == "no plan" and not run.steps


# -- the confidence ---------------------------------------------------------------------


def test_the_fit_recovers_a_feature_that_decides_and_is_calibrated():
    rng = random.Random(0)
    rows, labels = [], []
    for _ in range(2000):
        row = {name: rng.gauss(0, 1) for name in FEATURES}
        p = 1 / (1 + pow(2.718281828, -(2.0 * row["margin"] - 1.0)))
        rows.append(row)
        labels.append(rng.random() < p)
    model = fit_model(rows, labels)
    by_name = dict(zip(model.features, model.weights[1:], strict=True))
    assert by_name["margin"] * model.scale[model.features.index("margin")] > 0
    assert max(abs(w) for n, w in by_name.items() if n != "margin") < 0.3
    predicted = [model.confidence(r) for r in rows]
    assert calibration_error(predicted, labels) < 0.05
    assert PlanModel.from_dict(json.loads(json.dumps(model.to_dict()))).confidence(
        rows[0]
    ) == pytest.approx(model.confidence(rows[0]), abs=1e-4)


def test_calibration_error_is_the_gap_between_said_and_seen():
    assert calibration_error([1.0, 1.0], [True, True]) == 0.0
    assert calibration_error([0.5, 0.5, 0.5, 0.5], [True] * 4) == pytest.approx(0.5)
    assert calibration_error([0.9, 0.1], [False, True]) == pytest.approx(0.9)


# -- a graph large enough to fit on -----------------------------------------------------


def _movie_triples(seed: int = 0) -> str:
    """A generated film graph: 80 films, their directors, actors, writers, genres and
    years (names that read as names, several sharing a word)."""
    rng = random.Random(seed)
    first = ["Anna", "Boris", "Clara", "David", "Elena", "Felix", "Greta", "Hugo", "Iris"]
    last = ["Stone", "Rivers", "Marsh", "Hale", "Frost", "Vance", "Moreau", "Quill"]
    people = [f"{f} {s}" for f in first for s in last]
    words = ["Night", "River", "Silent", "Red", "Last", "Summer", "Glass", "Iron", "Storm"]
    genres = ["Drama", "Comedy", "Thriller", "Western", "Horror", "Romance"]
    lines = []
    for i in range(80):
        film = f"The {rng.choice(words)} {rng.choice(words)} {i}"
        lines.append(f"{film}|directed_by|{rng.choice(people)}")
        for actor in rng.sample(people, 3):
            lines.append(f"{film}|starred_actors|{actor}")
        lines.append(f"{film}|written_by|{rng.choice(people)}")
        lines.append(f"{film}|has_genre|{rng.choice(genres)}")
        lines.append(f"{film}|release_year|{1950 + rng.randrange(60)}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def fitted_index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    root: Path = tmp_path_factory.mktemp("plans")
    (root / "kb.txt").write_text(_movie_triples(), encoding="utf-8")
    index = build_index(root / "kb.txt", root / "idx")
    fit_plans(index, 90, seed=0)
    return open_index(root / "idx")


@pytest.mark.slow
def test_a_fit_is_stored_in_the_index_with_the_reading_it_was_made_for(fitted_index):
    model, why = plan_model(fitted_index)
    assert model is not None, why
    assert model.features == tuple(FEATURES)
    info = model.info
    assert info["n"] == 90 and 10 <= info["complete"] <= 90 and info["right"] > 0
    assert info["reading"] == reading_digest(fitted_index)
    assert 0.0 <= info["held_out_calibration_error"] <= 1.0
    # Described again, the reading is another: the fit is stale and says so.
    described = fitted_index.described
    other = described.with_fit(FIT_KEY, {**described.fits[FIT_KEY]})
    first = other.relations[0]

    changed = replace(other, relations=(replace(first, aliases=("helmed",)), *other.relations[1:]))
    root = fitted_index.path.parent / "copy"
    import shutil

    shutil.copytree(fitted_index.path, root)
    copy = open_index(root)
    save_described(copy, changed)
    stale, why = plan_model(open_index(root))
    assert stale is None and "described again" in why


@pytest.mark.slow
def test_a_fit_made_by_another_version_of_the_reading_is_stale(fitted_index, monkeypatch):
    import ark.reading

    assert plan_model(open_index(fitted_index.path))[0] is not None
    monkeypatch.setattr(ark.reading, "READING_VERSION", ark.reading.READING_VERSION + 1)
    stale, why = plan_model(open_index(fitted_index.path))
    assert stale is None and "another version of ARK's reading" in why


def test_an_index_without_a_fit_runs_no_plan_and_says_why(movie_index):
    model, why = plan_model(movie_index)
    assert model is None and "ark index fit-plans" in why


# -- the agent --------------------------------------------------------------------------


def _store_sure_fit(index: Index, **weights: float) -> None:
    """A fit that is sure of every plan (the bias alone, and any feature's ``weights``
    by name), stored as fit-plans would."""
    n = len(FEATURES)
    model = PlanModel(
        tuple(FEATURES),
        (0.0,) * n,
        (1.0,) * n,
        (10.0, *(weights.get(name, 0.0) for name in FEATURES)),
        {"n": 1, "reading": reading_digest(index)},
    )
    save_described(index, index.described.with_fit(FIT_KEY, model.to_dict()))


@pytest.fixture
def sure_index(movie_index: Index, tmp_path: Path) -> Index:
    """A copy of the agent tests' movie graph, with a fit that is sure of every plan."""
    import shutil

    shutil.copytree(movie_index.path, tmp_path / "idx")
    index = open_index(tmp_path / "idx")
    _store_sure_fit(index)
    return open_index(tmp_path / "idx")


def _guided(
    index: Index, llm: ScriptedChatModel, threshold: float | None, *, choose: bool = False
) -> Agent:
    config = AgentConfig(max_steps=8, plan_threshold=threshold)
    agent = guided_agent(
        StrategyContext(index=index, llm=llm, tools=GraphTools(index), config=config)
    )
    if choose:
        agent.guided = GuidedOptions(choose_plans=True)
    return agent


def test_a_sure_plan_answers_with_no_model_call(sure_index):
    llm = ScriptedChatModel([])
    traj = asyncio.run(_guided(sure_index, llm, 0.6).run(QUESTION))
    assert llm.calls == []  # the model was never asked
    genres = {node(sure_index, n) for n in ("Drama", "Adventure", "Comedy")}
    assert set(traj.answer) == genres and traj.stop_reason == "finish"
    assert [s.by for s in traj.steps] == ["plan"] * 5
    assert all(s.llm_latency_s == 0 and s.prompt_tokens == 0 for s in traj.steps)
    assert traj.config["plan"]["ran"] and traj.config["plan"]["confidence"] > 0.99
    # The conversation holds the plan's calls and observations as a model's would.
    roles = [m["role"] for m in traj.messages]
    assert roles == ["system", "user"] + ["assistant", "tool"] * 5
    # Read back from its file, a step still says the plan ran it.
    again = Trajectory.from_dict(json.loads(json.dumps(traj.to_dict())))
    assert [s.by for s in again.steps] == ["plan"] * 5


def test_below_the_threshold_or_switched_off_the_model_runs_every_step(sure_index):
    for threshold in (None, 2.0):
        llm = ScriptedChatModel([tool_call("search_in_graph", query="Robert Zemeckis")])
        traj = asyncio.run(_guided(sure_index, llm, threshold).run(QUESTION))
        assert llm.calls and all(s.by is None for s in traj.steps)
        if threshold is not None:
            assert traj.config["plan"]["ran"] is False
            assert traj.config["plan"]["confidence"] > 0.99  # sure, but not sure enough


def test_without_a_fit_the_model_runs_and_the_record_says_why(movie_index):
    llm = ScriptedChatModel([tool_call("search_in_graph", query="Robert Zemeckis")])
    traj = asyncio.run(_guided(movie_index, llm, 0.6).run(QUESTION))
    assert llm.calls and traj.config["plan"] == {
        "threshold": 0.6,
        "ran": False,
        "why": plan_model(movie_index)[1],
    }


def test_the_paper_loop_never_runs_a_plan(sure_index):
    llm = ScriptedChatModel([tool_call("search_in_graph", query="Robert Zemeckis")])
    agent = Agent(sure_index, llm, AgentConfig(plan_threshold=0.6), options=AgentOptions())
    traj = asyncio.run(agent.run(QUESTION))
    assert llm.calls and "plan" not in traj.config


def test_the_retriever_passes_its_threshold_to_the_guided_agents(sure_index):
    llm = ScriptedChatModel([])
    result = Retriever(
        sure_index,
        llm,
        strategy="ark-guided",
        n_agents=2,
        max_steps=8,
        tools=ToolConfig(),
        plan_threshold=0.6,
    ).retrieve(QUESTION)
    assert llm.calls == [] and len(result.trajectories) == 2
    assert {r.name for r in result.ranking} == {"Drama", "Adventure", "Comedy"}
    off = ScriptedChatModel([])
    Retriever(sure_index, off, strategy="ark-guided", n_agents=1, plan_threshold=None).retrieve(
        QUESTION
    )
    assert off.calls


def test_a_step_record_without_by_reads_as_the_models():
    assert (
        StepRecord.from_dict(
            {
                "index": 0,
                "llm_latency_s": 1,
                "prompt_tokens": 1,
                "completion_tokens": 1,
                "content": "",
            }
        ).by
        is None
    )


def test_why_and_the_viewer_say_which_steps_the_plan_ran(sure_index):
    from ark.probes import viewer_trajectory
    from ark.retrieval import render_evidence

    result = Retriever(
        sure_index, ScriptedChatModel([]), strategy="ark-guided", n_agents=1, max_steps=8
    ).retrieve(QUESTION)
    lines = render_evidence(result.evidence[0], sure_index.graph)
    assert "added by agent 1 at step 4 (run by the plan)" in lines[0]
    assert result.evidence[0].added_by[0].to_dict()["by"] == "plan"
    data = viewer_trajectory(result.trajectories[0])
    assert [s["by"] for s in data["steps"]] == ["plan"] * 5


def test_the_plan_s_steps_are_no_model_calls_in_the_cost(sure_index):
    from ark.cost import trajectory_cost

    traj = asyncio.run(_guided(sure_index, ScriptedChatModel([]), 0.6).run(QUESTION))
    cost = trajectory_cost(traj)
    assert cost["llm_calls"] == 0 and cost["plan_steps"] == 5 and cost["cache_hits"] == 0


def test_an_add_that_adds_nothing_new_ends_the_plan(movie_index):
    from ark.strategies.guided.plans import PlanStep, next_call

    session = hinted_session(movie_index, QUESTION, multi=True, refuse_unseen=True)
    hints = session.observers[0]
    run = run_plan(session, hints, 3)  # search and both hops: the add is offered
    assert next_call(hints, run.steps[-1])[0] == "add_to_answer"
    add = next_call(hints, run.steps[-1])
    first = PlanStep(*add, session.call(*add))
    assert next_call(hints, first) == ("finish", {})
    again = PlanStep(*add, session.call(*add))  # the same nodes again: nothing added
    assert again.outcome.added == [] and next_call(hints, again) == "no call"


@pytest.mark.slow
def test_the_demo_fits_the_plans_of_the_index_it_builds(tmp_path):
    from ark.probes import fit_demo_plans

    (tmp_path / "kb.txt").write_text(_movie_triples(1), encoding="utf-8")
    index = build_index(tmp_path / "kb.txt", tmp_path / "idx")
    assert plan_model(index)[0] is None
    fit_demo_plans(index, as_json=True)
    assert plan_model(open_index(tmp_path / "idx"))[0] is not None


@pytest.mark.slow
def test_the_demo_refits_a_fit_another_ark_made(tmp_path, monkeypatch):
    """A demo index kept from an ARK whose plan features read otherwise holds a fit
    this one refuses: the demo fits it again, once, rather than run the model on every
    step from then on."""
    pytest.importorskip("openai")
    from typer.testing import CliRunner

    from ark.cli import app
    from fake_openai import FakeOpenAIServer, chat_reply, function_call

    monkeypatch.setenv("ARK_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "kb.txt").write_text(_movie_triples(1), encoding="utf-8")
    target = tmp_path / "cache" / "demo" / "metaqa.idx"
    index = build_index(tmp_path / "kb.txt", target)
    _store_sure_fit(index)
    old = {**open_index(target).described.fits[FIT_KEY], "version": 0}
    save_described(index, open_index(target).described.with_fit(FIT_KEY, old))
    stale, why = plan_model(open_index(target))
    assert stale is None and "another ARK" in why
    finish = chat_reply(tool_calls=[function_call("finish", "{}", "call_0")])
    with FakeOpenAIServer([(200, finish)] * 10) as server:
        result = CliRunner().invoke(
            app, ["demo", "--base-url", server.base_url, "--model", "fake-model", "--json"]
        )
    assert result.exit_code == 0, result.output
    model, why = plan_model(open_index(target))
    assert model is not None, why


# -- the finish the reading knows (issue 63) --------------------------------------------


def _plan_calls(index: Index) -> list:  # type: ignore[type-arg]
    session = hinted_session(index, QUESTION, multi=True, refuse_unseen=True)
    run = run_plan(session, session.observers[0], 8)
    assert run.complete
    return [tool_call(s.name, **s.arguments) for s in run.steps]


@pytest.mark.parametrize("read", [True, False])
def test_after_the_add_that_ends_the_plan_the_reading_finishes(movie_index, read):
    """The model copies the plan up to the add; the finish after it is known, so it is
    run without asking the model (or asked, with ``finish_when_read=False``)."""
    calls = _plan_calls(movie_index)
    assert calls[-1].tool_calls[0].name == "finish"
    llm = ScriptedChatModel([*calls[:-1], tool_call("search_in_graph", query="more")])
    config = AgentConfig(max_steps=8, plan_threshold=None, finish_when_read=read)
    agent = guided_agent(StrategyContext(movie_index, llm, GraphTools(movie_index), config))
    traj = asyncio.run(agent.run(QUESTION))
    assert traj.stop_reason == "finish" and traj.answer
    if read:
        assert len(llm.calls) == len(calls) - 1
        assert traj.steps[-1].by == "plan" and traj.steps[-1].note == FINISH_READ_NOTE
        assert traj.config.get("finish_when_read") is None  # the default is not recorded
    else:
        assert len(llm.calls) > len(calls) - 1
        assert all(s.by in (None, "model") for s in traj.steps)
        assert traj.config["finish_when_read"] is False


# -- two plans sure together: the model chooses -----------------------------------------


def _index_with_confidence(movie_index: Index, tmp_path: Path, p: float) -> Index:
    """A copy of the movie graph whose fit gives every plan the confidence ``p``."""
    import math
    import shutil

    shutil.copytree(movie_index.path, tmp_path / "idx")
    index = open_index(tmp_path / "idx")
    n = len(FEATURES)
    bias = math.log(p / (1 - p))
    model = PlanModel(
        tuple(FEATURES),
        (0.0,) * n,
        (1.0,) * n,
        (bias,) + (0.0,) * n,
        {"n": 1, "reading": reading_digest(index)},
    )
    save_described(index, index.described.with_fit(FIT_KEY, model.to_dict()))
    return open_index(tmp_path / "idx")


def test_two_plans_sure_only_together_are_chosen_between_in_one_short_call(movie_index, tmp_path):
    """At 0.45 each, neither plan runs alone (threshold 0.6), but one of the two is
    the answer: the model is asked which, with a reply that is a number, and the
    chosen plan's steps are the run's; no other model call."""
    index = _index_with_confidence(movie_index, tmp_path, 0.45)
    genres = {node(index, n) for n in ("Drama", "Adventure", "Comedy")}
    answers = {}
    for reading in (1, 2):
        llm = ScriptedChatModel([json_reply({"reading": reading})], per_call=True)
        traj = asyncio.run(_guided(index, llm, 0.6, choose=True).run(QUESTION))
        assert len(llm.calls) == 1 and llm.schemas[0] == choice_schema(2)
        prompt = llm.calls[0][-1].content
        assert "1. Robert Zemeckis → directed by (backwards) → has genre → gives:" in prompt
        assert "2. Robert Zemeckis → " in prompt and "Drama" in prompt
        first, *rest = traj.steps
        assert first.module == "choose_plan" and first.by is None and first.prompt_tokens > 0
        assert f"chose reading {reading} of 2" in (first.note or "")
        assert rest and all(s.by == "plan" for s in rest) and traj.stop_reason == "finish"
        assert traj.config["plan"]["ran"] and traj.config["plan"]["choice"]["chosen"] == reading - 1
        answers[reading] = set(traj.answer)
    assert answers[1] == genres
    assert answers[2] and answers[2] != genres  # the rival's own nodes


def test_no_choice_when_the_two_are_not_sure_together_or_the_reply_chooses_none(
    movie_index, tmp_path
):
    """At 0.25 each the two are not sure together: the model runs the steps, asked
    with the tools from the first call. A reply naming no reading changes nothing."""
    index = _index_with_confidence(movie_index, tmp_path, 0.25)
    llm = ScriptedChatModel([tool_call("search_in_graph", query="Robert Zemeckis")])
    traj = asyncio.run(_guided(index, llm, 0.6, choose=True).run(QUESTION))
    assert llm.schemas[0] is None and all(s.module is None for s in traj.steps)
    assert "choice" not in traj.config["plan"] and traj.config["plan"]["rival_confidence"] == 0.25

    index = _index_with_confidence(movie_index, tmp_path / "b", 0.45)
    replies = [json_reply({"reading": 7}), tool_call("search_in_graph", query="Robert Zemeckis")]
    llm = ScriptedChatModel(replies, per_call=True)
    traj = asyncio.run(_guided(index, llm, 0.6, choose=True).run(QUESTION))
    assert traj.steps[0].module == "choose_plan" and "no reading" in traj.steps[0].note
    assert traj.config["plan"]["ran"] is False and traj.config["plan"]["choice"]["chosen"] is None
    assert llm.schemas[1] is None and traj.steps[1].by is None  # the model's own steps
    # The choice's call is a step of the budget: the model's steps are numbered after it.
    assert [s.index for s in traj.steps] == list(range(len(traj.steps)))


def test_the_choice_is_off_by_default(movie_index, tmp_path):
    """``ark-guided`` as a user runs it asks no choice (the local model's choices were
    little better than chance): the model runs the steps."""
    index = _index_with_confidence(movie_index, tmp_path, 0.45)
    llm = ScriptedChatModel([tool_call("search_in_graph", query="Robert Zemeckis")])
    traj = asyncio.run(_guided(index, llm, 0.6).run(QUESTION))
    assert llm.schemas[0] is None and "rival_confidence" not in traj.config["plan"]
    assert all(s.module is None for s in traj.steps)


def test_a_choice_reply_is_a_number_among_the_readings_or_none():
    assert read_choice({"reading": 2}, 2) == 1
    for bad in ({"reading": 3}, {"reading": 0}, {"reading": True}, {"reading": "1"}, None, [1]):
        assert read_choice(bad, 2) is None, bad
    assert choice_schema(3)["properties"]["reading"]["enum"] == [1, 2, 3]


# -- a plan that stops part way hands the session over ----------------------------------


def test_a_plan_stopping_part_way_hands_its_steps_to_the_model(sure_index, monkeypatch):
    """Where the plan stops before its finish (here: no call after the search), its
    steps are the run's first and the model goes on from there, reading them as its
    own, instead of searching again; switched off, the model starts afresh."""
    from ark.probes import plans_run as _run

    real = _run.next_call
    monkeypatch.setattr(
        _run,
        "next_call",
        lambda hints, last: "no call" if last.name == "search_in_graph" else real(hints, last),
    )
    zemeckis = node(sure_index, "Robert Zemeckis")
    hop = tool_call("search_in_neighborhood", node_index=zemeckis, edge_type="directed_by")
    llm = ScriptedChatModel(
        [tool_call("search_in_graph", query="unused"), hop, tool_call("finish")]
    )
    traj = asyncio.run(_guided(sure_index, llm, 0.6).run(QUESTION))
    assert [s.by for s in traj.steps[:1]] == ["plan"] and traj.steps[0].index == 0
    assert traj.steps[0].tool_calls[0].name == "search_in_graph"
    assert all(s.by is None for s in traj.steps[1:]) and traj.steps[1].index == 1
    assert traj.config["plan"]["handed_over"] == 1 and traj.config["plan"]["ran"] is False
    # The model's first call already reads the plan's search and its observation.
    first = llm.calls[0]
    assert [m.role for m in first] == ["system", "user", "assistant", "tool"]
    assert first[2].tool_calls[0].name == "search_in_graph"
    assert traj.steps[1].tool_calls[0].name == "search_in_neighborhood"

    llm = ScriptedChatModel([tool_call("search_in_graph", query="Robert Zemeckis")])
    agent = _guided(sure_index, llm, 0.6)
    agent.guided = GuidedOptions(hand_over_plans=False)
    traj = asyncio.run(agent.run(QUESTION))
    assert all(s.by is None for s in traj.steps) and "handed_over" not in traj.config["plan"]
    assert [m.role for m in llm.calls[0]] == ["system", "user"]


# -- a choice the hints leave at the chain's end ------------------------------------------

#: The chain (franchise, then creator) ends at Jon Van Caneghem; the schema has a
#: relation ``video``, so the hints offer a hop along it for the words the chain leaves
#: unexplained (*video game*) beside the add: a choice.
XEEN_TRIPLES = """\
Swords of Xeen|franchise|Might and Magic
Might and Magic|creator|Jon Van Caneghem
Heroes of Might|franchise|Might and Magic
Heroes of Might|creator|Jon Van Caneghem
Dark Side|franchise|Might and Magic
Mario|franchise|Super Mario
Super Mario|creator|Shigeru Miyamoto
Shigeru Miyamoto|creator|Zelda
Zelda|video|Trailer
"""
XEEN_QUESTION = "Who is the creator of the franchise of Swords of Xeen, a video game?"


@pytest.fixture(scope="module")
def xeen(tmp_path_factory: pytest.TempPathFactory) -> Index:
    root: Path = tmp_path_factory.mktemp("xeen")
    (root / "kb.txt").write_text(XEEN_TRIPLES, encoding="utf-8")
    return build_index(root / "kb.txt", root / "idx")


def test_the_add_a_choice_offers_beside_a_hop_is_its_conclusion():
    hop = NextCall("search_in_neighborhood", {"node_index": 2, "edge_type": "video"})
    add = NextCall("add_to_answer", {"node_indices": [2]})
    assert concluding_add(Hint("...", "unexplained", (hop, add))) == (add.tool, add.arguments)
    # One call is no choice (ready_call's), and a choice without an add concludes nothing.
    assert concluding_add(Hint("...", "answer", (add,))) is None
    assert concluding_add(Hint("...", "onward", (hop, hop))) is None
    assert concluding_add(None) is None


def test_at_the_chain_s_end_the_plan_takes_the_add_beside_a_hop_and_says_so(xeen):
    """The chain the reading scored best ends at the creator; the hint offers a hop
    for *video game* beside the add. The plan takes the add and marks the step, so the
    confidence can weigh it; told not to, it stops at the choice, for a model."""
    s = hinted_session(xeen, XEEN_QUESTION, multi=True, refuse_unseen=True)
    hints = s.observers[0]
    run = run_plan(s, hints, 8)
    jon = node(xeen, "Jon Van Caneghem")
    assert run.complete and run.answer == [jon]
    assert [st.name for st in run.steps][-2:] == ["add_to_answer", "finish"]
    assert run.chose == len(run.steps) - 2 and run.steps[run.chose].chose
    assert plan_features(hints, run)["choice"] == 1.0

    s = hinted_session(xeen, XEEN_QUESTION, multi=True, refuse_unseen=True)
    hints = s.observers[0]
    run = run_plan(s, hints, 8, choices=False)
    assert run.stop == "no call" and run.chose is None and not s.answer
    assert [c[0] for c in calls_in(hints.last_part)] == ["search_in_neighborhood", "add_to_answer"]


def test_a_plan_with_no_choice_has_none_in_its_features(movie_index):
    s = hinted_session(movie_index, QUESTION, multi=True, refuse_unseen=True)
    run = run_plan(s, s.observers[0], 8)
    assert run.complete and run.chose is None
    assert plan_features(s.observers[0], run)["choice"] == 0.0


def test_a_choice_the_plan_is_sure_of_runs_and_one_it_is_not_is_the_model_s(xeen, tmp_path):
    """Sure of the add it chose, the plan answers with no model call; not sure, it is
    run again up to the choice and handed over there: the model reads the plan's
    steps and makes the choice."""
    import shutil

    shutil.copytree(xeen.path, tmp_path / "sure")
    _store_sure_fit(open_index(tmp_path / "sure"))
    llm = ScriptedChatModel([])
    traj = asyncio.run(_guided(open_index(tmp_path / "sure"), llm, 0.6).run(XEEN_QUESTION))
    assert llm.calls == [] and traj.config["plan"]["ran"]
    assert traj.answer == [node(xeen, "Jon Van Caneghem")]
    assert traj.config["plan"]["chose"] == len(traj.steps) - 2

    shutil.copytree(xeen.path, tmp_path / "unsure")
    _store_sure_fit(open_index(tmp_path / "unsure"), choice=-30.0)  # sure but of a choice
    index = open_index(tmp_path / "unsure")
    jon = node(index, "Jon Van Caneghem")
    llm = ScriptedChatModel(
        [tool_call("add_to_answer", node_indices=[jon]), tool_call("finish")], per_call=True
    )
    traj = asyncio.run(_guided(index, llm, 0.6).run(XEEN_QUESTION))
    record = traj.config["plan"]
    assert record["ran"] is False and record["stop"] == "no call"
    assert record["confidence"] < 0.6 and record["chose"] == record["handed_over"]
    # The model makes the add; the finish after it is the reading's, run without it.
    assert [s.by for s in traj.steps] == ["plan"] * record["handed_over"] + [None, "plan"]
    assert traj.answer == [jon] and len(llm.calls) == 1
    # The model's first call reads the plan's steps, the last hint offering the choice.
    assert [m.role for m in llm.calls[0]][:2] == ["system", "user"]
    assert "video" in llm.calls[0][-1].content


# -- a graph built from documents: the sure part runs, the model judges the passages ----


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_document_index(tmp_path_factory.mktemp("docs") / "idx")


def test_on_documents_the_plan_reads_the_named_node_s_passages_and_stops_before_an_add(docs):
    """The search for the node the question names and the hop to the passages that
    mention it run; the add the hint then offers is left to the model ("add"), and a
    finish is never the reading's to run."""
    s = hinted_session(docs, DOC_QUESTION, multi=True, refuse_unseen=True)
    hints = s.observers[0]
    run = run_plan(s, hints, 8)
    assert [(st.name, st.arguments) for st in run.steps] == [
        ("search_in_graph", {"query": "Lena Marsh"}),
        (
            "search_in_neighborhood",
            {
                "node_index": LENA,
                "edge_type": "mentions",
                "node_type": "passage",
                "query": "mayor town born",
            },
        ),
    ]
    assert run.stop == "add" and run.answer == [] and not s.answer
    assert P_LENA in run.steps[1].outcome.nodes
    added = s.call("add_to_answer", {"node_indices": [P_LENA]})
    assert not reading_finishes(hints, "add_to_answer", added)


def test_on_documents_the_agent_hands_the_plan_s_reads_to_the_model_without_a_fit(docs):
    """No confidence is fitted on a graph built from documents, and none is needed for
    calls that only read: the plan's two steps are the run's first, and the model's
    first call reads them; with plans off the model makes every call."""
    assert plan_model(docs)[0] is None
    llm = ScriptedChatModel(
        [tool_call("add_to_answer", node_indices=[P_LENA, P_HARBOUR]), tool_call("finish")],
        per_call=True,
    )
    traj = asyncio.run(_guided(docs, llm, 0.6).run(DOC_QUESTION))
    assert [s.by for s in traj.steps] == ["plan", "plan", None, None]
    assert [s.index for s in traj.steps] == [0, 1, 2, 3]
    assert traj.answer == [P_LENA, P_HARBOUR]
    record = traj.config["plan"]
    assert record["documents"] is True and record["handed_over"] == 2 and record["stop"] == "add"
    first = llm.calls[0]
    assert [m.role for m in first] == ["system", "user", "assistant", "tool", "assistant", "tool"]

    llm = ScriptedChatModel(
        [tool_call("search_in_graph", query="Lena Marsh"), tool_call("finish")], per_call=True
    )
    traj = asyncio.run(_guided(docs, llm, None).run(DOC_QUESTION))
    assert all(s.by is None for s in traj.steps) and "plan" not in traj.config
    assert [m.role for m in llm.calls[0]] == ["system", "user"]
