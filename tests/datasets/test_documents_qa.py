"""MuSiQue and HotpotQA question files over a graph built from documents: the records
read in their own formats, gold passages found by title and text, and bad input
refused with the file, line and record."""

import json

import pytest

from _documents_fixture import (
    HOTPOTQA,
    MUSIQUE,
    ORVIN_RIVER,
    PASSAGES,
    build_document_index,
    write_json,
)
from ark.datasets import PassageMatcher, load_dataset, load_hotpotqa, load_musique
from ark.errors import ArkError


@pytest.fixture(scope="module")
def doc_index(tmp_path_factory):
    return build_document_index(tmp_path_factory.mktemp("docs") / "docs.idx")


def test_musique_supporting_paragraphs_become_passage_nodes(doc_index, tmp_path):
    queries = load_musique(write_json(tmp_path / "q.json", MUSIQUE), doc_index)
    assert [q.id for q in queries] == ["2hop__1_2", "2hop__3_4", "3hop1__5_6_7"]
    first, second, third = queries
    assert first.supporting == (frozenset({2}), frozenset({3}))
    assert first.gold == frozenset({2, 3}) and first.qtype == "2hop"
    assert first.answers == ("Tarsk County", "Tarsk")  # the answer, then its aliases
    assert first.text.startswith("In which county")
    # Two passages are titled "Mira Dunfield": the text picks the right one.
    assert second.supporting == (frozenset({4}), frozenset({5}))
    # Re-spaced text still matches; a paragraph stored as two chunks is one group of
    # both; a paragraph the graph lacks is an empty group, named in missing.
    assert third.supporting == (frozenset({0}), frozenset({6, 7}), frozenset())
    assert third.missing == ("Velmar",) and third.gold == frozenset({0, 6, 7})
    assert third.qtype == "3hop1"
    # The paragraph the last decomposition step reads states the answer (the second
    # question's steps run against the paragraphs' order); the third's is not indexed.
    assert [q.answer_passage for q in queries] == [{3}, {4}, frozenset()]


def test_musique_without_a_decomposition_has_no_answer_passage(doc_index, tmp_path):
    records = [{k: v for k, v in r.items() if k != "question_decomposition"} for r in MUSIQUE]
    queries = load_musique(write_json(tmp_path / "q.json", records), doc_index)
    assert [q.answer_passage for q in queries] == [None, None, None]


def test_musique_jsonl_reads_like_the_array(doc_index, tmp_path):
    array = load_musique(write_json(tmp_path / "q.json", MUSIQUE), doc_index)
    lines = load_musique(write_json(tmp_path / "q.jsonl", MUSIQUE, jsonl=True), doc_index)
    assert lines == array


def test_hotpotqa_supporting_facts_name_the_passages(doc_index, tmp_path):
    queries = load_hotpotqa(write_json(tmp_path / "h.json", HOTPOTQA), doc_index)
    h1, h2 = queries
    # Titles in the order the facts first name them; sentences joined match the passage.
    assert h1.supporting == (frozenset({2}), frozenset({1}))
    assert h1.answers == ("Tarsk County",) and h1.qtype == "bridge"
    assert h2.supporting == (frozenset(),) and h2.missing == ("Velmar",) and not h2.gold


def test_matcher_levels(doc_index):
    m = PassageMatcher(doc_index.graph)
    assert m.match("Bellhaven", "  Bellhaven is a market\ntown in Tarsk County. ") == {3}
    # letters and digits alike: other punctuation, spacing and case
    assert m.match("Bellhaven", "Bellhaven is a market-town in Tarsk County") == {3}
    assert m.match("BELLHAVEN", "Bellhaven is a market town in Tarsk County") == {3}
    assert m.match("Orvin River", ORVIN_RIVER) == {6, 7}
    # a chunk's text under another title is not that paragraph
    assert m.match("Lake Orvin", ORVIN_RIVER) == frozenset()
    assert m.match("Bellhaven", "Bellhaven is a city in Velmar.") == frozenset()
    assert m.match(None, PASSAGES[3][1]) == frozenset()  # titled nodes need the title


def test_load_dataset_scores_passages_only(doc_index, tmp_path):
    path = write_json(tmp_path / "q.json", MUSIQUE)
    queries, candidates = load_dataset(f"musique:{path}", doc_index, "dev", None)
    assert len(queries) == 3 and candidates == ["passage"]
    hot = write_json(tmp_path / "h.json", HOTPOTQA)
    assert load_dataset(f"hotpotqa:{hot}", doc_index, "dev", None)[1] == ["passage"]
    with pytest.raises(ArkError, match="musique:FILE expected"):
        load_dataset("musique:", doc_index, "dev", None)


