"""The prompt and tool specs stay bounded however many relations a graph has, and a
small schema's prompt is the one it always was."""

from __future__ import annotations

import asyncio
import json

import pytest
from _prompt_golden import GOLDEN, prompts, wc_index

from _doubles import ScriptedChatModel, tool_call
from ark.graph import LISTED_RELATIONS, LISTING_LIMIT, NodeTypeSummary, RelationSummary, Schema
from ark.index import Index
from ark.probes import LISTED_NODE_TYPES, short_system_prompt, worked_example
from ark.strategies import Agent, system_prompt
from ark.tools import ToolConfig, tool_specs


def _golden() -> dict:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def wc_like(tmp_path_factory: pytest.TempPathFactory):
    return wc_index(tmp_path_factory.mktemp("wc-like"))


@pytest.mark.parametrize("graph", ["metaqa", "movies", "wc"])
def test_a_small_schema_gets_the_prompt_and_specs_it_always_got(
    graph, request, metaqa_index, movie_index
):
    index = {"metaqa": metaqa_index, "movies": movie_index}.get(graph) or request.getfixturevalue(
        "wc_like"
    )
    now = prompts(index)
    before = _golden()[graph]
    assert now.keys() == before.keys()
    for key in before:
        assert now[key] == before[key], f"{graph}: {key} changed"


# -- graphs of free-text relations ------------------------------------------------------


@pytest.fixture(scope="module")
def phrase_graphs(tmp_path_factory):
    """The same story among 3,000 and among 6,000 filler relation phrases."""
    from _phrase_graph import phrase_index

    root = tmp_path_factory.mktemp("phrase-graphs")
    return {n: phrase_index(root / str(n), n) for n in (3000, 6000)}


def _whole_prompt(index: Index, config: ToolConfig, variant: str = "full") -> str:
    example = worked_example(index, config) if variant == "full" else None
    system = system_prompt(index.schema, config, 10, variant, example=example)
    return system + json.dumps(tool_specs(index.schema, config, answer_tools=True))


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["full", "short"])
@pytest.mark.parametrize("config", [ToolConfig(), ToolConfig(multi_neighborhood=True)])
def test_the_prompt_stays_bounded_however_many_relations(phrase_graphs, variant, config):
    small, large = (_whole_prompt(phrase_graphs[n], config, variant) for n in (3000, 6000))
    # ~4,000 tokens is the target for a document graph; 12,000 characters is ~3,000.
    assert len(large) < 12_000
    assert abs(len(large) - len(small)) < 10  # the counts' digits, nothing listed more
    assert "6,008 relations" in large or "6,008 in all" in large


def test_no_enum_of_thousands_and_edge_type_takes_any_phrase(phrase_graphs):
    index = phrase_graphs[6000]
    specs = tool_specs(index.schema, ToolConfig(), answer_tools=True)
    edge = specs[1]["function"]["parameters"]["properties"]["edge_type"]
    assert "enum" not in json.dumps(edge) and "any phrase" in edge["description"]
    prompt = system_prompt(index.schema, ToolConfig(), 10)
    assert "edge_type takes a relation name or any short phrase" in prompt
    short = short_system_prompt(index.schema, 10)
    assert "edge_type takes a relation name or any short phrase" in short
    # The most frequent relations are listed with their end types and counts.
    top, count = index.schema.relation_totals()[0]
    assert f"\n- {top}: entity -> entity ({count})\n" in prompt
    assert "more relations" in prompt


def test_the_listing_limit_is_where_the_enum_stops():
    def schema(n: int) -> Schema:
        return Schema(
            (NodeTypeSummary("entity", 10),),
            tuple(RelationSummary(f"r{i}", "entity", "entity", i + 1) for i in range(n)),
        )

    at, past = schema(LISTING_LIMIT), schema(LISTING_LIMIT + 1)
    assert at.lists_relations and not past.lists_relations
    enum = tool_specs(at)[1]["function"]["parameters"]["properties"]["edge_type"]
    assert len(enum["anyOf"][0]["enum"]) == LISTING_LIMIT
    edge = tool_specs(past)[1]["function"]["parameters"]["properties"]["edge_type"]
    assert "enum" not in json.dumps(edge)
    assert at.render().count("\n- r") == LISTING_LIMIT  # every one listed
    summary = past.render()
    assert summary.count("\n- r") == LISTED_RELATIONS
    assert summary.splitlines()[3] == f"- r{LISTING_LIMIT}: entity -> entity ({LISTING_LIMIT + 1})"
    assert f"{LISTING_LIMIT + 1} in all" in summary


def test_many_node_types_are_summarised_and_not_enumerated():
    types = tuple(NodeTypeSummary(f"type{i}", i + 1) for i in range(500))
    schema = Schema(types, (RelationSummary("r", "type1", "type2", 3),))
    text = schema.render()
    assert text.count("\n- type") == LISTED_NODE_TYPES and "470 more node types" in text
    assert text.splitlines()[1] == "- type499 (500)"  # the most frequent first
    node = tool_specs(schema)[1]["function"]["parameters"]["properties"]["node_type"]
    assert "enum" not in json.dumps(node)


def test_the_agent_reads_which_relations_a_phrase_used(phrase_graphs):
    index = phrase_graphs[3000]
    names = index.graph.names.to_pylist()
    ann = next(
        i for i, n in enumerate(names) if n == "Ann Lee" and index.graph.type_name(i) == "entity"
    )
    model = ScriptedChatModel(
        [
            tool_call("search_in_graph", query="Ann Lee"),
            tool_call("search_in_neighborhood", node_index=ann, edge_type="wrote"),
            tool_call("finish"),
        ]
    )
    traj = asyncio.run(Agent(index, model).run("What did Ann Lee write?", question_id="q"))
    observation = traj.steps[1].tool_calls[0].observation
    assert "edge_type 'wrote' matched: written by (lemma)" in observation
    assert "The Silent Shore (entity) via written by(in)" in observation


def test_many_node_types_with_few_relations_keep_relation_names_only():
    types = tuple(NodeTypeSummary(f"type{i}", i + 1) for i in range(500))
    schema = Schema(types, (RelationSummary("part_of", "type1", "type2", 3),))
    prompt = system_prompt(schema, ToolConfig(), 10)
    assert "any short phrase" not in prompt  # the tools take names only here
    assert "one of the graph's 500 node type names" in prompt
    edge = tool_specs(schema)[1]["function"]["parameters"]["properties"]["edge_type"]
    assert edge["anyOf"][0]["enum"] == ["part_of"]
