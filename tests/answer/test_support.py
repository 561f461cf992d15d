"""Citations checked against the text of the nodes shown: they stand where they hold
the answer's claim, are replaced by the shown nodes that hold it, and an answer no
shown node holds says it is not the evidence's (issue 66: an answer from the model's
memory came with two citations of passages without its subject)."""

from __future__ import annotations

import asyncio

from _doubles import ScriptedChatModel, json_reply
from _passages_fixture import P_HARBOUR, P_LENA, P_PORT, P_SEALS, P_TOMAS, QUESTION, document_graph
from ark.answer import Answer, check_citations, unsupported_terms, write_answer
from ark.index import Tokenizer, TokenizerConfig

TOK = Tokenizer(TokenizerConfig())


def answered(text: str, citations: list[int], shown: list[int]) -> Answer:
    return Answer(text, citations, True, "answered", nodes=shown)


def test_citations_that_hold_the_claim_stand():
    a = answered("Tomas Reed", [P_PORT], [P_LENA, P_PORT, P_SEALS])
    got = check_citations(a, QUESTION, document_graph(), TOK)
    assert got.citations == [P_PORT] and got.answerable and got.citation_check == "held"


def test_a_wrong_citation_is_replaced_by_the_shown_node_that_holds_the_claim():
    a = answered("Tomas Reed", [P_LENA, P_SEALS], [P_LENA, P_SEALS, P_TOMAS])
    got = check_citations(a, QUESTION, document_graph(), TOK)
    assert got.answerable and got.status == "answered"
    assert got.citations == [P_TOMAS] and got.recited_from == [P_LENA, P_SEALS]
    assert got.citation_check == "recited" and got.to_dict()["recited_from"] == [P_LENA, P_SEALS]


def test_an_answer_no_shown_node_holds_says_it_is_not_the_evidences():
    a = answered("Anna Berg", [P_PORT], [P_LENA, P_PORT])
    got = check_citations(a, QUESTION, document_graph(), TOK)
    assert not got.answerable and got.status == "unsupported"
    assert "anna" in got.reason and "berg" in got.reason and got.text == "Anna Berg"
    assert got.citations == [] and got.recited_from == [P_PORT]  # nothing shown says it


def test_an_answer_that_repeats_the_question_has_no_claim_to_check():
    a = answered("Lena Marsh", [P_SEALS], [P_SEALS])
    assert check_citations(a, QUESTION, document_graph(), TOK) == a
    assert unsupported_terms("the mayor", QUESTION, [], TOK) == set()


def test_the_index_stemmer_matches_other_forms_of_a_word():
    stem = Tokenizer(TokenizerConfig(stemmer="english"))
    cited = ["Doc tests marked so are compiled but never run."]
    assert unsupported_terms("It compiles tests", "What does it do?", cited, stem) == set()
    assert unsupported_terms("It compiles tests", "What does it do?", cited, TOK) == {"compiles"}


def test_the_answer_step_checks_what_the_model_cites():
    reply = {"answerable": True, "answer": "Tomas Reed", "citations": [P_LENA]}
    model = ScriptedChatModel([json_reply(reply)])
    nodes = [P_LENA, P_PORT, P_HARBOUR]
    got = asyncio.run(write_answer(model, QUESTION, document_graph(), nodes))
    assert got.citations == [P_PORT] and got.recited_from == [P_LENA]
    invented = {"answerable": True, "answer": "Anna Berg", "citations": [P_LENA]}
    model = ScriptedChatModel([json_reply(invented)])
    got = asyncio.run(write_answer(model, QUESTION, document_graph(), nodes))
    assert got.status == "unsupported" and not got.answerable
