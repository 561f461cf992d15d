"""The HTML viewer: what it embeds, and the page in a real headless Chromium."""

from __future__ import annotations

import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from _helpers import node
from ark.serve.viewer import load_source, write_view
from ark.trajectory import read_trajectories

CHROMIUM = os.environ.get("ARK_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def expected_counts(trajectory, steps: int) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Nodes and edges the page should draw after ``steps`` steps, from the record."""
    nodes, edges = set(), set()
    for step in trajectory.steps[:steps]:
        for c in step.tool_calls:
            nodes.update(c.nodes)
            if c.center is not None:
                nodes.add(c.center)
                for n, rels in zip(c.nodes, c.relations or [], strict=True):
                    for r in rels:
                        ends = (n, c.center) if r["direction"] == "in" else (c.center, n)
                        edges.add((*ends, r["type"]))
    return len(nodes), len(edges)


@pytest.mark.slow
def test_view_embeds_structure_and_names(ark_run, metaqa_index):
    header, rows, details = load_source(ark_run)
    assert header["names"] is True and header["index"] == str(metaqa_index.path)
    assert [r["m"]["hit@1"] for r in rows] == [1.0, 0.0]
    steps = details[0]["trajectories"][0]["steps"]
    assert [c["tool"] for s in steps for c in s["calls"]] == [
        "search_in_graph", "search_in_neighborhood", "add_to_answer", "finish",
    ]  # fmt: skip
    hood = steps[1]["calls"][0]
    assert hood["center"] == node(metaqa_index, "Forrest Gump")
    assert hood["rels"] == [[["directed_by", "out"]]]
    zemeckis = node(metaqa_index, "Robert Zemeckis")
    assert details[0]["names"][str(zemeckis)] == ["Robert Zemeckis", "person"]


def test_view_reads_structure_not_observation_text(ark_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(ark_run, run)
    lines = (run / "trajectories.jsonl").read_text().splitlines()
    blanked = []
    for line in lines:
        t = json.loads(line)
        for s in t["steps"]:
            for c in s["tool_calls"]:
                c["observation"] = ""
        blanked.append(json.dumps(t))
    (run / "trajectories.jsonl").write_text("\n".join(blanked) + "\n")
    _, _, original = load_source(ark_run)
    _, _, without_text = load_source(run)
    graph = lambda d: [  # noqa: E731
        (c["nodes"], c["center"], c["rels"])
        for t in d["trajectories"] for s in t["steps"] for c in s["calls"]
    ]  # fmt: skip
    assert graph(without_text[0]) == graph(original[0])


def test_bare_trajectories_file_names_need_an_index(ark_run, metaqa_index, tmp_path):
    bare = tmp_path / "t.jsonl"
    shutil.copy(ark_run / "trajectories.jsonl", bare)
    info = write_view(bare, tmp_path / "a.html")
    assert info["queries"] == 2 and info["trajectories"] == 2 and info["names"] is False
    info = write_view(bare, tmp_path / "b.html", index_dir=metaqa_index.path)
    assert info["names"] is True
    _, rows, details = load_source(bare, metaqa_index.path)
    assert details[0]["ranking"] == [node(metaqa_index, "Robert Zemeckis")]  # fused by vote
    assert rows[0]["m"] is None  # no gold in a bare file


def test_baseline_run_has_rankings_and_metrics_only(bm25_run):
    _, rows, details = load_source(bm25_run)
    assert all(r["m"] is not None for r in rows)
    assert all(d["ranking"] and not d["trajectories"] for d in details)


def test_view_command_json(ark_run, tmp_path):
    from typer.testing import CliRunner

    from ark.cli import app

    out = tmp_path / "v.html"
    result = CliRunner().invoke(app, ["view", str(ark_run), "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["bytes"] == out.stat().st_size
    bad = CliRunner().invoke(app, ["view", str(tmp_path / "nothing"), "--json"])
    assert bad.exit_code == 1 and "no such run" in json.loads(bad.output)["error"]["message"]


# -- in a real browser ------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def open_page(browser, path: Path):  # type: ignore[no-untyped-def]
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}")
            if m.type in ("error", "warning") else None)  # fmt: skip
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: problems.append(f"network: {r.url}")
            if not r.url.startswith(("file:", "data:")) else None)  # fmt: skip
    page.goto(path.resolve().as_uri())
    page.wait_for_function("window.ARK !== undefined")
    return page, problems


def test_page_in_chromium_draws_the_trajectory(browser, ark_run, tmp_path):
    view = Path(write_view(ark_run, tmp_path / "view.html")["path"])
    page, problems = open_page(browser, view)
    trajectory = next(read_trajectories(ark_run / "trajectories.jsonl"))
    n_steps = len(trajectory.steps)
    assert page.eval_on_selector("#step", "e => +e.max") == n_steps == 4
    assert page.evaluate("window.ARK.rows") == 2
    final = page.evaluate("window.ARK.counts()")
    assert (final["nodes"], final["edges"]) == expected_counts(trajectory, n_steps) == (6, 1)
    assert page.eval_on_selector("#graph-count", "e => +e.dataset.nodes") == 6
    page.evaluate("window.ARK.setStep(1)")  # after the global search only
    assert tuple(page.evaluate("window.ARK.counts()").values()) == expected_counts(trajectory, 1)
    assert "search_in_graph" in page.inner_text("#step-detail")
    page.evaluate("window.ARK.setStep(2)")
    page.wait_for_timeout(1500)  # let the layout settle for the picture
    shot = tmp_path / "view.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:4] == b"\x89PNG"
    if os.environ.get("ARK_SCREENSHOT_DIR"):  # keep it where a person can look at it
        Path(os.environ["ARK_SCREENSHOT_DIR"]).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(os.environ["ARK_SCREENSHOT_DIR"]) / "view.png")
    # Text from the data is shown as text, never parsed as HTML.
    page.click("#queries li:nth-child(2)")
    assert "<b>[Forrest Gump]</b>" in page.inner_text("#detail h2")
    assert page.query_selector("#detail h2 b") is None
    assert problems == []
    page.close()


