"""ark convert-stark, index build, eval and report on a STaRK-format fixture, via the CLI."""

import json

import pytest
from typer.testing import CliRunner

pytest.importorskip("torch", reason="reading STaRK's .pt files needs torch ([stark] extra)")

from _stark_fixture import write_kb
from ark.cli import app

runner = CliRunner()


def invoke(*args):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


def test_mag_fixture_end_to_end(tmp_path):
    info = {
        0: {"DisplayName": "Ada Lovelace", "PaperCount": 3},
        1: {"DisplayName": "Charles Babbage", "PaperCount": 5},
        2: {"title": "Notes on the analytical engine", "abstract": "Bernoulli numbers by machine."},
        3: {"title": "Passages from the life of a philosopher", "abstract": "An autobiography."},
        4: {"DisplayName": "Computing"},
    }
    write_kb(
        tmp_path / "kb" / "processed",
        info,
        edges=[(0, 2), (1, 3), (2, 4), (3, 2)],
        edge_types=[3, 3, 2, 1],
        node_types=[0, 0, 3, 3, 2],
    )
    qa = tmp_path / "qa"
    (qa / "split").mkdir(parents=True)
    (qa / "stark_qa.csv").write_text(
        "id,query,answer_ids\n"
        '0,"paper about Bernoulli numbers computed by a machine","[2]"\n'
        '1,"autobiography of a philosopher","[3]"\n'
        '2,"papers by Ada Lovelace","[0]"\n'
        '3,"Ada Lovelace and her notes","[2, 0]"\n'
    )
    (qa / "split" / "test.index").write_text("0\n1\n2\n3\n")
    invoke("convert-stark", tmp_path / "kb", "--graph", "mag", "-o", tmp_path / "tables")
    invoke("index", "build", tmp_path / "tables", "-o", tmp_path / "idx")
    invoke(
        "eval", "--dataset", "stark:mag", "--data-dir", qa,  # STaRK's default split: test
        "--index", tmp_path / "idx", "--method", "bm25", "--out", tmp_path / "run",
    )  # fmt: skip
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["queries"] == 4 and summary["config"]["candidate_types"] == ["paper"]
    assert summary["config"]["split"] == "test"
    records = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    by_id = {r["query_id"]: r for r in records}
    assert by_id["0"]["metrics"]["hit@1"] == 1.0 and by_id["1"]["metrics"]["hit@1"] == 1.0
    # Candidates only: the author "Ada Lovelace" (node 0) ranks first for query 2 and is
    # its (non-candidate) answer, yet scores nothing: she is dropped from both sides.
    assert by_id["2"]["ranking"][0] == 0 and by_id["2"]["metrics"]["hit@1"] == 0.0
    # A gold answer that is not a candidate (the author, node 0) is not counted either:
    # one gold candidate found of one, not one of two.
    assert by_id["3"]["metrics"]["recall@20"] == 1.0
    report = invoke("report", tmp_path / "run")
    assert "bm25" in report.output
