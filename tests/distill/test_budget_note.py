"""The step-budget note: the oracle that writes training trajectories appends the very
text the agent shows a model near the end of its budget (one function, both callers)."""

import asyncio

from _doubles import ScriptedChatModel, tool_call
from ark.distill.synthesize import SynthConfig, synthesize
from ark.strategies import Agent, AgentConfig, GuidedAgent, steps_left_note

MAX_STEPS = 6


def _note(observation: str) -> str:
    """The budget note at the end of an observation ("" when there is none)."""
    at = observation.rfind("\n(")
    return observation[at:] if at >= 0 and observation.endswith(".)") else ""


def test_the_note_says_how_many_steps_are_left():
    assert steps_left_note(2) == "\n(2 steps left.)"
    assert steps_left_note(1) == "\n(1 step left.)"
    assert steps_left_note(0) == steps_left_note(3) == steps_left_note(-1) == ""
    assert steps_left_note(1, answer_empty=True).startswith("\n(1 step left and your answer")


def _agent_notes(index, hints: bool) -> dict[int, str]:
    model = ScriptedChatModel(lambda messages: tool_call("search_in_graph", query="Tom Hanks"))
    agent = (GuidedAgent if hints else Agent)(index, model, AgentConfig(max_steps=MAX_STEPS))
    traj = asyncio.run(agent.run("Which films did Tom Hanks star in?", question_id="q"))
    assert len(traj.steps) == MAX_STEPS
    return {s.index: _note(s.tool_calls[-1].observation) for s in traj.steps}


def _oracle_notes(index) -> dict[int, set[str]]:
    notes: dict[int, set[str]] = {}
    for t in synthesize(index, SynthConfig(n=25, seed=4, max_steps=MAX_STEPS)):
        for s in t.steps:
            for c in s.tool_calls:
                if c.name != "finish":
                    notes.setdefault(s.index, set()).add(_note(c.observation))
    return notes


def test_agent_and_oracle_append_the_same_note(movie_index):
    agent = _agent_notes(movie_index, hints=False)
    oracle = _oracle_notes(movie_index)
    for step in range(MAX_STEPS):
        want = steps_left_note(MAX_STEPS - step - 1)
        assert agent[step] == want
        if step in oracle:
            assert oracle[step] == {want}, step
    # The oracle reached both noted steps, so the comparison above is not empty.
    assert oracle.get(MAX_STEPS - 3) == {agent[MAX_STEPS - 3]} == {"\n(2 steps left.)"}
    assert oracle.get(MAX_STEPS - 2) == {agent[MAX_STEPS - 2]} == {"\n(1 step left.)"}


def test_hinted_agent_with_an_empty_answer_is_reminded(movie_index):
    notes = _agent_notes(movie_index, hints=True)
    assert notes[MAX_STEPS - 2] == steps_left_note(1, answer_empty=True)
    assert notes[MAX_STEPS - 1] == notes[0] == ""
