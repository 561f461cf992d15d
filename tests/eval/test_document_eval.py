"""``ark eval`` on questions over documents (MuSiQue's format) on a tiny hand-made
document index: BM25 over passages alone, passage recall in the summary, the missing
gold paragraph warned about, and the answer step (naive RAG and ARK's) scored by EM/F1
with a scripted model."""

import json
import re
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from _documents_fixture import MUSIQUE, PASSAGES, build_document_index, write_json
from ark.cli import app
from ark.eval import evaluate, evidence_passages, read_records
from ark.llm import Message
from ark.testing import ScriptedChatModel, json_reply, tool_call

N_PASSAGES = len(PASSAGES)


@pytest.fixture(scope="module")
def doc_index(tmp_path_factory):
    return build_document_index(tmp_path_factory.mktemp("docs") / "docs.idx")


@pytest.fixture
def questions(tmp_path):
    return write_json(tmp_path / "musique_dev.json", MUSIQUE)


def test_ark_eval_bm25_on_musique_reports_passage_recall(doc_index, questions, tmp_path):
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "eval", "--dataset", f"musique:{questions}", "--index", str(doc_index.path),
            "--method", "bm25", "--out", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "warning: 1 supporting paragraphs are not in the index" in result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["missing_gold_passages"] == 1 and summary["scored"] == 3
    assert summary["config"]["ranks"] == "passages"
    records = {r["query_id"]: r for r in read_records(out)}
    for r in records.values():  # BM25 over passages alone: no entity node is ranked
        assert r["ranking"] and all(n < N_PASSAGES for n in r["ranking"])
        assert r["passages"] == r["ranking"]
    # The supporting passages are what Hit@k asks for, recall counts each paragraph.
    first = records["2hop__1_2"]
    assert first["supporting"] == [[2], [3]] and set(first["passages"][:2]) == {2, 3}
    assert first["metrics"]["recall@2"] == 1.0
    second = records["2hop__3_4"]
    assert second["passages"][:3] == [4, 2, 5]  # 5 is third: half the paragraphs at 2
    assert second["metrics"]["recall@2"] == 0.5 and second["metrics"]["recall@5"] == 1.0
    third = records["3hop1__5_6_7"]
    assert third["missing_answers"] == ["Velmar"]  # never retrievable: 2 of 3 at best
    assert third["supporting"] == [[0], [6, 7], []]
    assert third["metrics"]["recall@5"] == pytest.approx(2 / 3)
    m = summary["metrics"]
    assert m["recall@2"] == pytest.approx(100 * (1 + 0.5 + 2 / 3) / 3)
    assert m["recall@5"] == pytest.approx(100 * (1 + 1 + 2 / 3) / 3)
    assert {"hit@1", "hit@5", "recall@20", "mrr"} <= set(m) and "em" not in m
    # The passage stating the answer (the last decomposition step's): in the first 2 for
    # the first two questions; the third's is not in the index.
    assert [records[q]["metrics"]["answer@2"] for q in records] == [1.0, 1.0, 0.0]
    assert m["answer@2"] == pytest.approx(100 * 2 / 3) == m["answer@5"]
    assert "| R@2 | R@5 | Ans@2 | Ans@5 |" in (out / "summary.md").read_text()


def _evidence_block(messages: list[Message]) -> str:
    return messages[-1].content or ""


def test_bm25_with_the_answer_step_is_naive_rag(doc_index, questions, tmp_path):
    pytest.importorskip("ark.answer")
    replies = {
        "In which county": {"answerable": True, "answer": "the Tarsk County.", "citations": [3]},
        "In what city": {"answerable": True, "answer": "Port Selby harbour", "citations": [5]},
        # what the model says of missing evidence is not scored as an answer
        "What state": {"answerable": False, "answer": "Aldmere is not named", "citations": []},
    }

    def reader(messages: list[Message]) -> Message:
        prompt = _evidence_block(messages)
        return json_reply(next(v for k, v in replies.items() if f"Question: {k}" in prompt))

    llm = ScriptedChatModel(reader)
    summary = evaluate(
        f"musique:{questions}", doc_index, tmp_path / "run", method="bm25", answer=True,
        answer_writer="one", llm=llm,
    )  # fmt: skip
    records = {r["query_id"]: r for r in read_records(tmp_path / "run")}
    assert len(llm.calls) == 3
    for call in llm.calls:  # each answer is written from that question's top 5 passages
        question = re.search(r"Question: (.*)", _evidence_block(call)).group(1)
        record = next(r for r in records.values() if r["query"] == question)
        shown = [int(i) for i in re.findall(r"^\[(\d+)\]", _evidence_block(call), re.M)]
        assert shown == record["passages"][:5]
    assert records["2hop__1_2"]["metrics"]["em"] == 1.0
    assert records["2hop__3_4"]["metrics"]["f1"] == pytest.approx(0.8)  # P 2/3, R 1
    assert records["3hop1__5_6_7"]["metrics"]["f1"] == 0.0
    assert records["3hop1__5_6_7"]["answer"]["status"] == "not_answerable"
    assert records["2hop__1_2"]["gold_answers"] == ["Tarsk County", "Tarsk"]
    assert summary["metrics"]["em"] == pytest.approx(100 / 3)
    assert summary["metrics"]["f1"] == pytest.approx(100 * 1.8 / 3)
    assert summary["answers"] == {"answered": 2, "not_answerable": 1, "failed": 0}
    assert summary["config"]["answer"] is True and summary["config"]["answer_passages"] == 5
    assert "| EM | F1 |" in (tmp_path / "run" / "summary.md").read_text()


