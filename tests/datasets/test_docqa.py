"""``docqa:FILE``, the plain format of questions over a user's own documents: answers
alone, or answers with supporting passages named by title and text or by document
title; bad records refused with their place."""

import json

import pytest

from _documents_fixture import ORVIN_RIVER, build_document_index, write_json
from ark.datasets import load_dataset, load_docqa
from ark.errors import ArkError


@pytest.fixture(scope="module")
def doc_index(tmp_path_factory):
    return build_document_index(tmp_path_factory.mktemp("docs") / "docs.idx")


def test_supporting_passages_by_text_or_by_document_title(doc_index, tmp_path):
    records = [
        {
            "id": "q1",
            "question": "Where was the painter born?",
            "answer": "Bellhaven",
            "answer_aliases": ["Bellhaven town"],
            # a document title: every passage of that document (two share it)
            "supporting": [
                "Mira Dunfield",
                {"title": "Bellhaven", "text": "Bellhaven is a market town in Tarsk County."},
            ],
            "type": "bridge",
        },
        {
            "question": "Where does the river end?",
            "answers": ["Port Selby"],
            # a paragraph ark ingest cut into two chunks: matched by both
            "supporting": [{"title": "Orvin River", "text": ORVIN_RIVER}, "Velmar"],
        },
    ]
    queries = load_docqa(write_json(tmp_path / "qa.json", records), doc_index)
    first, second = queries
    assert first.id == "q1" and first.qtype == "bridge" and not first.by_answer
    assert first.supporting == (frozenset({2, 4}), frozenset({3}))
    assert first.gold == frozenset({2, 3, 4})
    assert first.answers == ("Bellhaven", "Bellhaven town")
    assert second.id == "1"  # the record's number
    assert second.supporting == (frozenset({6, 7}), frozenset())
    assert second.missing == ("Velmar",)  # not in the index: counted, never retrievable
    assert second.answers == ("Port Selby",)


def test_answers_alone_are_scored_by_the_answer(doc_index, tmp_path):
    lines = [
        {"id": "a", "question": "Who painted at Bellhaven?", "answer": "Mira Dunfield"},
        {
            "id": "b",
            "question": "Which museum is in Port Selby?",
            "answers": ["Corran Gallery"],
            "supporting": [],
        },
    ]
    path = tmp_path / "qa.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    queries, candidates = load_dataset(f"docqa:{path}", doc_index, "dev", None)
    assert candidates == ["passage"]
    assert [q.by_answer for q in queries] == [True, True]
    assert all(not q.gold and not q.supporting for q in queries)


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([{"answer": "x"}], r"qa.json:2 \(record 0\): missing 'question'"),
        ([{"question": "q"}], "missing 'answer'"),
        ([{"question": "q", "answer": "x", "answers": ["x"]}], "not both"),
        ([{"question": "q", "answers": ["  "]}], "no non-empty answer"),
        ([{"question": "q", "answers": [3]}], "answers must be strings"),
        ([{"question": "q", "answer": "x", "supporting": "Velmar"}], "'supporting' must be a list"),
        (
            [{"question": "q", "answer": "x", "supporting": [3]}],
            "supporting 0: a supporting passage is",
        ),
        (
            [{"question": "q", "answer": "x", "supporting": [{"title": "t"}]}],
            "supporting 0: missing 'text'",
        ),
        (
            [
                {"question": "q", "answer": "x", "supporting": ["Velmar"]},
                {"question": "r", "answer": "y"},
            ],
            r"record 1\): gives no supporting passages while the records before it do",
        ),
        (
            [
                {"id": 1, "question": "q", "answer": "x"},
                {"id": "1", "question": "r", "answer": "y"},
            ],
            "id '1' repeats the id of",
        ),
        ([], "no questions"),
    ],
)
def test_bad_records_are_refused_with_their_place(doc_index, tmp_path, records, message):
    path = tmp_path / "qa.json"
    path.write_text(json.dumps(records, indent=1), encoding="utf-8")
    with pytest.raises(ArkError, match=message):
        load_docqa(path, doc_index)
