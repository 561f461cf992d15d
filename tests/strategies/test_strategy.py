"""The strategy protocol: a second, trivial strategy through the retriever and the
evaluation runner, and the loop details the seams settled."""

import asyncio
import json
import uuid

from _doubles import ScriptedChatModel, tool_call
from _helpers import node
from ark.datasets import Query
from ark.eval import RetrieverMethod, RunStore, run_queries
from ark.llm import Completion, Message, Usage
from ark.retrieval import Retriever
from ark.session import ToolSession
from ark.strategies import Agent, AgentConfig, Strategy, StrategyContext, register_strategy
from ark.trajectory import StepRecord, ToolCallRecord, Trajectory


class FirstHitStrategy:
    """A test strategy: one global search of the question, its top hit is the answer."""

    def __init__(self, ctx: StrategyContext) -> None:
        self.ctx = ctx

    async def run(self, question: str, question_id: str | None = None) -> Trajectory:
        session = ToolSession(self.ctx.index, tools=self.ctx.tools)
        out = session.call("search_in_graph", {"query": question, "k": 1})
        session.call("add_to_answer", {"node_indices": out.nodes})
        session.call("finish", {})
        step = StepRecord(0, 0.0, 0, 0, "", module="lookup")
        step.tool_calls.append(
            ToolCallRecord("c0", "search_in_graph", {"query": question}, "", out.observation, True)
        )
        return Trajectory(
            question=question,
            model="none",
            config={"agent": self.ctx.agent_number},
            id=uuid.uuid4().hex,
            question_id=question_id,
            steps=[step],
            answer=session.answer,
            stop_reason="finish",
        )


def test_a_second_strategy_runs_through_retriever_and_runner(movie_index, tmp_path):
    assert isinstance(FirstHitStrategy, type) and isinstance(
        FirstHitStrategy(None),
        Strategy,  # type: ignore[arg-type]
    )
    register_strategy("first-hit-test", FirstHitStrategy)
    retriever = Retriever(movie_index, ScriptedChatModel([]), strategy="first-hit-test", n_agents=2)
    result = retriever.retrieve("Cast Away")
    assert [r.name for r in result.ranking] == ["Cast Away"]
    assert result.ranking[0].votes == 2
    assert [t.config["strategy"] for t in result.trajectories] == ["first-hit-test"] * 2

    gold = frozenset({node(movie_index, "Big")})
    summary = asyncio.run(
        run_queries(
            [Query("q1", "Big", gold)],
            RetrieverMethod(retriever),
            RunStore(tmp_path / "run"),
            {"method": "ark", "dataset": "test"},
        )
    )
    assert summary["metrics"]["hit@1"] == 100.0
    lines = (tmp_path / "run" / "trajectories.jsonl").read_text().splitlines()
    assert [json.loads(x)["steps"][0]["module"] for x in lines] == ["lookup", "lookup"]

    # A factory given directly works the same way.
    direct = Retriever(movie_index, ScriptedChatModel([]), strategy=FirstHitStrategy, n_agents=1)
    assert direct.retrieve("Big").ranking[0].name == "Big"
    assert direct.strategy_name == "FirstHitStrategy"


class CutModel(ScriptedChatModel):
    """Replies with a call cut at the token limit, then finishes."""

    async def complete(self, messages, tools, **kwargs):
        done = await super().complete(messages, tools, **kwargs)
        if len(self.calls) == 1:
            return Completion(done.message, Usage(1, 1024), self.name, 0.0, "length")
        return done


def test_output_cut_at_max_tokens_is_reported_as_cut(movie_index):
    cut = tool_call("search_in_graph", raw='{"query": "Tom Hanks Tom Hanks Tom')
    prose_cut = Message(role="assistant", content="Let me think about this for a long")
    for first in (cut, prose_cut):
        model = CutModel([first, tool_call("finish"), tool_call("finish")])
        traj = asyncio.run(Agent(movie_index, model, AgentConfig(max_tokens=1024)).run("q"))
        assert traj.steps[0].note == "output cut at max_tokens"
        if first is cut:
            record = traj.steps[0].tool_calls[0]
            assert record.error_code == "output_cut" and not record.ok
        else:
            assert "cut off" in traj.messages[3]["content"]


def test_agent_trajectories_record_neighborhood_structure(movie_index):
    zemeckis = node(movie_index, "Robert Zemeckis")
    model = ScriptedChatModel(
        [
            tool_call("search_in_graph", query="Robert Zemeckis"),
            tool_call("search_in_neighborhood", node_index=zemeckis, edge_type="directed_by"),
        ]
    )
    traj = asyncio.run(Agent(movie_index, model).run("q"))
    hood = traj.steps[1].tool_calls[0]
    assert hood.center == zemeckis and len(hood.relations) == len(hood.nodes) == 3
    assert traj.steps[0].tool_calls[0].center is None
