"""Query loaders on MetaQA dev questions (the tests' sample) and on small files."""

import json

import pytest

from _helpers import metaqa_dir
from ark.datasets import load_jsonl, load_metaqa, load_stark_qa, sample
from ark.errors import ArkError


@pytest.mark.parametrize(("hop", "count"), [(1, 500), (2, 500), (3, 500)])
def test_metaqa_dev_counts(metaqa_index, hop, count):
    queries = load_metaqa(metaqa_dir(), hop, index=metaqa_index)
    assert len(queries) == count
    assert len({q.id for q in queries}) == count
    assert all(q.qtype for q in queries)


def test_metaqa_answers_map_to_nodes_and_brackets_are_removed(metaqa_index):
    queries = load_metaqa(metaqa_dir(), 1, index=metaqa_index)
    names = metaqa_index.graph.names.to_pylist()
    q = next(q for q in queries if q.text == "what movies did Temuera Morrison act in")
    assert {"Once Were Warriors", "Tracker", "River Queen"} <= {names[i] for i in q.gold}
    assert not any("[" in q.text or "]" in q.text for q in queries)
    # Every answer of the sample is a KB string (checked by exact match).
    assert not [q for q in queries if q.missing]


def test_metaqa_answers_missing_from_the_graph_are_kept_separately(metaqa_index, tmp_path):
    hop = tmp_path / "1-hop"
    hop.mkdir()
    (hop / "qa_dev.txt").write_text(
        "who directed [Forrest Gump]\tRobert Zemeckis\nwho wrote [X]\tNo Such Person|Tom Hanks\n"
        "who is [Y]\tNobody, Really\n"
    )
    a, b, c = load_metaqa(tmp_path, 1, index=metaqa_index)
    assert a.missing == () and len(a.gold) == 1
    assert b.missing == ("No Such Person",) and len(b.gold) == 1
    assert c.missing == ("Nobody, Really",) and not c.gold
    assert a.qtype is None  # no qtype file
    # The paraphrased file writes apostrophes as HTML entities; the question reads them.
    (hop / "qa_dev_ntm.txt").write_text("who is [Forrest Gump] &apos;s director\tRobert Zemeckis\n")
    (ntm,) = load_metaqa(tmp_path, 1, split="dev_ntm", index=metaqa_index)
    assert ntm.text == "who is Forrest Gump 's director"
    (hop / "qa_dev.txt").write_text("no tab here\n")
    with pytest.raises(ArkError, match=r"qa_dev.txt:1"):
        load_metaqa(tmp_path, 1, index=metaqa_index)


def test_sample_is_deterministic_and_ordered(metaqa_index):
    queries = load_metaqa(metaqa_dir(), 2, index=metaqa_index)
    a, b = sample(queries, 30, 0), sample(queries, 30, 0)
    assert a == b and len(a) == 30
    positions = [queries.index(q) for q in a]
    assert positions == sorted(positions)
    assert sample(queries, 30, 1) != a


def test_jsonl_queries(metaqa_index, tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(
        json.dumps(
            {
                "id": "a",
                "query": "who directed Forrest Gump",
                "answer_names": ["Robert Zemeckis", "Nobody"],
            }
        )
        + "\n"
        + json.dumps({"id": "b", "query": "x", "answer_ids": [0, 1]})
        + "\n"
    )
    a, b = load_jsonl(path, metaqa_index)
    assert metaqa_index.graph.name(next(iter(a.gold))) == "Robert Zemeckis"
    assert a.missing == ("Nobody",)
    assert b.gold == {0, 1}
    path.write_text('{"id": "c", "query": "x", "answer_ids": [-4]}\n')
    with pytest.raises(ArkError, match=r"q.jsonl:1"):
        load_jsonl(path, metaqa_index)
    path.write_text('{"id": "c"}\n')
    with pytest.raises(ArkError, match=r"q.jsonl:1"):
        load_jsonl(path, metaqa_index)


def test_stark_qa_csv_and_split(tmp_path):
    (tmp_path / "split").mkdir()
    (tmp_path / "stark_qa.csv").write_text(
        'id,query,answer_ids\n0,"first query","[1, 2]"\n1,"second","[3]"\n2,"third","[4]"\n'
    )
    (tmp_path / "split" / "test.index").write_text("0\n2\n")
    queries = load_stark_qa(tmp_path, "test")
    assert [(q.id, q.text, sorted(q.gold)) for q in queries] == [
        ("0", "first query", [1, 2]),
        ("2", "third", [4]),
    ]
    with pytest.raises(ArkError, match="split file"):
        load_stark_qa(tmp_path, "val")