def test_a_bad_answer_reply_is_counted_and_scored_empty(doc_index, questions, tmp_path):
    pytest.importorskip("ark.answer")
    llm = ScriptedChatModel(lambda messages: Message(role="assistant", content="Tarsk County"))
    summary = evaluate(
        f"musique:{questions}", doc_index, tmp_path / "run", method="bm25", answer=True, llm=llm
    )
    assert summary["failed"] == 0 and summary["answers"]["failed"] == 3
    assert summary["metrics"]["em"] == 0.0 and summary["metrics"]["recall@5"] > 0
    record = read_records(tmp_path / "run")[0]
    assert record["answer"]["status"] == "bad_reply" and record["answer"]["error"]


def test_ark_answers_from_its_retrieval(doc_index, tmp_path):
    answer_mod = pytest.importorskip("ark.answer")

    def agent(messages: list[Message]) -> Message:
        if messages[0].content == answer_mod._write.SYSTEM:  # the answer step
            return json_reply({"answerable": True, "answer": "Tarsk", "citations": []})
        turn = sum(1 for m in messages if m.role == "assistant")
        if turn == 0:
            return tool_call("search_in_graph", query="Bellhaven painter Mira Dunfield born")
        if turn == 1:
            return tool_call("add_to_answer", node_indices=[2, 3])
        return tool_call("finish")

    llm = ScriptedChatModel(agent)
    one = write_json(tmp_path / "one.json", MUSIQUE[:1])
    summary = evaluate(
        f"musique:{one}", doc_index, tmp_path / "run", agents=1, max_steps=4,
        answer=True, llm=llm,
    )  # fmt: skip
    record = read_records(tmp_path / "run")[0]
    assert record["query_id"] == "2hop__1_2" and record["status"] == "ok"
    assert set(record["passages"]) >= {2, 3}  # its evidence passages
    assert record["metrics"]["recall@2"] == 1.0 and record["metrics"]["em"] == 1.0
    assert summary["config"]["answer_model"] == llm.name


def test_recall_reads_the_evidence_passages_else_the_rankings_passages(doc_index):
    ranked = [SimpleNamespace(index=i) for i in (9, 3, 10, 0)]  # 9, 10: entities
    assert evidence_passages(SimpleNamespace(ranking=ranked), doc_index) == [3, 0]
    with_evidence = SimpleNamespace(ranking=ranked, passages=[SimpleNamespace(node=5)])
    assert evidence_passages(with_evidence, doc_index) == [5]


def test_ark_report_shows_passage_recall(doc_index, questions, tmp_path):
    from ark.eval.report import write_report

    evaluate(f"musique:{questions}", doc_index, tmp_path / "docs", method="bm25")
    text = write_report([tmp_path / "docs"], tmp_path / "report", plots=False)
    assert "recall@2" in text and "72.22" in text and "88.89" in text
    csv = (tmp_path / "report" / "comparison.csv").read_text()
    assert csv.splitlines()[0].endswith("recall@2,recall@5,answer@2,answer@5,s/query,failed,path")


def test_dense_over_documents_ranks_the_passage_rows_only(doc_index, tmp_path):
    import asyncio

    import numpy as np

    from ark.eval import DenseMethod
    from ark.index import DenseIndex

    n = doc_index.graph.n_nodes
    vectors = np.zeros((n, 2), np.float32)
    vectors[:, 0] = 1.0  # every node points one way ...
    vectors[3] = vectors[N_PASSAGES] = [0.0, 1.0]  # ... but passage 3 and an entity
    vectors[5] = [0.6, 0.8]
    encoder = SimpleNamespace(encode=lambda texts: np.array([[0.0, 1.0]], np.float32))
    dense = DenseIndex(tmp_path, vectors, {"model": "test"})
    passages = np.arange(N_PASSAGES)
    out = asyncio.run(DenseMethod(dense, encoder, k=3, passages=passages)("q", "question"))
    assert out.ranking[:2] == [3, 5] and out.passages == out.ranking
    assert all(node < N_PASSAGES for node in out.ranking)  # the entity never ranks
    everything = asyncio.run(DenseMethod(dense, encoder, k=2)("q", "question"))
    assert everything.ranking == [3, N_PASSAGES] and everything.passages is None


