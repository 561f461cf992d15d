"""With the hints of ``ark-guided`` and ``AgentConfig(redraw_repeats=True)``, a reply
that only repeats an earlier search is not run: the model is asked again at the same
prompt with the repeated tool not allowed, so no step of the budget and no refusal to
read are spent on it. By default, and in the paper's loop, the repeat runs and the
session's refusal is read, as before."""

from __future__ import annotations

import asyncio
from typing import Any

from _doubles import ScriptedChatModel, tool_call
from _helpers import node
from ark.cost import trajectory_cost
from ark.llm import Completion, Message
from ark.strategies import Agent, AgentConfig, GuidedAgent
from ark.trajectory import Trajectory

QUESTION = "Which films did Tom Hanks star in?"
ALL = ["search_in_graph", "search_in_neighborhood", "add_to_answer", "finish"]


class Repeater(ScriptedChatModel):
    """Searches "Tom Hanks" whenever it may write a search (as a looping model does);
    allowed no search, it adds ``node``, then finishes."""

    restricts_tools = True

    def __init__(self, node: int) -> None:
        self.node = node
        self.allowed: list[list[str] | None] = []
        super().__init__(self.reply)

    def reply(self, messages: list[Message]) -> Message:
        allowed = self.allowed[-1] or ALL
        if "search_in_graph" in allowed:
            return tool_call("search_in_graph", query="Tom  Hanks")
        if any(m.role == "tool" and m.name == "add_to_answer" for m in messages):
            return tool_call("finish")
        return tool_call("add_to_answer", node_indices=[self.node])

    async def complete(self, messages: Any, tools: Any, **kw: Any) -> Completion:
        self.allowed.append(kw.pop("allowed_tools", None))
        kw.pop("prediction", None)
        return await super().complete(messages, tools, **kw)


class Offering(Repeater):
    """The same model behind a backend that cannot restrict its reply: it sees only
    the tools it is offered."""

    restricts_tools = False

    async def complete(self, messages: Any, tools: Any, **kw: Any) -> Completion:
        kw["allowed_tools"] = [t["function"]["name"] for t in tools]
        return await super().complete(messages, tools, **kw)


def run(agent_cls: type[Agent], index: Any, model: Any, **config: Any) -> Trajectory:
    config = {"redraw_repeats": True, **config}
    agent = agent_cls(index, model, AgentConfig(max_steps=4, **config))
    return asyncio.run(agent.run(QUESTION))


def test_a_repeated_search_is_not_run_and_the_model_is_asked_again(movie_index):
    hanks = node(movie_index, "Tom Hanks")
    model = Repeater(hanks)
    traj = run(GuidedAgent, movie_index, model)
    assert traj.tool_names() == ["search_in_graph", "add_to_answer", "finish"]
    assert traj.answer == [hanks] and traj.stop_reason == "finish"
    # the second step's first reply (the repeat) was drawn again without the search,
    # at the same prompt: the conversation holds no repeat and no refusal
    assert model.allowed[:3] == [None, None, ["search_in_neighborhood", "add_to_answer", "finish"]]
    assert model.calls[1] == model.calls[2]
    assert not any("already made" in str(m.get("content")) for m in traj.messages)
    second = traj.steps[1]
    assert second.redrawn is not None
    assert second.redrawn["tool_calls"] == [
        {"name": "search_in_graph", "arguments": {"query": "Tom  Hanks"}}
    ]
    # the step's tokens are both calls' and the cost counts two model calls
    assert second.prompt_tokens == second.redrawn["prompt_tokens"] + 10 * len(model.calls[2])
    # (the third step's reply repeated too and was drawn again: five calls in all)
    assert traj.steps[2].redrawn is not None
    assert trajectory_cost(traj)["llm_calls"] == len(model.calls) == 5
    assert traj.usage["prompt_tokens"] == sum(s.prompt_tokens for s in traj.steps)


def test_the_redrawn_step_reads_back_from_a_stored_record_and_the_viewer_says_it(movie_index):
    from ark.probes import viewer_trajectory

    traj = run(GuidedAgent, movie_index, Repeater(node(movie_index, "Tom Hanks")))
    again = Trajectory.from_dict(traj.to_dict())
    assert again.steps[1].redrawn == traj.steps[1].redrawn is not None
    assert not again.steps[1].extra
    steps = viewer_trajectory(again)["steps"]
    assert [s["redrawn"] for s in steps] == [None, ["search_in_graph"], ["search_in_graph"]]


def test_by_default_the_repeat_is_refused_as_a_step(movie_index):
    model = Repeater(node(movie_index, "Tom Hanks"))
    agent = GuidedAgent(movie_index, model, AgentConfig(max_steps=4))
    traj = asyncio.run(agent.run(QUESTION))
    assert "redraw_repeats" not in traj.config
    assert traj.tool_names()[:2] == ["search_in_graph", "search_in_graph"]
    assert traj.steps[1].tool_calls[0].error_code == "repeated_call"
    assert all(s.redrawn is None for s in traj.steps)


def test_the_paper_loop_runs_the_repeat(movie_index):
    model = Repeater(node(movie_index, "Tom Hanks"))
    traj = run(Agent, movie_index, model)
    assert traj.tool_names() == ["search_in_graph"] * 4
    assert [c.error_code for s in traj.steps[1:] for c in s.tool_calls] == ["repeated_call"] * 3


def test_a_backend_that_cannot_restrict_is_offered_the_other_tools(movie_index):
    hanks = node(movie_index, "Tom Hanks")
    model = Offering(hanks)
    traj = run(GuidedAgent, movie_index, model)
    assert traj.tool_names() == ["search_in_graph", "add_to_answer", "finish"]
    assert model.allowed[2] == ["search_in_neighborhood", "add_to_answer", "finish"]


def test_a_second_repeat_runs_and_is_refused(movie_index):
    """Asked again once: a model that repeats whatever it is offered gets the refusal."""

    class Stubborn(Repeater):
        def reply(self, messages: list[Message]) -> Message:
            return tool_call("search_in_graph", query="Tom Hanks")

    model = Stubborn(node(movie_index, "Tom Hanks"))
    agent = GuidedAgent(movie_index, model, AgentConfig(max_steps=3, redraw_repeats=True))
    traj = asyncio.run(agent.run(QUESTION))
    assert traj.steps[1].redrawn is not None
    assert traj.steps[1].tool_calls[0].error_code == "repeated_call"
