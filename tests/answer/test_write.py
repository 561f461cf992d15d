"""The answer step with scripted model replies: a good reply, a bad one, citations of
nodes the model was not shown, "the evidence does not answer", the text budget."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from _doubles import LLMError, ScriptedChatModel, json_reply, prose
from _passages_fixture import document_graph
from ark.answer import (
    ANSWER_SCHEMA,
    MAX_CHARS_LIMIT,
    Answer,
    write_answer,
    write_answer_sync,
)
from ark.errors import ArkError
from ark.graph import Graph

QUESTION = "Who is the mayor of the town where Lena Marsh was born?"
LENA, PORT_AVEL, TOMAS, SEALS = 0, 1, 2, 4  # passages of the hand-made graph
TOMAS_ENTITY = 9


def run(model, nodes, **options) -> Answer:  # type: ignore[no-untyped-def]
    return asyncio.run(write_answer(model, QUESTION, document_graph(), nodes, **options))


def reply(**obj: object) -> ScriptedChatModel:
    return ScriptedChatModel([json_reply(obj)])


def test_a_good_reply_is_an_answer_citing_the_nodes_shown():
    model = reply(answerable=True, answer="Tomas Reed", citations=[LENA, PORT_AVEL])
    answer = run(model, [LENA, PORT_AVEL, SEALS])
    assert answer.answerable is True
    assert answer.status == "answered" and answer.reason is None
    assert answer.text == "Tomas Reed"
    assert answer.citations == [LENA, PORT_AVEL]
    assert answer.nodes == [LENA, PORT_AVEL, SEALS] and answer.omitted == []
    assert answer.dropped_citations == 0
    assert answer.model == "scripted-test-model" and answer.completion_tokens == 5
    # One call: the JSON schema, no tools, greedy; the nodes' text (title line once).
    (messages,) = model.calls
    assert model.schemas == [ANSWER_SCHEMA]
    user = messages[-1].content
    assert QUESTION in user
    assert f"[{LENA}] Lena Marsh (passage)\nLena Marsh is a painter born in Port Avel." in user
    assert "Its mayor is Tomas Reed." in user
    assert user.count("Harbour seals") == 2  # the header's name and the text, no title line
    assert answer.to_dict()["citations"] == [LENA, PORT_AVEL]
    assert answer.to_dict()["text"] == "Tomas Reed"


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (prose("Tomas Reed is the mayor."), "bad reply: not JSON"),
        (json_reply(["Tomas Reed"]), "bad reply: a JSON list, not an object"),
        (json_reply({"answerable": "yes", "answer": "x", "citations": []}), "answerable"),
        (json_reply({"answerable": True, "answer": 7, "citations": []}), "not a string"),
        (json_reply({"answerable": True, "answer": "  ", "citations": [0]}), "empty answer"),
    ],
)
def test_a_bad_reply_is_an_unanswered_answer_with_the_reason(message, reason):
    answer = run(ScriptedChatModel([message]), [LENA, PORT_AVEL])
    assert answer.answerable is False
    assert answer.status == "bad_reply"
    assert reason in (answer.reason or "")
    assert answer.text == "" and answer.citations == []
    assert answer.nodes == [LENA, PORT_AVEL]  # what the model was shown is still said


def test_a_failing_model_is_an_unanswered_answer_never_an_exception():
    answer = run(ScriptedChatModel([LLMError("llama_decode returned 1")]), [LENA])
    assert (answer.answerable, answer.status) == (False, "model_error")
    assert "llama_decode returned 1" in (answer.reason or "")


def test_citations_of_nodes_not_shown_are_dropped_and_counted():
    model = reply(
        answerable=True,
        answer="Tomas Reed",
        # shown, shown again, in the graph but not shown, out of range, not an int
        citations=[PORT_AVEL, PORT_AVEL, SEALS, 10_000, -1, "x", f"{LENA}"],
    )
    answer = run(model, [LENA, PORT_AVEL])
    assert answer.citations == [PORT_AVEL, LENA]  # a quoted index is read
    assert answer.dropped_citations == 4
    assert answer.answerable is True


def test_the_model_saying_the_evidence_does_not_answer():
    model = reply(answerable=False, answer="The passages do not name the mayor.", citations=[SEALS])
    answer = run(model, [SEALS])
    assert answer.answerable is False
    assert answer.status == "not_answerable"
    assert answer.text == "The passages do not name the mayor."
    assert answer.citations == [SEALS]
    assert "does not answer" in (answer.reason or "")


def test_no_nodes_no_model_call():
    model = reply(answerable=True, answer="x", citations=[])
    answer = run(model, [])
    assert (answer.answerable, answer.status) == (False, "no_evidence")
    assert model.calls == []


def test_relations_followed_are_shown_and_their_ends_citable():
    model = reply(answerable=True, answer="Tomas Reed", citations=[TOMAS_ENTITY, 6])
    answer = run(model, [LENA], edges=[(TOMAS_ENTITY, "mayor of", 6)])
    assert "[9] Tomas Reed -mayor of-> [6] Port Avel" in model.calls[0][-1].content
    assert answer.citations == [TOMAS_ENTITY, 6] and answer.dropped_citations == 0


def long_graph(n: int, chars: int) -> Graph:
    return Graph.from_edges(
        names=[f"doc {i}" for i in range(n)],
        node_type=np.zeros(n, dtype=np.int64),
        node_type_names=["passage"],
        texts=[f"doc {i}\n" + ("word " * chars)[:chars] for i in range(n)],
        src=np.zeros(0, dtype=np.int64),
        dst=np.zeros(0, dtype=np.int64),
        rel=np.zeros(0, dtype=np.int64),
        relation_names=[],
    )


def test_the_text_budget_cuts_each_node_and_keeps_a_prefix_of_the_nodes():
    graph = long_graph(40, 5_000)
    model = ScriptedChatModel([json_reply({"answerable": True, "answer": "a", "citations": [39]})])
    answer = write_answer_sync(
        model, "q", graph, list(range(40)), max_chars=4_000, max_node_chars=900
    )
    shown = answer.nodes
    assert shown == list(range(len(shown))) and 0 < len(shown) < 40
    assert answer.omitted == list(range(len(shown), 40))
    assert answer.cut == len(shown)
    assert answer.evidence_chars <= 4_000
    user = model.calls[0][-1].content
    assert "…(cut)" in user
    assert len(user) < 4_000 + 500  # the evidence plus the question's frame
    # A node left out for the budget cannot be cited.
    assert answer.citations == [] and answer.dropped_citations == 1


def test_the_default_budget_fits_a_16k_context_whatever_the_nodes():
    graph = long_graph(200, 50_000)
    model = ScriptedChatModel([json_reply({"answerable": True, "answer": "a", "citations": []})])
    answer = write_answer_sync(model, "q" * 50_000, graph, list(range(200)))
    prompt = sum(len(m.content) for m in model.calls[0])
    assert prompt < 16_384 * 2.5 - 300 * 4  # pessimistic 2.5 chars a token, reply room
    assert answer.omitted  # most of 200 long nodes did not fit
    with pytest.raises(ArkError, match="16k"):
        write_answer_sync(model, "q", graph, [0], max_chars=MAX_CHARS_LIMIT + 1)


def test_a_node_outside_the_graph_is_the_callers_error():
    with pytest.raises(ArkError, match="not in the graph"):
        run(reply(answerable=True, answer="x", citations=[]), [10_000])