def test_ray_is_refused_for_questions_over_documents(doc_index, questions, tmp_path):
    from ark.errors import ArkError
    from ark.eval import Evaluation, RaySettings

    documents = {"dataset": f"musique:{questions}"}
    for settings in (documents, {"dataset": "metaqa:1-hop", "answer": True}):
        run = Evaluation(index=doc_index, out=tmp_path / "r", ray=RaySettings(), **settings)
        with pytest.raises(ArkError, match="--ray does not run"):
            run.check()
    assert not (tmp_path / "r").exists()


def test_bm25_linked_lists_the_passages_linked_to_its_best_one(doc_index, questions, tmp_path):
    from ark.retrieval import linked_passages, question_relevance

    plain = evaluate(f"musique:{questions}", doc_index, tmp_path / "plain", method="bm25")
    linked = evaluate(
        f"musique:{questions}", doc_index, tmp_path / "linked", method="bm25", linked_passages=2
    )
    assert plain["config"]["linked_passages"] == 0 and linked["config"]["linked_passages"] == 2
    before = {r["query_id"]: r["passages"] for r in read_records(tmp_path / "plain")}
    texts = {q["id"]: q["question"] for q in MUSIQUE}
    changed = 0
    for r in read_records(tmp_path / "linked"):
        lead, got = before[r["query_id"]][0], r["passages"]
        rel = question_relevance(doc_index, texts[r["query_id"]])
        links = linked_passages(doc_index.graph, lead, rel, limit=2)
        assert got[: 1 + len(links)] == [lead, *links]  # the best, then its linked ones
        assert set(got) == set(before[r["query_id"]]) | set(links)
        changed += got != before[r["query_id"]]
    assert changed  # the bridge Mira Dunfield moves her other passage up


