"""The evaluation API: ``ark.eval.evaluate`` on the bundled MetaQA graph with the
scripted model, its run directory equal to what ``ark eval`` writes, resuming after an
interruption, and refusals before anything is written."""

import json
import re

import pytest

from _helpers import metaqa_dir
from ark.errors import ArkError
from ark.eval import Evaluation, evaluate, read_records
from ark.llm import Message
from ark.probes import strategy_registry as _strategy
from ark.strategies import register_strategy
from ark.testing import ScriptedChatModel, tool_call


def first_hit(messages: list[Message]) -> Message:
    """Search the question, add the first node found, finish."""
    turn = sum(1 for m in messages if m.role == "assistant")
    question = next(m.content for m in messages if m.role == "user")
    if turn == 0:
        return tool_call("search_in_graph", query=question)
    if turn == 1:
        found = re.search(r"^\[(\d+)\]", messages[-1].content or "", re.MULTILINE)
        return tool_call("add_to_answer", node_indices=[int(found.group(1))] if found else [])
    return tool_call("finish")


def test_evaluate_scores_metaqa_with_the_scripted_model(metaqa_index, tmp_path):
    llm = ScriptedChatModel(first_hit)
    summary = evaluate(
        "metaqa:1-hop", metaqa_index, tmp_path / "run", data_dir=metaqa_dir(),
        limit=4, agents=1, max_steps=5, llm=llm,
    )  # fmt: skip
    assert summary["queries"] == 4 and summary["failed"] == 0
    assert set(summary["metrics"]) >= {"hit@1", "hit@5", "recall@20", "mrr"}
    assert len(llm.calls) == 4 * 3  # search, add, finish per question
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["dataset"] == "metaqa:1-hop" and config["split"] == "dev"
    assert config["strategy"] == "ark" and config["agents"] == 1
    assert config["model"] == llm.name and config["index"] == str(metaqa_index.path)
    records = read_records(tmp_path / "run")
    assert [r["status"] for r in records] == ["ok"] * 4
    assert (tmp_path / "run" / "summary.md").read_text().startswith("# ark on metaqa:1-hop")


def test_an_interrupted_evaluation_resumes_without_redoing_or_losing(metaqa_index, tmp_path):
    run = Evaluation(
        "metaqa:1-hop", metaqa_index, tmp_path / "run", data_dir=metaqa_dir(),
        limit=5, agents=1, max_steps=5,
    )  # fmt: skip

    class Interrupted(Exception):
        pass

    def stop_after_two(done: int, total: int) -> None:
        if done == 2:
            raise Interrupted

    with pytest.raises(Interrupted):
        run.run(llm=ScriptedChatModel(first_hit), progress=stop_after_two)
    assert len(read_records(tmp_path / "run")) == 2
    with pytest.raises(ArkError, match="already holds a run"):
        run.run(llm=ScriptedChatModel(first_hit))

    again = ScriptedChatModel(first_hit)
    summary = run.run(llm=again, resume=True)
    assert summary["queries"] == 5 and summary["failed"] == 0
    assert len(again.calls) == 3 * 3  # only the three left
    records = read_records(tmp_path / "run")
    assert len(records) == len({r["query_id"] for r in records}) == 5
    lines = (tmp_path / "run" / "trajectories.jsonl").read_text().splitlines()
    assert len(lines) == 5  # one agent each, none written twice

    changed = Evaluation(
        "metaqa:1-hop", metaqa_index, tmp_path / "run", data_dir=metaqa_dir(),
        limit=5, agents=1, max_steps=6,
    )  # fmt: skip
    with pytest.raises(ArkError, match=r"settings differ.*max_steps"):
        changed.run(llm=ScriptedChatModel(first_hit), resume=True)


def test_a_registered_strategy_and_a_baseline_through_the_api(metaqa_index, tmp_path):
    from _strategy_plugin import first_hit as first_hit_strategy

    register_strategy("first-hit-api", first_hit_strategy)
    try:
        summary = evaluate(
            "metaqa:1-hop", metaqa_index, tmp_path / "s", data_dir=metaqa_dir(), limit=3,
            strategy="first-hit-api", llm=ScriptedChatModel([]),
        )  # fmt: skip
    finally:
        _strategy._STRATEGIES.pop("first-hit-api")
    assert summary["config"]["strategy"] == "first-hit-api"
    assert summary["config"]["agents"] == 2  # the factory's default_agents
    bm25 = evaluate(
        "metaqa:1-hop", metaqa_index, tmp_path / "b", data_dir=metaqa_dir(), limit=3,
        method="bm25",
    )  # fmt: skip
    assert bm25["method"] == "bm25" and "strategy" not in bm25["config"]


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"method": "nope"}, "unknown --method"),
        ({"mode": "loose"}, "unknown --mode"),
        ({"method": "bm25", "strategy": "graphsearch"}, "needs --method ark"),
        ({"strategy": "no-such-strategy"}, "unknown --strategy"),
    ],
)
def test_impossible_settings_are_refused_before_writing(metaqa_index, tmp_path, settings, message):
    with pytest.raises(ArkError, match=message):
        evaluate("metaqa:1-hop", metaqa_index, tmp_path / "run", **settings)
    assert not (tmp_path / "run").exists()
