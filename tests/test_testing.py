"""ark.testing: the scripted model a user drives their own pipeline with, and the model
that writes valid tool calls from the tool schemas with no script."""

import asyncio

import jsonschema
import pytest

from ark import Retriever
from ark.llm import Message
from ark.testing import SchemaChatModel, ScriptedChatModel, schema_value, tool_call
from ark.tools import ToolConfig, tool_specs


def test_a_user_drives_the_retriever_with_the_scripted_model(tmp_path):
    from ark.index import build_index

    (tmp_path / "kb.txt").write_text(
        "Forrest Gump|directed_by|Robert Zemeckis\nCast Away|directed_by|Robert Zemeckis\n",
        encoding="utf-8",
    )
    index = build_index(tmp_path / "kb.txt", tmp_path / "idx")
    zemeckis = next(
        i for i in range(index.graph.n_nodes) if index.graph.name(i) == "Robert Zemeckis"
    )
    model = ScriptedChatModel(
        [
            tool_call("search_in_graph", query="Robert Zemeckis"),
            tool_call("add_to_answer", node_indices=[zemeckis]),
            tool_call("finish"),
        ]
    )
    result = Retriever(index, model, n_agents=1).retrieve("Who directed Forrest Gump?")
    assert [n.index for n in result.ranking] == [zemeckis]
    assert len(model.calls) == 3  # one model call per turn, each seeing the whole history
    assert [m.role for m in model.calls[2]][:2] == ["system", "user"]


# --- SchemaChatModel: tool calls written from the tool schemas, no script ---------------


_EVERY_KIND = {
    "type": "object",
    "$defs": {"span": {"type": "object", "properties": {"start": {"type": "integer"}}}},
    "properties": {
        "name": {"type": "string", "minLength": 8, "maxLength": 12},
        "short": {"type": "string", "maxLength": 2},
        "k": {"type": "integer", "minimum": 3, "maximum": 9},
        "below": {"type": "integer", "exclusiveMaximum": -4},
        "score": {"type": "number", "exclusiveMinimum": 0.5},
        "flag": {"type": "boolean"},
        "color": {"enum": ["red", "green"]},
        "fixed": {"const": 7},
        "maybe": {"type": ["string", "null"]},
        "either": {"anyOf": [{"type": "null"}, {"type": "array", "items": {"type": "integer"}}]},
        "ids": {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 3},
        "span": {"$ref": "#/$defs/span"},
        "both": {
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"type": "object", "properties": {"b": {"type": "integer", "minimum": 2}}},
            ]
        },
    },
    "required": ["name", "k", "ids"],
    "additionalProperties": False,
}


def test_schema_value_is_valid_under_every_kind_of_schema():
    value = schema_value(_EVERY_KIND)
    jsonschema.validate(value, _EVERY_KIND)  # raises on any violated keyword
    assert set(value) == set(_EVERY_KIND["properties"])  # optional arguments written too
    assert 3 <= value["k"] <= 9 and value["below"] < -4 and value["score"] > 0.5
    assert len(value["ids"]) == 3 and value["color"] == "red" and value["fixed"] == 7
    assert value["either"] == [0] and value["maybe"] == "test"


@pytest.mark.parametrize(
    "config",
    [ToolConfig(), ToolConfig(multi_neighborhood=True), ToolConfig(neighbor_filters=False)],
)
def test_arguments_of_every_ark_tool_are_valid_under_its_schema(config):
    model = SchemaChatModel()
    for spec in tool_specs(None, config, answer_tools=True):
        arguments = model.tool_arguments(spec)
        jsonschema.validate(arguments, spec["function"]["parameters"])


def test_it_calls_each_tool_once_then_the_final_tool_then_text_without_one():
    specs = tool_specs(None, answer_tools=True)
    model = SchemaChatModel(arguments={"search_in_graph": {"query": "Zemeckis"}})
    first = model.reply([Message(role="user", content="q")], specs)
    names = [c.name for c in first.tool_calls]
    assert names == ["search_in_graph", "search_in_neighborhood", "add_to_answer"]
    assert first.tool_calls[0].arguments == {"query": "Zemeckis", "k": 1}
    second = model.reply([Message(role="user", content="q"), first], specs)
    assert [c.name for c in second.tool_calls] == ["finish"]
    one_by_one = SchemaChatModel(parallel=False).reply([], specs)
    assert [c.name for c in one_by_one.tool_calls] == ["search_in_graph"]
    retrieval_only = tool_specs(None)  # an MCP client's tools: no finish to call
    done = [Message(role="user", content="q"), first]
    assert SchemaChatModel(text="done").reply(done, retrieval_only).content == "done"


def test_a_structured_call_gets_data_valid_under_its_response_schema():
    model = SchemaChatModel()
    completion = asyncio.run(
        model.complete([Message(role="user", content="q")], [], response_schema=_EVERY_KIND)
    )
    jsonschema.validate(completion.data, _EVERY_KIND)
    assert model.schemas == [_EVERY_KIND]


def test_a_user_runs_the_retriever_with_no_script(tmp_path):
    from ark.index import build_index

    (tmp_path / "kb.txt").write_text(
        "Forrest Gump|directed_by|Robert Zemeckis\nCast Away|directed_by|Robert Zemeckis\n",
        encoding="utf-8",
    )
    index = build_index(tmp_path / "kb.txt", tmp_path / "idx")
    model = SchemaChatModel(arguments={"search_in_graph": {"query": "Robert Zemeckis"}})
    result = Retriever(index, model, n_agents=1).retrieve("Who directed Forrest Gump?")
    trajectory = result.trajectories[0]
    offered = {s["function"]["name"] for s in tool_specs(index.schema, answer_tools=True)}
    assert set(trajectory.tool_names()) == offered  # every tool called
    assert trajectory.stop_reason == "finish"
    records = [c for s in trajectory.steps for c in s.tool_calls]
    schema_errors = {"bad_argument", "bad_k", "unknown_tool", "unknown_node_type"}
    assert not [r.error_code for r in records if r.error_code in schema_errors]
    assert next(r for r in records if r.name == "search_in_graph").ok
