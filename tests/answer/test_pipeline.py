"""``ark.answer.answer_question``: retrieval, then the answer step over the ranking and
its evidence passages, with each citation's evidence paths; the retriever only
retrieves."""

from __future__ import annotations

import json

import pytest

from _doubles import ScriptedChatModel, json_reply, tool_call
from _passages_fixture import build_document_index
from ark import Retriever
from ark.answer import ANSWER_SCHEMA, answer_question
from ark.index import Index

P_LENA, P_PORT, P_TOMAS, P_HARBOUR, P_SEALS = range(5)
LENA, PORT, TOMAS = 5, 6, 9


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_document_index(tmp_path_factory.mktemp("docs") / "idx")


def chain(reply: dict[str, object], calls: int = 1) -> ScriptedChatModel:
    """One agent follows Lena Marsh -born in-> Port Avel <-mayor of- Tomas Reed and
    adds Tomas Reed; the next ``calls`` calls (the answer step's) get ``reply``."""
    return ScriptedChatModel(
        [
            tool_call("search_in_graph", query="Lena Marsh painter"),
            tool_call("search_in_neighborhood", node_index=LENA),
            tool_call("search_in_neighborhood", node_index=PORT),
            tool_call("add_to_answer", node_indices=[TOMAS]),
            tool_call("finish"),
            *[json_reply(reply)] * calls,
        ],
        per_call=True,
    )


def test_answer_reads_the_ranking_and_the_evidence_passages(docs):
    model = chain({"answerable": True, "answer": "Tomas Reed", "citations": [P_TOMAS, TOMAS]})
    retriever = Retriever(docs, model, n_agents=1, seed=0)
    answered = answer_question(retriever, "Who is the mayor?", writer="one")
    result = answered.retrieval
    assert [r.index for r in result.ranking] == [TOMAS]
    answer = answered.answer
    assert answer.answerable and not answered.recorded
    assert answer.text == "Tomas Reed"
    # The ranked node first, then its evidence passages: the one most relevant to the
    # question leads, the one sharing a bridge entity (Tomas Reed) with it follows, then
    # the rest of the chain's, then the passages the agent was shown on the way.
    assert answer.nodes[:4] == [TOMAS, P_TOMAS, P_PORT, P_LENA]
    assert answer.nodes[4:] == [p.node for p in result.passages if p.via == "seen"]
    assert model.schemas[-1] == ANSWER_SCHEMA and model.schemas[0] is None
    prompt = model.calls[-1][-1].content
    assert "Tomas Reed is a politician who has been mayor of Port Avel" in prompt
    assert "Harbour seals" not in prompt  # on no evidence path, never shown
    # The relations of the path, as facts (the direction decides the head).
    assert f"[{TOMAS}] Tomas Reed -mayor of-> [{PORT}] Port Avel" in prompt
    assert f"[{LENA}] Lena Marsh -born in-> [{PORT}] Port Avel" in prompt
    # Each citation comes with its evidence paths.
    paths = answered.cited_paths()
    assert list(paths) == [P_TOMAS, TOMAS]
    assert paths[TOMAS] == list(result.why(TOMAS).paths)
    assert paths[P_TOMAS] == list(result.passages[2].paths) and paths[P_TOMAS]
    d = json.loads(json.dumps(answered.to_dict()))
    assert list(d)[list(d).index("passages") + 1] == "answer"  # where `ark ask --json` had it
    assert d["wall_s"] == answered.wall_s >= result.wall_s
    assert d["answer"]["text"] == "Tomas Reed"
    assert d["answer"]["citations"] == [P_TOMAS, TOMAS]
    assert d["answer"]["evidence"][str(TOMAS)][0]["hops"][-1]["neighbor"] == TOMAS


def test_a_bad_answer_reply_keeps_the_retrieval(docs):
    model = ScriptedChatModel(
        [
            tool_call("search_in_graph", query="Lena Marsh painter"),
            tool_call("add_to_answer", node_indices=[P_LENA]),
            tool_call("finish"),
            json_reply({"answer": "Tomas Reed"}),
        ],
        per_call=True,
    )
    answered = answer_question(
        Retriever(docs, model, n_agents=1), "Who is the mayor?", writer="one"
    )
    assert [r.index for r in answered.retrieval.ranking] == [P_LENA]
    assert answered.answer.status == "bad_reply"
    assert answered.cited_paths() == {}


def test_retrieve_alone_has_no_answer(docs):
    model = chain({"answerable": True, "answer": "x", "citations": []})
    retriever = Retriever(docs, model, n_agents=1)
    result = retriever.retrieve("Who is the mayor?")
    assert "answer" not in result.to_dict()
    assert len(model.calls) == 5  # no answer call
    # The retriever only retrieves: answering is the step above it (ark.answer).
    assert not hasattr(retriever, "answer") and not hasattr(retriever, "aanswer")
    assert not hasattr(result, "answer")


def test_answer_reads_in_steps_by_default(docs):
    from ark.probes import LOOKUP_SCHEMA

    model = ScriptedChatModel(
        [
            tool_call("search_in_graph", query="Lena Marsh painter"),
            tool_call("search_in_neighborhood", node_index=LENA),
            tool_call("search_in_neighborhood", node_index=PORT),
            tool_call("add_to_answer", node_indices=[TOMAS]),
            tool_call("finish"),
            json_reply({"lookups": ["Where was Lena Marsh born?", "Who is the mayor of #1?"]}),
            json_reply({"answer": "Port Avel", "citations": [P_LENA]}),
            json_reply({"answer": "Tomas Reed", "citations": [P_TOMAS]}),
        ],
        per_call=True,
    )
    answered = answer_question(Retriever(docs, model, n_agents=1, seed=0), "Who is the mayor?")
    assert answered.answer.text == "Tomas Reed"
    assert answered.answer.citations == [P_LENA, P_TOMAS]
    assert model.schemas[-2:] == [LOOKUP_SCHEMA, LOOKUP_SCHEMA]
    assert answered.cited_paths()[P_TOMAS]  # the citations keep their evidence paths


def test_an_unknown_writer_fails_before_the_retrieval(docs):
    from ark.errors import ArkError

    model = ScriptedChatModel([])
    retriever = Retriever(docs, model, n_agents=1, seed=0)
    with pytest.raises(ArkError, match="unknown answer writer"):
        answer_question(retriever, "Who is the mayor?", writer="twice")
    assert model.calls == []


def test_chat_answers_in_words_with_checked_citations(docs):
    """`ark chat --answer` (issue 66): the answer and its citations under the ranking,
    a citation of a node that does not hold the answer replaced by one that does."""
    import asyncio

    from rich.console import Console

    from ark.serve.chat import ChatSession

    # two answer calls: the plan call gets no plan, so the one call reads
    model = chain({"answerable": True, "answer": "Tomas Reed", "citations": [P_HARBOUR]}, 2)
    console = Console(record=True, width=200)
    session = ChatSession(docs, model, agents=1, answer=True, console=console)
    asyncio.run(session.ask("Who is the mayor?"))
    answer = session.last_answer
    assert answer is not None and answer.recited_from == [P_HARBOUR]
    shown = console.export_text()
    assert "Answer: Tomas Reed" in shown
    assert f"cites [{answer.citations[0]}]" in shown
    assert f"the model cited [{P_HARBOUR}], which do not hold what it says" in shown