def test_ark_eval_linked_passages_option(doc_index, questions, tmp_path):
    out = tmp_path / "run"
    args = ["eval", "--dataset", f"musique:{questions}", "--index", str(doc_index.path)]
    result = CliRunner().invoke(
        app, [*args, "--method", "bm25", "--linked-passages", "2", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert json.loads((out / "summary.json").read_text())["config"]["linked_passages"] == 2
    bad = CliRunner().invoke(app, [*args, "--linked-passages", "-1", "--out", str(out)])
    assert bad.exit_code != 0


def test_hit_at_1_over_documents_reads_the_evidence_passages(doc_index, tmp_path):
    """An agent answering with an entity (no passage in its ranking) still hands the reader
    a supporting passage first: Hit@1 scores the passage list recall reads."""
    answer_mod = pytest.importorskip("ark.answer")
    from _documents_fixture import ENTITIES

    entity = N_PASSAGES + ENTITIES.index("Mira Dunfield")

    def agent(messages: list[Message]) -> Message:
        if messages[0].content == answer_mod._write.SYSTEM:
            return json_reply({"answerable": True, "answer": "Tarsk", "citations": []})
        turn = sum(1 for m in messages if m.role == "assistant")
        if turn == 0:
            return tool_call("search_in_graph", query="Bellhaven painter Mira Dunfield", k=13)
        if turn == 1:
            return tool_call("add_to_answer", node_indices=[entity])
        return tool_call("finish")

    one = write_json(tmp_path / "one.json", MUSIQUE[:1])
    evaluate(
        f"musique:{one}", doc_index, tmp_path / "run", agents=1, max_steps=4,
        answer=True, llm=ScriptedChatModel(agent),
    )  # fmt: skip
    record = read_records(tmp_path / "run")[0]
    assert record["status"] == "ok" and record["ranking"][0] == entity
    assert record["passages"][0] in record["gold"]
    assert record["metrics"]["hit@1"] == 1.0


def test_the_answer_is_read_in_steps_by_default_and_the_config_says_so(doc_index, tmp_path):
    from ark.probes import LOOKUP_SYSTEM, PLAN_SYSTEM

    def model(messages: list[Message]) -> Message:
        if messages[0].content == PLAN_SYSTEM:
            return json_reply({"lookups": ["Where was Mira Dunfield born?", "Where is #1?"]})
        if messages[0].content == LOOKUP_SYSTEM:
            said = "Bellhaven" if "Mira" in messages[-1].content.split("\n")[0] else "Tarsk"
            return json_reply({"answer": said, "citations": []})
        raise AssertionError("the one-call reader was not expected")

    llm = ScriptedChatModel(model)
    one = write_json(tmp_path / "one.json", MUSIQUE[:1])
    summary = evaluate(
        f"musique:{one}", doc_index, tmp_path / "run", method="bm25", answer=True, llm=llm
    )
    record = read_records(tmp_path / "run")[0]
    assert record["answer"]["text"] == "Tarsk" and record["metrics"]["em"] == 1.0
    assert summary["config"]["answer_writer"] == "steps"
    assert [s["answer"] for s in record["answer"]["steps"]] == ["Bellhaven", "Tarsk"]
    assert len(llm.calls) == 3  # the plan and two lookups
    plain = evaluate(f"musique:{one}", doc_index, tmp_path / "plain", method="bm25")
    assert "answer_writer" not in plain["config"]  # the default is not recorded


def test_an_unknown_answer_writer_is_refused_before_anything_runs(doc_index, tmp_path):
    from ark.errors import ArkError
    from ark.eval import Evaluation

    run = Evaluation(
        dataset="metaqa:1-hop", index=doc_index, out=tmp_path / "r", answer=True,
        answer_writer="twice",
    )  # fmt: skip
    with pytest.raises(ArkError, match="unknown answer writer 'twice'; use one or steps"):
        run.check()
    assert not (tmp_path / "r").exists()


def test_questions_with_answers_alone_are_scored_by_their_answers(doc_index, tmp_path):
    # docqa:FILE with no supporting passages: no rank can be scored, only the answer;
    # the run needs --answer, and the summary, the report and the viewer show EM/F1.
    pytest.importorskip("ark.answer")
    path = write_json(
        tmp_path / "qa.json",
        [
            {"id": "a", "question": "In which county is Bellhaven?", "answer": "Tarsk County"},
            {"id": "b", "question": "Where is the Corran Gallery?", "answers": ["Port Selby"]},
        ],
    )
    from ark.errors import ArkError

    with pytest.raises(ArkError, match="only a written answer can be scored: add --answer"):
        evaluate(f"docqa:{path}", doc_index, tmp_path / "refused", method="bm25")
    assert not (tmp_path / "refused").exists()  # refused before anything is written
    replies = {"county": "Tarsk County", "Corran": "the harbour city"}

    def reader(messages: list[Message]) -> Message:
        prompt = _evidence_block(messages)
        said = next(v for k, v in replies.items() if k in prompt.split("Question:")[-1])
        return json_reply({"answerable": True, "answer": said, "citations": [1]})

    out = tmp_path / "run"
    summary = evaluate(
        f"docqa:{path}", doc_index, out, method="bm25", answer=True, answer_writer="one",
        llm=ScriptedChatModel(reader),
    )  # fmt: skip
    assert summary["scored"] == 2 and summary["no_gold_in_graph"] == 0
    assert summary["metrics"] == {"em": 50.0, "f1": 50.0}  # no rank measure: no gold node
    records = {r["query_id"]: r for r in read_records(out)}
    assert records["a"]["status"] == "ok" and records["a"]["metrics"] == {"em": 1.0, "f1": 1.0}
    assert records["b"]["metrics"]["em"] == 0.0
    assert "| EM | F1 |" in (out / "summary.md").read_text()
    report = CliRunner().invoke(app, ["report", str(out), "--out", str(tmp_path / "rep")])
    assert report.exit_code == 0, report.output
    row = (tmp_path / "rep" / "comparison.csv").read_text().splitlines()[1]
    assert ",2,–,–,–,–,50.0,50.0," in row  # n, no rank measure (not 0.0), EM, F1
    from ark.serve.viewer import load_source

    _, rows, _ = load_source(out, doc_index.path)
    assert [r["m"] for r in rows] == [{"em": 1.0, "f1": 1.0}, {"em": 0.0, "f1": 0.0}]


def test_a_run_records_how_the_citations_were_checked():
    """The viewer shows a replaced citation from the run's record: it must keep it."""
    from ark.answer import Answer
    from ark.eval import answer_record

    recited = Answer(
        "Tomas Reed", [2], True, "answered", citation_check="recited", recited_from=[0]
    )
    record = answer_record(recited)
    assert record["citation_check"] == "recited" and record["recited_from"] == [0]
    plain = answer_record(Answer("x", [], False, "not_answerable"))
    assert "citation_check" not in plain and "recited_from" not in plain