def test_a_curated_graph_is_refused(metaqa_index, tmp_path):
    path = write_json(tmp_path / "q.json", MUSIQUE)
    with pytest.raises(ArkError, match="needs an index built from documents"):
        load_musique(path, metaqa_index)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r[1].pop("question"), r"q\.json:\d+ \(record 1\): missing 'question'"),
        (lambda r: r[2].update(answer=3), r"\(record 2\): 'answer' must be a str, got int"),
        (
            lambda r: r[0]["paragraphs"][1].pop("paragraph_text"),
            r"\(record 0\), paragraph 1: missing 'paragraph_text'",
        ),
        (lambda r: r[1].update(answer_aliases="x"), r"'answer_aliases' must be a list"),
        (
            lambda r: r[0].update(question_decomposition={"x": 1}),
            r"\(record 0\): 'question_decomposition' must be a list of objects",
        ),
        (
            lambda r: r[0]["question_decomposition"][-1].update(paragraph_support_idx=0),
            r"\(record 0\): the last step of 'question_decomposition' reads paragraph 0, "
            "which is not a supporting paragraph",
        ),
        (
            lambda r: [p.update(is_supporting=False) for p in r[0]["paragraphs"]],
            r"\(record 0\): no paragraph has is_supporting true",
        ),
    ],
)
def test_bad_musique_records_name_the_file_line_and_record(doc_index, tmp_path, change, message):
    records = json.loads(json.dumps(MUSIQUE))
    change(records)
    path = write_json(tmp_path / "q.json", records)
    with pytest.raises(ArkError, match=message):
        load_musique(path, doc_index)


def test_an_unanswerable_musique_full_question_is_kept_without_gold(doc_index, tmp_path):
    record = json.loads(json.dumps(MUSIQUE[0]))
    record["answerable"] = False
    for p in record["paragraphs"]:
        p["is_supporting"] = False
    (query,) = load_musique(write_json(tmp_path / "q.json", [record]), doc_index)
    assert not query.gold and query.supporting == () and query.answers[0] == "Tarsk County"


def test_the_line_named_is_where_the_record_starts(doc_index, tmp_path):
    records = json.loads(json.dumps(MUSIQUE))
    del records[2]["question"]
    path = write_json(tmp_path / "q.json", records)
    start = next(
        i
        for i, line in enumerate(path.read_text().splitlines(), start=1)
        if '"3hop1__5_6_7"' in line
    )
    with pytest.raises(ArkError) as info:
        load_musique(path, doc_index)
    # the record opens on the line before its "id" (the array is indented one key a line)
    assert f"q.json:{start - 1} (record 2)" in str(info.value)


def test_broken_json_names_the_line(doc_index, tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(MUSIQUE[0]) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(ArkError, match=r"q\.jsonl:2: not valid JSON"):
        load_musique(path, doc_index)
    arr = tmp_path / "a.json"
    arr.write_text("[" + json.dumps(MUSIQUE[0]) + ",\n\n{oops}]", encoding="utf-8")
    with pytest.raises(ArkError, match=r"a\.json:3 \(record 1\): not valid JSON"):
        load_musique(arr, doc_index)
    arr.write_text("[" + json.dumps(MUSIQUE[0]), encoding="utf-8")
    with pytest.raises(ArkError, match=r"a\.json: the JSON array is not closed"):
        load_musique(arr, doc_index)
    with pytest.raises(ArkError, match="not found"):
        load_musique(tmp_path / "absent.json", doc_index)


def test_bad_hotpotqa_records_are_refused_with_their_place(doc_index, tmp_path):
    records = json.loads(json.dumps(HOTPOTQA))
    records[0]["supporting_facts"].append(["Port Selby", 0])
    path = write_json(tmp_path / "h.json", records)
    with pytest.raises(ArkError, match=r"\(record 0\): supporting fact 3 names 'Port Selby'"):
        load_hotpotqa(path, doc_index)
    records = json.loads(json.dumps(HOTPOTQA))
    records[1]["context"][0] = ["Velmar", "not a list"]
    path = write_json(tmp_path / "h.json", records)
    with pytest.raises(ArkError, match=r"\(record 1\): context 0 must be \[title"):
        load_hotpotqa(path, doc_index)
    records = json.loads(json.dumps(HOTPOTQA))
    del records[1]["_id"]
    with pytest.raises(ArkError, match=r"\(record 1\): missing '_id'"):
        load_hotpotqa(write_json(tmp_path / "h.json", records), doc_index)


def test_a_line_separator_inside_a_question_stays_in_its_record(doc_index, tmp_path):
    """U+2028 is legal raw inside a JSON string: the JSONL reader splits on ``\\n`` only."""
    records = json.loads(json.dumps(MUSIQUE))
    records[0]["question"] = records[0]["question"] + "\u2028(and U+0085:\u0085)"
    path = tmp_path / "q.jsonl"
    path.write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8"
    )
    loaded = load_musique(path, doc_index)
    assert "\u2028(and U+0085:\u0085)" in loaded[0].text


def test_a_question_file_with_an_id_twice_or_no_question_is_refused(doc_index, tmp_path):
    """A run keys its records by id: a repeated id would be skipped as done; an empty
    file would run nothing and exit 0 (issue 67)."""
    from ark.datasets import load_dataset

    twice = json.loads(json.dumps(MUSIQUE))
    twice[1]["id"] = twice[0]["id"]
    path = write_json(tmp_path / "q.json", twice)
    with pytest.raises(ArkError, match=f"id '{twice[0]['id']}' appears twice"):
        load_dataset(f"musique:{path}", doc_index, "dev", None)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(ArkError, match="no questions"):
        load_dataset(f"musique:{empty}", doc_index, "dev", None)


def test_a_question_file_nested_too_deep_names_its_line(doc_index, tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(MUSIQUE[0]) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ArkError, match=r"q\.jsonl:2: not readable JSON \(nested too deep\)"):
        load_musique(path, doc_index)
