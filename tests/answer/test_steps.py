"""The answer read in lookups (``write_answer_in_steps``), with scripted replies over the
hand-made document index: the plan, ``#k`` filled with an earlier answer, each lookup
shown the nodes that fit it, the fallback to the one-call reading."""

from __future__ import annotations

import asyncio

import pytest

from _doubles import LLMError, ScriptedChatModel, json_reply
from _passages_fixture import (
    P_HARBOUR,
    P_LENA,
    P_PORT,
    P_SEALS,
    P_TOMAS,
    QUESTION,
    build_document_index,
)
from ark.answer import ANSWER_SCHEMA, Answer, write_answer_in_steps
from ark.errors import ArkError
from ark.probes import LOOKUP_SCHEMA, chained, fill, plan_schema, rank_for

POOL = [P_SEALS, P_HARBOUR, P_TOMAS, P_PORT, P_LENA]  # the answer passages last


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return build_document_index(tmp_path_factory.mktemp("steps") / "idx")


def run(index, model, nodes=POOL, **options) -> Answer:  # type: ignore[no-untyped-def]
    return asyncio.run(write_answer_in_steps(model, QUESTION, index, nodes, **options))


def shown(messages) -> list[int]:  # type: ignore[no-untyped-def]
    import re

    return [int(i) for i in re.findall(r"^\[(\d+)\] ", messages[-1].content, re.M)]


def test_fill_replaces_earlier_answers_only():
    assert fill("Who is the mayor of #1?", ["Port Avel"]) == "Who is the mayor of Port Avel?"
    assert fill("Where is #2?", ["Port Avel"]) == "Where is #2?"  # no second answer yet


def test_rank_for_puts_the_passages_that_fit_first(index):
    ranked = rank_for(index, "Who is the mayor of Port Avel?", POOL)
    assert set(ranked[:2]) == {P_PORT, P_TOMAS}
    assert sorted(ranked) == sorted(POOL)
    # No searchable word: the given order.
    assert rank_for(index, "?", POOL) == POOL


def test_each_lookup_reads_the_nodes_that_fit_it_and_the_last_answer_is_the_answer(index):
    replies = [
        json_reply({"lookups": ["Where was Lena Marsh born?", "Who is the mayor of #1?"]}),
        json_reply({"answer": "Port Avel", "citations": [P_LENA]}),
        json_reply({"answer": "Tomas Reed", "citations": [P_PORT, 999]}),
    ]
    model = ScriptedChatModel(replies, per_call=True)
    answer = run(index, model, nodes_per_lookup=2)
    assert answer.status == "answered" and answer.text == "Tomas Reed"
    assert answer.citations == [P_LENA, P_PORT]  # every lookup's, in order
    assert answer.dropped_citations == 1  # 999 was not shown
    assert [s["lookup"] for s in answer.steps] == [
        "Where was Lena Marsh born?",
        "Who is the mayor of Port Avel?",  # #1 filled with the first answer
    ]
    first, second = (shown(c) for c in model.calls[1:])
    assert P_LENA in first and len(first) == 2
    assert P_PORT in second and P_LENA not in second  # ranked for the filled lookup
    assert model.schemas[1] == LOOKUP_SCHEMA and model.schemas[2] == LOOKUP_SCHEMA
    assert set(model.temperatures) == {0.0}
    assert answer.prompt_tokens > 0 and answer.completion_tokens == 15
    assert answer.to_dict()["steps"][1]["answer"] == "Tomas Reed"


@pytest.mark.parametrize(
    ("first", "why"),
    [
        (json_reply({"lookups": ["Who is the mayor of Lena Marsh's town?"]}), "one lookup"),
        (json_reply("no idea"), "no plan in the reply"),
        (LLMError("the server is down"), "the plan failed: the server is down"),
    ],
)
def test_a_one_lookup_or_bad_plan_falls_back_to_the_one_call_reading(index, first, why):
    one = json_reply({"answerable": True, "answer": "Tomas Reed", "citations": [P_PORT]})
    model = ScriptedChatModel([first, one], per_call=True)
    answer = run(index, model)
    assert answer.text == "Tomas Reed" and answer.status == "answered"
    assert model.schemas[-1] == ANSWER_SCHEMA  # the one-call reader, over the whole pool
    assert sorted(shown(model.calls[-1])) == sorted(POOL)
    assert answer.steps[-1] == {"fallback": why}


