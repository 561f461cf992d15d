"""How large and how quick is ``ark view`` for a 1,000-query run?

Makes a run the way ``ark eval`` does (``run_queries`` into a run directory, scored
against MetaQA's gold answers) whose trajectories are synthetic: three agents per
question walk the real MetaQA index through the real tool session (search the
question's entity, explore its neighborhood, explore one of the neighbors, add three
nodes, finish), so observations, centers and relations are what a model would have
seen. Then writes the view and, with ``--browser``, opens it in headless Chromium and
times the first paint and the selection of a query.

    python benchmarks/bench_view.py --queries 1000 [--browser]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import sys
import time
import uuid
from pathlib import Path

from ark.datasets import load_metaqa, sample
from ark.eval import MethodOutput, RunStore, run_queries
from ark.fusion import fuse_vote
from ark.index import Index, build_index, open_index
from ark.serve.viewer import load_source, write_view
from ark.session import ToolSession
from ark.trajectory import StepRecord, ToolCallRecord, Trajectory

ROOT = Path(__file__).resolve().parents[1]


class SyntheticAgents:
    """A benchmark double for a model: scripted walks over the real tools."""

    name = "synthetic"

    def __init__(self, index: Index, agents: int = 3) -> None:
        self.index = index
        self.agents = agents

    def _walk(self, question: str, question_id: str, agent: int) -> Trajectory:
        session = ToolSession(self.index)
        traj = Trajectory(
            question=question,
            model="synthetic-walk",
            config={"agent": agent, "strategy": "synthetic"},
            id=uuid.uuid4().hex,
            question_id=question_id,
            synthetic=True,
        )
        entity = (re.findall(r"\[(.+?)\]", question) or [question])[0]
        plan: list[tuple[str, dict]] = [("search_in_graph", {"query": entity})]
        for i in range(5):
            name, args = plan[i] if i < len(plan) else ("finish", {})
            outcome = session.call(name, args)
            traj.steps.append(
                StepRecord(
                    index=i, llm_latency_s=0.0, prompt_tokens=0, completion_tokens=0, content=""
                )
            )
            traj.steps[-1].tool_calls.append(
                ToolCallRecord(
                    id=f"call_{i}",
                    name=name,
                    arguments=args,
                    raw_arguments="",
                    observation=outcome.observation,
                    ok=outcome.ok,
                    error_code=outcome.code,
                    nodes=outcome.nodes,
                    duration_s=outcome.duration_s,
                    center=outcome.center,
                    relations=outcome.relations(),
                )
            )
            nodes = outcome.nodes
            if name == "search_in_graph" and nodes:
                plan.append(("search_in_neighborhood", {"node_index": nodes[0]}))
            elif name == "search_in_neighborhood" and len(plan) == 2 and nodes:
                plan.append(("search_in_neighborhood", {"node_index": nodes[agent % len(nodes)]}))
            elif name == "search_in_neighborhood" and nodes:
                plan.append(("add_to_answer", {"node_indices": nodes[:3]}))
            if session.finished:
                break
        traj.stop_reason = "finish" if session.finished else "max_steps"
        traj.answer = list(session.answer)
        return traj

    async def __call__(self, question_id: str, question: str) -> MethodOutput:
        trajectories = [self._walk(question, question_id, a) for a in range(self.agents)]
        ranking = [n for n, _ in fuse_vote([t.answer for t in trajectories])]
        return MethodOutput(ranking=ranking, trajectories=trajectories)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--metaqa", type=Path, default=ROOT.parent / "shared/data/metaqa")
    parser.add_argument("--work", type=Path, default=ROOT / ".bench" / "view")
    parser.add_argument("--browser", action="store_true", help="time it in headless Chromium")
    args = parser.parse_args()

    idx_dir = args.work / "metaqa.idx"
    try:
        index = open_index(idx_dir)
    except Exception:
        index = build_index(args.metaqa / "kb.txt", idx_dir)
    queries = sample(load_metaqa(args.metaqa, 2, split="dev", index=index), args.queries, 0)
    run = args.work / f"run-{args.queries}"
    shutil.rmtree(run, ignore_errors=True)
    config = {"dataset": "metaqa:2-hop", "index": str(idx_dir.resolve()), "method": "synthetic",
              "agents": args.agents}  # fmt: skip
    t0 = time.perf_counter()
    summary = asyncio.run(run_queries(queries, SyntheticAgents(index, args.agents),
                                      RunStore(run), config))  # fmt: skip
    t_run = time.perf_counter() - t0
    t0 = time.perf_counter()
    info = write_view(run)
    t_view = time.perf_counter() - t0
    _, _, details = load_source(run)
    calls = sum(len(s["calls"]) for d in details for t in d["trajectories"] for s in t["steps"])
    jsonl_mb = (run / "trajectories.jsonl").stat().st_size / 1e6
    rows = [
        ("queries", f"{info['queries']:,}"),
        ("trajectories / tool calls", f"{info['trajectories']:,} / {calls:,}"),
        ("run directory: trajectories.jsonl", f"{jsonl_mb:.1f} MB"),
        ("view.html", f"{info['bytes'] / 1e6:.2f} MB (vis-network: 0.65 MB)"),
        ("make the run / write the view", f"{t_run:.1f} s / {t_view:.1f} s"),
        ("Hit@1 of the synthetic walks", f"{summary['metrics']['hit@1']:.1f}"),
    ]
    if args.browser:
        rows += _browser_times(Path(info["path"]))
    print("| measure | value |\n|---|---|")
    for k, v in rows:
        print(f"| {k} | {v} |")
    print(f"\nview: {info['path']}", file=sys.stderr)


def _browser_times(page_path: Path) -> list[tuple[str, str]]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=shutil.which("chromium") or "/usr/bin/chromium",
            args=["--no-sandbox", "--disable-gpu", "--no-first-run"],
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        t0 = time.perf_counter()
        page.goto(page_path.resolve().as_uri())
        page.wait_for_function("window.ARK !== undefined")
        t_load = time.perf_counter() - t0
        t0 = time.perf_counter()
        page.evaluate("window.ARK.select(window.ARK.rows - 1)")
        t_select = time.perf_counter() - t0
        heap = page.evaluate("performance.memory ? performance.memory.usedJSHeapSize : 0")
        browser.close()
    return [
        ("Chromium: load to first query drawn", f"{t_load:.2f} s"),
        ("Chromium: select the last query", f"{t_select * 1000:.0f} ms"),
        ("Chromium: JS heap after load", f"{heap / 1e6:.0f} MB"),
    ]


if __name__ == "__main__":
    main()
