"""A strategy as a package would ship it: the test of the ``ark.strategies`` entry point
group points at :func:`first_hit` (tests/ is on the path)."""

from __future__ import annotations

import uuid

from ark.session import ToolSession
from ark.strategies import StrategyContext
from ark.trajectory import StepRecord, ToolCallRecord, Trajectory


class FirstHit:
    """One global search of the question; its top hit is the answer (no model call)."""

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
            model=self.ctx.llm.name,
            config={"agent": self.ctx.agent_number},
            id=uuid.uuid4().hex,
            question_id=question_id,
            steps=[step],
            answer=session.answer,
            stop_reason="finish",
        )


def first_hit(ctx: StrategyContext) -> FirstHit:
    return FirstHit(ctx)


#: Read by the registry when the entry point is loaded.
first_hit.default_agents = 2  # type: ignore[attr-defined]
