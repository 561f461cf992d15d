"""benchmarks/bench_documents.py: the rows over the same questions into one table (the
rows needing no model, on the tiny document index)."""

import pytest

from _documents_fixture import MUSIQUE, build_document_index, write_json
from _helpers import benchmark


@pytest.fixture(scope="module")
def bench():
    return benchmark("bench_documents")


def test_baseline_rows_make_one_table(bench, tmp_path, capsys):
    index = build_document_index(tmp_path / "docs.idx")
    questions = write_json(tmp_path / "q.json", MUSIQUE)
    args = [
        "--dataset", f"musique:{questions}", "--index", str(index.path),
        "--out", str(tmp_path / "bench"), "--dense-model", str(tmp_path / "no-model"),
    ]  # fmt: skip
    bench.main(args)
    out = capsys.readouterr().out
    assert "| row | n | R@2 | R@5 | Ans@5 | Hit@1 | EM | F1 | s/question |" in out
    # the same numbers as `ark eval --method bm25` (tests/eval/test_document_eval.py)
    assert "| bm25 | 3 | 72.2 | 88.9 | 66.7 | 100.0 | – | – |" in out
    assert "| dense | – | skipped: " in out  # no model here: reported, not fatal
    assert "bm25: 1 supporting paragraphs not in the index" in out
    assert (tmp_path / "bench" / "current" / "bm25" / "summary.json").is_file()
    bench.main(args)  # a rerun resumes the finished rows, same table
    assert "| bm25 | 3 | 72.2 | 88.9 | 66.7 | 100.0 | – | – |" in capsys.readouterr().out


def test_naive_rag_is_bm25_with_the_answer_step(bench):
    from types import SimpleNamespace

    one = SimpleNamespace(writer="one")
    # in one call, said outright: the library's default reads in steps
    assert bench.row_settings("naive-rag", one) == {
        "method": "bm25", "answer": True, "answer_writer": "one",
    }  # fmt: skip
    assert bench.row_dir("naive-rag", one) == "naive-rag"


def test_the_writer_choice_reaches_the_answering_rows_only(bench):
    from types import SimpleNamespace

    steps = SimpleNamespace(
        writer="steps", agents=1, max_steps=8, temperature=0.7, seed=0, answer=True,
        linked_passages=None,
    )  # fmt: skip
    assert bench.row_settings("naive-rag", steps)["answer_writer"] == "steps"
    assert bench.row_dir("naive-rag", steps) == "naive-rag+steps"
    assert bench.row_settings("ark-guided", steps)["answer_writer"] == "steps"
    assert "answer_writer" not in bench.row_settings("bm25", steps)  # it does not answer
    assert bench.row_dir("graphsearch", steps) == "graphsearch"  # from its own basis
    assert "answer_writer" not in bench.row_settings("graphsearch", steps)
