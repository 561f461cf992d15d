"""With the hints of ``ark-guided``, the last step (once a search has shown nodes) is
offered only ``add_to_answer`` and ``finish``: its search would never be read (no step
follows it), and a 1.5B model ignored the "1 step left and your answer is empty" note
in 15 of 15 MuSiQue runs that ended empty. The paper's loop offers every tool to the
end, as before."""

from __future__ import annotations

import asyncio
from typing import Any

from _doubles import ScriptedChatModel, tool_call
from _helpers import node
from ark.llm import Completion, Message
from ark.probes import LAST_STEP_NOTE
from ark.strategies import Agent, AgentConfig, GuidedAgent


class ToolAware(ScriptedChatModel):
    """Searches while it may (a new query each step), as a model that ignores the notes;
    offered no search (a constrained decoder then cannot call one), it adds ``node``."""

    def __init__(self, node: int, adds_at: int | None = None) -> None:
        self.node = node
        self.adds_at = adds_at
        self.offered: list[list[str]] = []
        self.allowed: list[list[str] | None] = []
        super().__init__(self.reply)

    def reply(self, messages: list[Message]) -> Message:
        step = sum(1 for m in messages if m.role == "assistant")
        writable = self.allowed[-1] or self.offered[-1]
        if "search_in_graph" not in writable or step == self.adds_at:
            return tool_call("add_to_answer", node_indices=[self.node])
        return tool_call("search_in_graph", query=["Forrest Gump", "Tom Hanks", "Drama"][step])

    async def complete(self, messages: Any, tools: Any, **kw: Any) -> Completion:
        self.offered.append([t["function"]["name"] for t in tools])
        self.allowed.append(kw.pop("allowed_tools", None))
        return await super().complete(messages, tools, **kw)


class Restricting(ToolAware):
    """A backend whose decoding can write only some of the tools it offers (as the
    local model's grammar can)."""

    restricts_tools = True


def run(index, model, hints: bool):  # type: ignore[no-untyped-def]
    agent = (GuidedAgent if hints else Agent)(index, model, AgentConfig(max_steps=3))
    return asyncio.run(agent.run("Which films did Tom Hanks star in?"))


ALL = ["search_in_graph", "search_in_neighborhood", "add_to_answer", "finish"]


def test_the_last_step_with_an_empty_answer_offers_only_the_answer_tools(movie_index):
    forrest = node(movie_index, "Forrest Gump")
    model = ToolAware(forrest)
    traj = run(movie_index, model, hints=True)
    assert model.offered == [ALL, ALL, ["add_to_answer", "finish"]]
    assert traj.answer == [forrest] and traj.stop_reason == "max_steps"
    assert traj.steps[2].note == LAST_STEP_NOTE
    assert traj.steps[1].note is None


def test_the_paper_loop_offers_every_tool_to_the_end(movie_index):
    model = ToolAware(node(movie_index, "Forrest Gump"))
    traj = run(movie_index, model, hints=False)
    assert model.offered == [ALL, ALL, ALL]
    assert traj.answer == []


def test_an_answer_already_given_still_leaves_only_the_answer_tools(movie_index):
    """A search on the last step is never read whether the answer is empty or not (in
    50 MuSiQue questions 27 trajectories spent their last step on one)."""
    forrest = node(movie_index, "Forrest Gump")
    model = ToolAware(forrest, adds_at=1)
    traj = run(movie_index, model, hints=True)
    assert model.offered == [ALL, ALL, ["add_to_answer", "finish"]]
    assert traj.answer == [forrest] and traj.steps[2].note == LAST_STEP_NOTE


def test_a_backend_that_restricts_tools_keeps_the_prompt_and_restricts_the_reply(movie_index):
    """The last step's prompt offers every tool, as the step before (so a KV cache
    holds it all); only the reply is limited to the answer tools."""
    forrest = node(movie_index, "Forrest Gump")
    model = Restricting(forrest)
    traj = run(movie_index, model, hints=True)
    assert model.offered == [ALL, ALL, ALL]
    assert model.allowed == [None, None, ["add_to_answer", "finish"]]
    assert traj.answer == [forrest] and traj.steps[2].note == LAST_STEP_NOTE


class Predicting(ToolAware):
    """A backend that drafts the call it is told to expect (as the local model does)."""

    accepts_prediction = True

    def __init__(self, node: int) -> None:
        super().__init__(node)
        self.predictions: list[object] = []

    async def complete(self, messages: Any, tools: Any, **kw: Any) -> Completion:
        self.predictions.append(kw.pop("prediction", None))
        return await super().complete(messages, tools, **kw)


def test_the_hinted_call_is_passed_as_the_prediction(movie_index):
    """After each observation whose hint offers one call, that call is the prediction;
    the first step (no observation yet) predicts nothing."""
    question = "Which films did Tom Hanks star in?"
    model = Predicting(node(movie_index, "Forrest Gump"))
    agent = GuidedAgent(movie_index, model, AgentConfig(max_steps=3))
    traj = asyncio.run(agent.run(question))
    assert model.predictions[0] is None
    # The run's calls again, in the session the agent gives them: what each hint offered.
    replay = agent.new_session(question)
    for step, predicted in zip(traj.steps, model.predictions[1:], strict=False):
        call = step.tool_calls[0]
        parts = replay.call(call.name, call.arguments).parts
        offered = parts[-1].call if parts else None
        if predicted is None:
            assert offered is None
        else:
            assert offered is not None
            assert (offered.tool, offered.arguments) == (predicted.name, predicted.arguments)
    assert model.predictions[1] is not None


def test_a_prediction_that_cannot_be_written_never_ends_the_run(movie_index, monkeypatch):
    """A hint line whose call held a Python value JSON cannot write (Ellipsis) ended the
    whole agent with a TypeError (caught in a benchmark, issue 63): now no prediction."""
    from ark.probes import guided_agent_module as agent_module

    monkeypatch.setattr(agent_module, "ready_call", lambda part: ("search_in_graph", {"q": ...}))
    model = Predicting(node(movie_index, "Forrest Gump"))
    agent = GuidedAgent(movie_index, model, AgentConfig(max_steps=3))
    traj = asyncio.run(agent.run("Which films did Tom Hanks star in?"))
    assert traj.stop_reason != "error" and len(traj.steps) >= 2
    assert all(p is None for p in model.predictions)
