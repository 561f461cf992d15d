"""A killed ingestion resumes: no chunk extracted twice, none written twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _doubles import ScriptedChatModel, json_reply
from ark.ingest import ingest
from ark.llm import Message
from ark.probes import EXTRACTIONS

N_DOCS = 6


def write_docs(tmp_path: Path) -> Path:
    path = tmp_path / "docs.jsonl"
    lines = [
        json.dumps({"id": f"d{i}", "title": f"Doc {i}", "text": f"Entity{i} lives in Town{i}."})
        for i in range(N_DOCS)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def reply_for(messages: list[Message]) -> Message:
    """The chunk's two names as entities and a triple between them."""
    text = next(m.content for m in messages if m.role == "user")
    words = [w.strip(".") for w in text.split() if w.startswith(("Entity", "Town"))]
    return json_reply({"entities": words, "triples": [[words[0], "lives in", words[1]]]})


def cache_lines(work: Path) -> list[dict]:
    return [json.loads(line) for line in (work / EXTRACTIONS).read_text().splitlines()]


class Interrupted(Exception):
    """Stands for the user's Ctrl-C in the middle of a run."""


def test_an_interrupted_run_resumes_without_redoing_or_duplicating_chunks(tmp_path):
    docs, work = write_docs(tmp_path), tmp_path / "work"
    calls = 0

    def dies_on_the_fourth_call(messages: list[Message]) -> Message:
        nonlocal calls
        calls += 1
        if calls == 4:
            raise Interrupted
        return reply_for(messages)

    with pytest.raises(Interrupted):
        ingest(docs, None, llm=ScriptedChatModel(dies_on_the_fourth_call), work_dir=work)
    assert len(cache_lines(work)) == 3

    llm = ScriptedChatModel(reply_for)
    report = ingest(docs, None, llm=llm, work_dir=work)
    assert len(llm.calls) == N_DOCS - 3  # only the chunks not yet extracted
    assert (report.reused, report.extracted) == (3, N_DOCS - 3)
    lines = cache_lines(work)
    assert len(lines) == N_DOCS and len({r["key"] for r in lines}) == N_DOCS
    rows = [json.loads(x) for x in Path(report.passages).read_text().splitlines()]
    assert [r["id"] for r in rows] == [f"d{i}#0" for i in range(N_DOCS)]
    assert all(r["triples"] == [[f"Entity{i}", "lives in", f"Town{i}"]] for i, r in enumerate(rows))

    again = ScriptedChatModel(reply_for)
    assert ingest(docs, None, llm=again, work_dir=work).reused == N_DOCS and not again.calls


def test_a_torn_last_line_is_dropped_and_its_chunk_extracted_again(tmp_path):
    docs, work = write_docs(tmp_path), tmp_path / "work"
    ingest(docs, None, llm=ScriptedChatModel(reply_for), work_dir=work)
    path = work / EXTRACTIONS
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])  # killed mid-write

    llm = ScriptedChatModel(reply_for)
    report = ingest(docs, None, llm=llm, work_dir=work)
    assert report.damaged_cache_lines == 1 and len(llm.calls) == 1
    assert len(cache_lines(work)) == N_DOCS  # every line whole, one per chunk


SCRIPT = """
import sys, time
sys.path.insert(0, {tests!r})
from _doubles import ScriptedChatModel
from test_ingest_resume import reply_for
from ark.ingest import ingest

def slow(messages):
    time.sleep(0.3)
    return reply_for(messages)

ingest({docs!r}, None, llm=ScriptedChatModel(slow), work_dir={work!r})
"""


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")
def test_a_process_killed_with_sigkill_resumes(tmp_path):
    docs, work = write_docs(tmp_path), tmp_path / "work"
    here = Path(__file__).resolve().parent
    script = SCRIPT.format(tests=str(here.parent), docs=str(docs), work=str(work))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(here), str(here.parent)])}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            path = work / EXTRACTIONS
            if path.exists() and path.read_text().count("\n") >= 2:
                break
            if proc.poll() is not None:
                pytest.fail(f"the ingesting process ended early ({proc.returncode})")
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    done = len([x for x in (work / EXTRACTIONS).read_text().splitlines() if x.strip()])
    assert 2 <= done < N_DOCS

    llm = ScriptedChatModel(reply_for)
    report = ingest(docs, None, llm=llm, work_dir=work)
    assert len(llm.calls) == N_DOCS - done + report.damaged_cache_lines
    keys = [r["key"] for r in cache_lines(work)]
    assert len(keys) == len(set(keys)) == N_DOCS


# -- the work directory is ARK's, and one ingest's at a time (issue 67) -----------------


def test_a_work_directory_holding_the_user_s_files_is_refused_naming_them(tmp_path):
    from ark.errors import ArkError

    docs, work = write_docs(tmp_path), tmp_path / "mine"
    work.mkdir()
    (work / "passages.jsonl").write_text("my own passages\n")
    (work / "ingest.json").write_text('{"my": "notes"}')
    (work / "thesis.tex").write_text("...")
    with pytest.raises(ArkError, match=r"did not write \(ingest\.json, passages\.jsonl, thesis"):
        ingest(docs, None, llm=ScriptedChatModel(reply_for), work_dir=work)
    assert (work / "passages.jsonl").read_text() == "my own passages\n"
    assert (work / "ingest.json").read_text() == '{"my": "notes"}'


def test_a_work_directory_an_ingest_made_is_taken_again(tmp_path):
    docs, work = write_docs(tmp_path), tmp_path / "work"
    ingest(docs, None, llm=ScriptedChatModel(reply_for), work_dir=work)
    again = ingest(docs, None, llm=ScriptedChatModel(reply_for), work_dir=work)
    assert again.reused == again.chunks and not (work / "ingest.lock").exists()


def test_a_second_ingest_into_a_held_work_directory_fails_at_once(tmp_path):
    from ark.eval import RunLockedError
    from ark.probes import RunLock

    docs, work = write_docs(tmp_path), tmp_path / "work"
    work.mkdir()
    holder = RunLock(work, "ingest.lock")  # as a live ingest holds it
    holder.acquire()
    try:
        model = ScriptedChatModel(reply_for)
        with pytest.raises(RunLockedError, match="another --work-dir"):
            ingest(docs, None, llm=model, work_dir=work)
        assert model.calls == []  # no model call was paid for
    finally:
        holder.release()


def test_a_lone_surrogate_in_a_reply_is_cached_safely_and_resumes(tmp_path):
    docs, work = write_docs(tmp_path), tmp_path / "work"

    def surrogate(messages: list[Message]) -> Message:
        return json_reply({"entities": ["Bad\ud800Name"], "triples": []})

    first = ingest(docs, None, llm=ScriptedChatModel(surrogate), work_dir=work)
    assert first.extracted == first.chunks
    again = ingest(docs, None, llm=ScriptedChatModel(surrogate), work_dir=work)
    assert again.reused == again.chunks