def test_a_plan_whose_lookups_do_not_build_on_each_other_is_not_read_in_steps(index):
    # The question's parts in surface order, the second naming no earlier answer.
    parts = ["Who is the mayor?", "Where was Lena Marsh born?"]
    one = json_reply({"answerable": True, "answer": "Tomas Reed", "citations": [P_PORT]})
    model = ScriptedChatModel([json_reply({"lookups": parts}), one], per_call=True)
    answer = run(index, model)
    assert len(model.calls) == 2 and model.schemas[-1] == ANSWER_SCHEMA
    assert answer.text == "Tomas Reed"
    assert answer.steps == [{"plan": parts}, {"fallback": "the lookups do not build on each other"}]
    assert chained(["Where was Lena Marsh born?", "Who is the mayor of #1?"])
    assert not chained(["Where was Lena Marsh born?", "Who is the mayor of #2?"])  # not earlier


def test_the_plan_schema_bounds_the_lookups_and_leaves_the_chain_to_chained():
    # The chain is checked after the reply (chained), not by the grammar: a grammar
    # that will not close a later lookup until it names an earlier answer made the
    # 1.5B write past its closing quote to the token limit.
    jsonschema = pytest.importorskip("jsonschema")
    valid = jsonschema.Draft202012Validator(plan_schema(4)).is_valid
    assert valid({"lookups": ["Where was Lena Marsh born?"]})
    assert valid({"lookups": ["Where was Lena Marsh born?", "Who is the mayor of #1?"]})
    assert valid({"lookups": ["Who is the mayor?", "Where was Lena Marsh born?"]})
    assert not valid({"lookups": ["a", *(f"b of #{k}" for k in range(1, 5))]})  # five
    assert not valid({"lookups": []})
    assert not valid({"lookups": ["x" * 201]})


def test_the_plan_schema_is_a_grammar_the_local_model_can_follow():
    pytest.importorskip("llama_cpp")
    from llama_cpp import LlamaGrammar

    from ark.llm.local import json_grammar

    grammar = json_grammar(plan_schema())
    assert "#" not in grammar  # no pattern on the lookups' text
    LlamaGrammar.from_string(grammar, verbose=False)


def test_an_unknown_last_lookup_falls_back_with_the_lookups_kept(index):
    replies = [
        json_reply({"lookups": ["Where was Lena Marsh born?", "Who is the mayor of #1?"]}),
        json_reply({"answer": "Port Avel", "citations": [P_LENA]}),
        json_reply({"answer": "Unknown.", "citations": []}),
        json_reply({"answerable": False, "answer": "the mayor is not named", "citations": []}),
    ]
    answer = run(index, ScriptedChatModel(replies, per_call=True))
    assert answer.status == "not_answerable"
    assert [s.get("answer") for s in answer.steps[:2]] == ["Port Avel", "Unknown."]
    assert answer.steps[-1] == {"fallback": "the last lookup is unknown"}
    assert answer.completion_tokens == 20  # the plan, two lookups and the one call


def test_an_unknown_middle_answer_is_filled_as_unknown(index):
    replies = [
        json_reply({"lookups": ["Where was Lena Marsh born?", "Who is the mayor of #1?"]}),
        json_reply({"answer": "unknown", "citations": []}),
        json_reply({"answer": "Tomas Reed", "citations": [P_PORT]}),
    ]
    answer = run(index, ScriptedChatModel(replies, per_call=True))
    assert answer.steps[1]["lookup"] == "Who is the mayor of unknown?"
    assert answer.text == "Tomas Reed"


def test_bad_nodes_and_settings_are_errors(index):
    model = ScriptedChatModel([])
    with pytest.raises(ArkError, match="not in the graph"):
        run(index, model, nodes=[10_000])
    with pytest.raises(ArkError, match="at least 1"):
        run(index, model, max_lookups=0)
    assert model.calls == []


def test_a_hostile_model_s_plan_and_answers_are_bounded(index):
    """A server that ignores the schemas: a plan of 100 lookups each naming #1 forty
    times, 5 MB answers. The prompts stay small and the answers are cut, counted (issue 67)."""
    from ark.answer import MAX_ANSWER_CHARS
    from ark.probes import MAX_LOOKUP_ANSWER, MAX_LOOKUPS

    huge = "x" * 5_000_000
    plan = json_reply({"lookups": ["Where was Lena Marsh born?"] + ["#1 " * 40] * 99})
    lookups = [json_reply({"answer": huge, "citations": [P_LENA]})] * MAX_LOOKUPS
    model = ScriptedChatModel([plan, *lookups], per_call=True)
    answer = run(index, model)
    assert len(model.calls) == 1 + MAX_LOOKUPS
    assert max(len(m.content) for c in model.calls for m in c) < 50_000
    assert len(answer.text) <= MAX_LOOKUP_ANSWER
    one = ScriptedChatModel(
        [json_reply({"answerable": True, "answer": huge, "citations": [P_PORT]})], per_call=True
    )
    from ark.answer import write_answer

    cut = asyncio.run(write_answer(one, QUESTION, index, POOL))
    assert len(cut.text) <= MAX_ANSWER_CHARS and cut.answer_cut > 4_000_000
    assert cut.to_dict()["answer_cut"] == cut.answer_cut