def test_baseline_page_in_chromium(browser, bm25_run, tmp_path):
    view = Path(write_view(bm25_run, tmp_path / "view.html")["path"])
    page, problems = open_page(browser, view)
    assert page.query_selector("#no-traj") is not None
    assert page.locator("#detail table tr").count() > 1  # the ranking
    _, rows, _ = load_source(bm25_run)
    positive = sum(v > 0 for r in rows for v in r["m"].values())
    assert page.locator("#queries .badge.hit").count() == positive  # hits green
    assert page.locator("#queries .badge.miss").count() == 4 * len(rows) - positive  # misses red
    assert problems == []
    page.close()


def test_report_links_the_views(ark_run, bm25_run, tmp_path):
    from typer.testing import CliRunner

    from ark.cli import app

    out = tmp_path / "report"
    result = CliRunner().invoke(app, ["report", str(ark_run), str(bm25_run), "--out", str(out)])
    assert result.exit_code == 0, result.output
    md = (out / "report.md").read_text()
    assert f"- [{ark_run}](view-1.html)" in md and f"- [{bm25_run}](view-2.html)" in md
    assert (out / "view-1.html").stat().st_size > 100_000  # the page, with its library


# -- evidence: the selected answer's paths --------------------------------------------------


def test_view_embeds_each_answers_evidence(ark_run, metaqa_index):
    _, _, details = load_source(ark_run)
    gump, zemeckis = node(metaqa_index, "Forrest Gump"), node(metaqa_index, "Robert Zemeckis")
    (path,) = details[0]["evidence"][str(zemeckis)]
    assert path == {
        "agent": 0,
        "anchor": gump,
        "query": "Forrest Gump",
        "step": 1,
        "hops": [[gump, "directed_by", "out", zemeckis, 2]],
    }


