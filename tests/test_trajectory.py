"""Trajectory records grow additively: old files read, newer fields are kept."""

import json

import pytest

from ark.errors import ArkError
from ark.index import build_index
from ark.session import ToolSession
from ark.trajectory import (
    StepRecord,
    ToolCallRecord,
    Trajectory,
    read_trajectories,
    write_trajectories,
)

#: A record as version 1 wrote it before any optional field existed.
OLD = {
    "query": "q",
    "model": "m",
    "config": {"max_steps": 2},
    "id": "t1",
    "query_id": "q1",
    "created": "2026-11-01T00:00:00Z",
    "messages": [],
    "steps": [
        {
            "index": 0,
            "llm_latency_s": 0.1,
            "prompt_tokens": 5,
            "completion_tokens": 2,
            "content": "",
            "tool_calls": [
                {
                    "id": "c",
                    "name": "search_in_graph",
                    "arguments": {"query": "x"},
                    "raw_arguments": "{}",
                    "observation": "o",
                    "ok": True,
                    "error_code": None,
                    "nodes": [1],
                    "duration_s": 0.0,
                }
            ],
            "note": None,
        }
    ],
    "answer": [1],
    "stop_reason": "finish",
    "error": None,
    "usage": {"prompt_tokens": 5, "completion_tokens": 2},
    "wall_s": 0.2,
    "schema_version": 1,
}


def test_old_version_1_files_still_read(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(OLD) + "\n", encoding="utf-8")
    (t,) = read_trajectories(path)
    assert t.answer == [1] and t.schema_minor == 0
    assert t.synthetic is False and t.cost is None and t.steps[0].module is None
    assert t.steps[0].tool_calls[0].center is None


def test_the_question_is_stored_under_the_records_keys(tmp_path):
    # ``question``/``question_id`` in code, ``query``/``query_id`` in every record (old
    # runs and their readers), in the order a record has always had them.
    t = Trajectory.from_dict(OLD)
    assert (t.question, t.question_id) == ("q", "q1") and t.extra == {}
    out = t.to_dict()
    assert list(out)[:5] == ["query", "model", "config", "id", "query_id"]
    assert "question" not in out and "question_id" not in out
    assert all(out[k] == v for k, v in OLD.items() if k != "steps")
    # A stored key named like the attribute is an unknown field, kept as it was.
    odd = Trajectory.from_dict({**OLD, "question": "kept"})
    assert odd.question == "q" and odd.to_dict()["question"] == "kept"


def test_unknown_fields_of_a_newer_minor_are_kept(tmp_path):
    newer = json.loads(json.dumps(OLD))
    newer.update(schema_minor=9, judge_score=0.5)
    newer["steps"][0]["thinking"] = "hmm"
    newer["steps"][0]["tool_calls"][0]["cache_hit"] = True
    t = Trajectory.from_dict(newer)
    assert t.extra == {"judge_score": 0.5}
    out = t.to_dict()
    assert out["judge_score"] == 0.5 and out["schema_minor"] == 9
    assert out["steps"][0]["thinking"] == "hmm"
    assert out["steps"][0]["tool_calls"][0]["cache_hit"] is True
    assert "extra" not in out and "extra" not in out["steps"][0]
    path = write_trajectories(tmp_path / "t.jsonl", [t])
    (back,) = read_trajectories(path)
    assert back.to_dict() == out


def test_another_major_version_is_refused(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({**OLD, "schema_version": 2}) + "\n", encoding="utf-8")
    with pytest.raises(ArkError, match=r"t\.jsonl:1"):
        list(read_trajectories(path))


def test_from_outcome_records_what_the_call_did(tmp_path):
    """Every field of the record comes from the session's outcome (a neighborhood call
    with its center and relations, an add with the nodes it appended), and the record
    survives the trajectory file unchanged."""
    kb = tmp_path / "kb.txt"
    kb.write_text(
        "Forrest Gump|directed_by|Robert Zemeckis\nCast Away|directed_by|Robert Zemeckis\n",
        encoding="utf-8",
    )
    index = build_index(kb, tmp_path / "idx")
    g = index.graph
    zemeckis = next(i for i in range(g.n_nodes) if g.name(i) == "Robert Zemeckis")
    films = {i for i in range(g.n_nodes) if g.name(i) in ("Forrest Gump", "Cast Away")}
    session = ToolSession(index)
    session.call("search_in_graph", {"query": "Robert Zemeckis"})
    hop = session.call("search_in_neighborhood", {"node_index": zemeckis})
    rec = ToolCallRecord.from_outcome(
        "c1", "search_in_neighborhood", {"node_index": zemeckis}, hop, raw_arguments="{}"
    )
    assert (rec.id, rec.name, rec.arguments, rec.raw_arguments) == (
        "c1",
        "search_in_neighborhood",
        {"node_index": zemeckis},
        "{}",
    )
    assert rec.ok and rec.error_code is None
    assert rec.observation == hop.observation
    assert rec.center == zemeckis and set(rec.nodes) == films
    assert rec.relations == [[{"type": "directed_by", "direction": "in"}]] * 2
    assert rec.duration_s == round(hop.duration_s, 6) > 0
    assert rec.added is None and rec.centers is None

    add = session.call("add_to_answer", {"node_indices": sorted(films)})
    shown = ToolCallRecord.from_outcome(
        "c2", "add_to_answer", {}, add, observation="seen (1 step left.)", timed=False
    )
    assert shown.added == sorted(films)
    assert shown.observation == "seen (1 step left.)" and shown.duration_s == 0.0

    bad = session.call("search_in_neighborhood", {"node_index": 10_000})
    failed = ToolCallRecord.from_outcome("c3", "search_in_neighborhood", None, bad)
    assert not failed.ok and failed.error_code == bad.code is not None

    t = Trajectory(question="q", model="m", config={})
    t.steps.append(StepRecord(0, 0.0, 0, 0, "", [rec, shown, failed]))
    path = write_trajectories(tmp_path / "t.jsonl", [t])
    (back,) = read_trajectories(path)
    assert back.to_dict() == t.to_dict()
