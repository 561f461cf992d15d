"""The agent loop driven by a scripted test double: happy path, error recovery, limits."""

import asyncio

from _doubles import ScriptedChatModel, calls, prose, tool_call
from _helpers import node
from ark.llm import LLMError
from ark.strategies import Agent, AgentConfig, agent_tool_specs, steps_left_note, system_prompt
from ark.tools import ToolConfig


def run(agent: Agent, question: str = "Which genres do Robert Zemeckis films have?"):
    return asyncio.run(agent.run(question, question_id="q1"))


def test_happy_path_search_explore_add_finish(movie_index):
    zemeckis = node(movie_index, "Robert Zemeckis")
    forrest = node(movie_index, "Forrest Gump")
    model = ScriptedChatModel(
        [
            tool_call("search_in_graph", query="Robert Zemeckis"),
            tool_call("search_in_neighborhood", node_index=zemeckis, edge_type="directed_by"),
            tool_call("search_in_neighborhood", node_index=forrest, node_type="genre"),
            tool_call("add_to_answer", node_indices=[node(movie_index, "Drama")]),
            tool_call("finish"),
        ]
    )
    traj = run(Agent(movie_index, model))
    assert traj.stop_reason == "finish"
    assert traj.answer == [node(movie_index, "Drama")]
    assert [len(s.tool_calls) for s in traj.steps] == [1, 1, 1, 1, 1]
    assert traj.tool_names() == [
        "search_in_graph",
        "search_in_neighborhood",
        "search_in_neighborhood",
        "add_to_answer",
        "finish",
    ]
    assert all(c.ok for s in traj.steps for c in s.tool_calls)
    # Zemeckis directed three films; the observation lists them.
    obs = traj.steps[1].tool_calls[0].observation
    assert "Forrest Gump" in obs and "Cast Away" in obs and "Back to the Future" in obs
    assert set(traj.steps[1].tool_calls[0].nodes) == {
        node(movie_index, n) for n in ("Forrest Gump", "Cast Away", "Back to the Future")
    }
    # The conversation is complete: system, user, then assistant/tool pairs.
    roles = [m["role"] for m in traj.messages]
    assert roles[:2] == ["system", "user"]
    assert roles[2:] == ["assistant", "tool"] * 5
    assert traj.question_id == "q1" and traj.model == "scripted-test-model"
    assert traj.usage["completion_tokens"] == 25


def test_every_bad_call_becomes_an_observation_and_the_loop_recovers(movie_index):
    drama = node(movie_index, "Drama")
    model = ScriptedChatModel(
        [
            tool_call("search_everything", query="x"),  # unknown tool
            tool_call("search_in_graph", raw='{"query": "Drama"'),  # broken JSON
            tool_call("search_in_neighborhood", node_index=10**9),  # unknown node
            tool_call("search_in_neighborhood", node_index=0, node_type="gnere"),  # typo
            tool_call("search_in_graph", query="Drama", colour="red"),  # unknown argument
            tool_call("add_to_answer", node_indices=[drama]),  # not seen yet
            prose("I think the answer is Drama."),  # no tool call
            tool_call("search_in_graph", query="Drama"),
            tool_call("add_to_answer", node_indices=[drama, "x"]),
            tool_call("finish"),
        ]
    )
    traj = run(Agent(movie_index, model))
    assert traj.stop_reason == "finish"
    assert traj.answer == [drama]
    codes = [c.error_code for s in traj.steps for c in s.tool_calls]
    assert codes[:6] == [
        "unknown_tool",
        "bad_argument",
        "unknown_node",
        "unknown_node_type",
        "bad_argument",
        "unseen_node",
    ]
    assert traj.steps[6].note == "no tool call" and not traj.steps[6].tool_calls
    assert "genre" in traj.steps[3].tool_calls[0].observation  # suggestion offered
    assert codes[-2] == "bad_argument"  # "x" is not a node index; drama still added


def test_several_tool_calls_in_one_step(movie_index):
    model = ScriptedChatModel(
        [
            calls(
                tool_call("search_in_graph", query="Tom Hanks"),
                tool_call("search_in_graph", query="Comedy"),
            ),
            tool_call("add_to_answer", node_indices=[node(movie_index, "Comedy")]),
        ]
    )
    traj = run(Agent(movie_index, model))
    assert len(traj.steps[0].tool_calls) == 2
    assert traj.answer == [node(movie_index, "Comedy")]