def hop_over_set_view(index, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A page of one ark-guided trajectory whose hop over a set reaches a genre from
    several films; returns the page, the genre and the edges of its evidence paths."""
    from _doubles import ScriptedChatModel, tool_call
    from ark.retrieval import Retriever
    from ark.tools import GraphTools
    from ark.trajectory import write_trajectories

    tools = GraphTools(index)
    zemeckis = node(index, "Robert Zemeckis")
    films = [h.index for h in tools.search_in_neighborhood(zemeckis, edge_type="directed_by").hits]
    genres = tools.call(
        "search_in_neighborhood", {"node_index": films[0], "edge_type": "has_genre"}
    )
    genre = genres.hits[0].index
    plan = [
        tool_call("search_in_graph", query="Robert Zemeckis"),
        tool_call("search_in_neighborhood", node_index=zemeckis, edge_type="directed_by"),
        tool_call("search_in_neighborhood", node_index=films, edge_type="has_genre"),
        tool_call("add_to_answer", node_indices=[genre]),
        tool_call("finish"),
    ]
    result = Retriever(index, ScriptedChatModel(plan), strategy="ark-guided", n_agents=1).retrieve(
        "Which genres do the films directed by Robert Zemeckis belong to?"
    )
    source = write_trajectories(tmp_path / "t.jsonl", result.trajectories)
    edges = {
        f"{a}>{b}:{h.relation}"
        for p in result.why(genre).paths
        for h in p.hops
        for a, b in [(h.neighbor, h.center) if h.direction == "in" else (h.center, h.neighbor)]
    }
    view = Path(write_view(source, tmp_path / "v.html", index_dir=index.path)["path"])
    return view, genre, edges


def test_page_highlights_the_evidence_of_a_selected_answer(browser, metaqa_index, tmp_path):
    # Playwright's loop runs in this thread: the retriever runs its own in another.
    with ThreadPoolExecutor(1) as pool:
        view, genre, edges = pool.submit(hop_over_set_view, metaqa_index, tmp_path).result()
    assert len({e.split(">")[0] for e in edges if "has_genre" in e}) > 1  # several films
    page, problems = open_page(browser, view)
    assert page.evaluate("window.ARK.highlighted()")["edges"] == []
    page.click(f'#detail tr[data-node="{genre}"]')  # the answer in the ranking
    shown = page.evaluate("window.ARK.highlighted()")
    assert set(shown["edges"]) == edges  # drawn, and each hop of each path highlighted
    assert genre in shown["nodes"]
    text = page.inner_text("#evidence")
    assert "<-directed_by-" in text and "-has_genre->" in text and "Robert Zemeckis" in text
    page.evaluate("window.ARK.setStep(2)")  # before the hop over the set: those edges hidden
    assert all("has_genre" not in e for e in page.evaluate("window.ARK.highlighted()")["edges"])
    assert problems == []
    page.close()


def test_page_of_a_run_scored_by_answers_alone(browser, tmp_path):
    # A docqa run with no supporting passages has EM and F1 and no rank measure: the
    # page shows those and draws without an error (it read hit@1 unconditionally).
    pytest.importorskip("ark.answer")
    from _documents_fixture import build_document_index, write_json
    from ark.eval import evaluate
    from ark.testing import ScriptedChatModel, json_reply

    index = build_document_index(tmp_path / "docs.idx")
    questions = write_json(
        tmp_path / "qa.json",
        [{"id": "a", "question": "In which county is Bellhaven?", "answer": "Tarsk County"}],
    )
    reply = json_reply({"answerable": True, "answer": "Tarsk County", "citations": [1]})
    with ThreadPoolExecutor(1) as pool:  # playwright's loop runs in this thread
        pool.submit(
            evaluate, f"docqa:{questions}", index, tmp_path / "run", method="bm25",
            answer=True, answer_writer="one", llm=ScriptedChatModel(lambda messages: reply),
        ).result()  # fmt: skip
    _, rows, _ = load_source(tmp_path / "run")
    assert rows[0]["m"] == {"em": 1.0, "f1": 1.0}
    view = Path(write_view(tmp_path / "run", tmp_path / "view.html")["path"])
    page, problems = open_page(browser, view)
    assert page.locator("#queries .badge.hit").all_inner_texts() == ["em 100", "f1 100"]
    assert "em 100.0 · f1 100.0" in page.inner_text("body")
    answer = page.inner_text("#answer")  # the answer in words and its checked citation
    assert "Tarsk County" in answer and "cites [1]" in answer
    assert problems == []
    page.close()


def test_the_viewer_does_not_write_through_a_planted_temporary_link(ark_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(ark_run, run)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (run / "view.html.tmp").symlink_to(victim)
    write_view(run)
    assert victim.read_text() == "keep me" and (run / "view.html").stat().st_size > 1000