def test_stops_at_max_steps_and_warns_near_the_end(movie_index):
    model = ScriptedChatModel(lambda messages: tool_call("search_in_graph", query="Tom Hanks"))
    traj = run(Agent(movie_index, model, AgentConfig(max_steps=4)))
    assert traj.stop_reason == "max_steps"
    assert len(traj.steps) == 4
    assert traj.steps[1].tool_calls[0].observation.endswith(steps_left_note(2))
    assert traj.steps[2].tool_calls[0].observation.endswith(steps_left_note(1))
    assert steps_left_note(3) == ""


def test_finish_with_empty_answer_is_questioned_once(movie_index):
    model = ScriptedChatModel([tool_call("finish"), tool_call("finish")])
    traj = run(Agent(movie_index, model))
    assert traj.steps[0].tool_calls[0].error_code == "empty_answer"
    assert traj.stop_reason == "finish" and len(traj.steps) == 2


def test_backend_failure_ends_the_agent_without_raising(movie_index):
    model = ScriptedChatModel(
        [tool_call("search_in_graph", query="Big"), LLMError("server gave up after 4 retries")]
    )
    traj = run(Agent(movie_index, model))
    assert traj.stop_reason == "error"
    assert "gave up" in (traj.error or "")
    assert len(traj.steps) == 1


def test_ablations_change_the_tools_offered(movie_index):
    schema = movie_index.schema
    names = lambda specs: [s["function"]["name"] for s in specs]  # noqa: E731
    full = agent_tool_specs(schema, ToolConfig())
    assert names(full) == ["search_in_graph", "search_in_neighborhood", "add_to_answer", "finish"]
    assert "search_in_neighborhood" not in names(
        agent_tool_specs(schema, ToolConfig(neighbors=False))
    )
    no_query = agent_tool_specs(schema, ToolConfig(neighbor_query=False))[1]["function"]
    assert "query" not in no_query["parameters"]["properties"]
    no_filter = agent_tool_specs(schema, ToolConfig(neighbor_filters=False))[1]["function"]
    assert {"node_type", "edge_type"}.isdisjoint(no_filter["parameters"]["properties"])
    assert "search_in_neighborhood" not in system_prompt(schema, ToolConfig(neighbors=False), 20)

    # An ablated argument is refused like any unknown argument.
    model = ScriptedChatModel([tool_call("search_in_neighborhood", node_index=0, query="drama")])
    agent = Agent(movie_index, model, AgentConfig(tools=ToolConfig(neighbor_query=False)))
    traj = run(agent)
    assert traj.steps[0].tool_calls[0].error_code == "bad_argument"
    model = ScriptedChatModel([tool_call("search_in_neighborhood", node_index=0)])
    traj = run(Agent(movie_index, model, AgentConfig(tools=ToolConfig(neighbors=False))))
    assert traj.steps[0].tool_calls[0].error_code == "unknown_tool"


def test_prompt_is_built_from_the_schema(movie_index):
    prompt = system_prompt(movie_index.schema, ToolConfig(), 20)
    for word in ("movie", "person", "genre", "directed_by", "has_genre", "search_in_graph"):
        assert word in prompt
    model = ScriptedChatModel([tool_call("finish")])
    run(Agent(movie_index, model))
    assert model.calls[0][0].content == prompt


def test_a_repeated_search_is_pointed_out(movie_index):
    model = ScriptedChatModel(
        [
            tool_call("search_in_graph", query="Tom Hanks"),
            tool_call("search_in_graph", query="Tom Hanks"),
            tool_call("search_in_graph", query="Tom Hanks", k=6),
        ]
    )
    traj = run(Agent(movie_index, model))
    codes = [c.error_code for s in traj.steps for c in s.tool_calls]
    assert codes[:3] == [None, "repeated_call", None]  # its words: the golden set


def test_add_to_answer_takes_at_most_max_add_per_call(movie_index):
    from ark.tools import MAX_ADD

    drama = node(movie_index, "Drama")
    model = ScriptedChatModel(
        [
            tool_call("search_in_graph", query="Drama"),
            tool_call("add_to_answer", node_indices=[drama] * (MAX_ADD + 1)),
            tool_call("add_to_answer", node_indices=[drama] * MAX_ADD),
            tool_call("finish"),
        ]
    )
    traj = run(Agent(movie_index, model))
    too_many = traj.steps[1].tool_calls[0]
    assert too_many.error_code == "bad_argument" and too_many.added is None
    assert traj.answer == [drama]
    specs = {s["function"]["name"]: s["function"] for s in agent_tool_specs(None, ToolConfig())}
    items = specs["add_to_answer"]["parameters"]["properties"]["node_indices"]
    assert items["maxItems"] == MAX_ADD  # what a constrained decoder enforces
