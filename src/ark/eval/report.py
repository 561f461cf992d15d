"""``ark report``: compare runs and read the paper's analyses off saved trajectories.

Everything here is derived from a run's records and trajectories; nothing re-runs.

* comparison table (Hit@1, Hit@5, R@20, MRR, seconds per query) — Markdown and CSV
* share of global vs neighborhood calls per run (paper figure 3)
* trajectories using only global search vs both tools (table 9)
* trajectories re-anchoring with a global search after the first step (table 10)
* neighborhood calls in successful (Hit@5) vs failed queries' trajectories (figure 5)
* a quality/latency grid over ``max_steps`` x ``agents`` when the runs form a sweep
  (figure 2)
* cost per query (model calls, tokens, USD, seconds) and quality against it
* time per step by phase (prompt evaluation, decoding, tools) and prompt tokens
  evaluated vs reused from the KV cache
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from ark._safe import clean_text
from ark.errors import ArkError
from ark.eval._cost_report import write_cost_report
from ark.eval._profile_report import write_profile_report
from ark.eval._runstore import TRAJECTORIES_FILE, read_records
from ark.eval._tables import markdown_table, write_csv
from ark.eval.metrics import ALL_MEASURES, MEASURES
from ark.trajectory import Trajectory, read_trajectories


class Run:
    def __init__(self, path: Path) -> None:
        self.path = path
        summary = path / "summary.json"
        if not summary.exists():
            raise ArkError(f"{path} has no summary.json; finish or resume the run first")
        self.summary = json.loads(summary.read_text(encoding="utf-8"))
        self.config: dict[str, Any] = self.summary["config"]
        #: What was skipped while reading (damaged lines), for the report's notes.
        self.notes: list[str] = []
        skipped: list[int] = []
        self.records = read_records(path, skipped)
        if skipped:
            self.notes.append(f"{path / 'results.jsonl'}: skipped damaged line(s) {skipped}")
        traj_file = path / TRAJECTORIES_FILE
        self.trajectories: list[Trajectory] = []
        if traj_file.exists():
            bad: list[int] = []
            self.trajectories = list(read_trajectories(traj_file, skipped=bad))
            if bad:
                self.notes.append(f"{traj_file}: skipped damaged line(s) {bad}")

    @property
    def name(self) -> str:
        """The run directory as given: what tells two runs of one method apart."""
        return str(self.path)

    @property
    def method(self) -> str:
        """The method and the settings that define it, e.g. ``ark n=3 T=20 no-filter``."""
        c = self.config
        if c.get("method") == "dense":
            return f"dense {c.get('model')}"
        if c.get("method") != "ark":
            return str(c.get("method"))
        tools = c.get("tools", {})
        ablation = [
            name
            for name, on in (
                ("no-neighbors", not tools.get("neighbors", True)),
                ("no-query", not tools.get("neighbor_query", True)),
                ("no-filter", not tools.get("neighbor_filters", True)),
            )
            if on
        ]
        parts = [f"ark n={c.get('agents')} T={c.get('max_steps')}"]
        if c.get("fusion", "vote") != "vote":
            parts.append(str(c.get("fusion")))
        return " ".join(parts + ablation)


def tool_use(run: Run) -> dict[str, float]:
    """Call shares and trajectory patterns of one run (percentages)."""
    calls: Counter[str] = Counter()
    only_global = both = reanchor = 0
    for t in run.trajectories:
        names = t.tool_names()
        calls.update(n for n in names if n in ("search_in_graph", "search_in_neighborhood"))
        uses_neighbors = "search_in_neighborhood" in names
        uses_global = "search_in_graph" in names
        if uses_global and uses_neighbors:
            both += 1
        elif uses_global:
            only_global += 1
        if any(c.name == "search_in_graph" for s in t.steps[1:] for c in s.tool_calls):
            reanchor += 1
    n_traj = max(len(run.trajectories), 1)
    split = neighborhood_calls_by_outcome(run)
    n_calls = max(sum(calls.values()), 1)
    return {
        "trajectories": len(run.trajectories),
        "global_call_share": 100 * calls["search_in_graph"] / n_calls,
        "neighborhood_call_share": 100 * calls["search_in_neighborhood"] / n_calls,
        "only_global": 100 * only_global / n_traj,
        "global_and_neighborhood": 100 * both / n_traj,
        "reanchor_after_step_1": 100 * reanchor / n_traj,
        "mean_steps": sum(len(t.steps) for t in run.trajectories) / n_traj,
        # Figure 5 as numbers: do successful trajectories explore more or less?
        "neighborhood_calls_hit5": _mean(split["success"]),
        "neighborhood_calls_miss": _mean(split["failure"]),
    }


def neighborhood_calls_by_outcome(run: Run) -> dict[str, list[int]]:
    """Neighborhood calls per trajectory, split by whether its query hit at 5.

    Queries with no gold answer in the graph are neither a success nor a failure and
    are left out; a failed query counts as a miss, as in the metrics.
    """
    hit = {
        r["query_id"]: bool(r["metrics"]["hit@5"] > 0)
        for r in run.records
        if r.get("metrics") is not None
        and r.get("status") != "no_gold"
        and "hit@5" in r["metrics"]  # a question scored by its answer alone has no rank
    }
    out: dict[str, list[int]] = {"success": [], "failure": []}
    for t in run.trajectories:
        if (t.question_id or "") not in hit:
            continue
        n = sum(1 for name in t.tool_names() if name == "search_in_neighborhood")
        out["success" if hit[t.question_id or ""] else "failure"].append(n)
    return out


def _mean(values: list[int]) -> float | None:
    return sum(values) / len(values) if values else None


def has_matplotlib() -> bool:
    """Whether plots can be drawn (matplotlib is the optional ``[report]`` extra)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def write_report(run_dirs: list[Path], out: Path, *, plots: bool | None = None) -> str:
    """Tables (Markdown, CSV) and, when matplotlib is installed, plots; returns the
    Markdown. ``plots=None``: draw them if matplotlib can be imported. A report
    that cannot be written (a read-only run directory) is an error saying so."""
    try:
        return _write_report(run_dirs, out, plots)
    except PermissionError as exc:
        raise ArkError(
            f"cannot write the report to {out}: {exc.filename or out} is read-only "
            f"({exc.strerror}); pass --out DIR to write it elsewhere"
        ) from None


def _write_report(run_dirs: list[Path], out: Path, plots: bool | None) -> str:
    plotting = has_matplotlib() if plots is None else plots
    runs = [Run(Path(p)) for p in run_dirs]
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    # passage recall and answer scores, when a run over documents has them ('–' elsewhere)
    found = {k for r in runs for k in r.summary["metrics"]}
    extra = [k for k in ALL_MEASURES if k not in MEASURES and k in found]
    for run in runs:
        m = run.summary["metrics"]
        rows.append(
            {
                "run": run.name,
                "method": run.method,
                "dataset": run.config.get("dataset"),
                "n": run.summary["scored"],
                **{k: round(m[k], 2) if k in m else "–" for k in MEASURES},
                **{k: round(m[k], 2) if k in m else "–" for k in extra},
                "s/query": _seconds(run.summary["wall_s_per_query"]["mean"]),
                "failed": run.summary["failed"],
                "path": str(run.path),
            }
        )
    usage = [{"run": r.name, "method": r.method, **tool_use(r)} for r in runs if r.trajectories]
    text = "## Comparison\n\n" + markdown_table(rows)
    write_csv(out / "comparison.csv", rows)
    if usage:
        shown = [
            {k: round(v, 1) if isinstance(v, float) else v for k, v in u.items()} for u in usage
        ]
        text += "\n## Tool use (figure 3, tables 9 and 10; figure 5 as mean calls)\n\n"
        text += markdown_table(shown)
        write_csv(out / "tool_use.csv", usage)
        if plotting:
            _plots(runs, usage, out)
    text += write_cost_report(runs, out, plotting=plotting)
    text += write_profile_report(runs, out)
    grid = _sweep(runs)
    if grid:
        text += "\n## Budget sweep (figure 2)\n\n" + markdown_table(grid)
        write_csv(out / "sweep.csv", grid)
        if plotting:
            _sweep_plot(grid, out / "sweep.png")
    notes = [n for r in runs for n in r.notes]
    if not plotting:
        notes.append(
            "plots skipped: matplotlib is not installed (pip install 'ark-retriever[report]'); "
            "the tables above and the CSV files are complete"
        )
    if notes:
        text += "\n## Notes\n\n" + "".join(f"- {n}\n" for n in notes)
    (out / "report.md").write_text(clean_text(text), encoding="utf-8")
    return text


def add_view_links(out: Path, views: list[tuple[str, Path]]) -> str:
    """Append links to the runs' HTML views (``ark view``) to ``out/report.md``."""
    text = "\n## Trajectory views\n\n" + "".join(
        f"- [{run}]({path.relative_to(out) if path.is_relative_to(out) else path})\n"
        for run, path in views
    )
    with (out / "report.md").open("a", encoding="utf-8") as f:
        f.write(text)
    return text


def _sweep(runs: list[Run]) -> list[dict[str, Any]]:
    ark_runs = [r for r in runs if r.config.get("method") == "ark"]
    cells = {(r.config.get("max_steps"), r.config.get("agents")) for r in ark_runs}
    if len(cells) < 2:
        return []
    return [
        {
            "dataset": r.config.get("dataset"),
            "max_steps": r.config.get("max_steps"),
            "agents": r.config.get("agents"),
            "hit@1": round(r.summary["metrics"].get("hit@1", 0.0), 2),
            "recall@20": round(r.summary["metrics"].get("recall@20", 0.0), 2),
            "s/query": _seconds(r.summary["wall_s_per_query"]["mean"]),
        }
        for r in sorted(ark_runs, key=lambda r: (r.config.get("max_steps"), r.config.get("agents")))
    ]


def _plots(runs: list[Run], usage: list[dict[str, Any]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    with_traj = [r for r in runs if r.trajectories]
    fig, ax = plt.subplots(figsize=(6, 1.2 + 0.5 * len(with_traj)))
    labels = [r.name for r in with_traj]
    shares = usage
    g = [s["global_call_share"] for s in shares]
    n = [s["neighborhood_call_share"] for s in shares]
    ax.barh(labels, g, label="global search")
    ax.barh(labels, n, left=g, label="neighborhood")
    ax.set_xlabel("% of retrieval calls")
    ax.set_xlim(0, 100)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    fig.tight_layout()
    fig.savefig(out / "tool_calls.png", dpi=120)
    plt.close(fig)

    fig, axes = plt.subplots(1, len(with_traj), figsize=(4 * len(with_traj), 3), squeeze=False)
    for ax, run in zip(axes[0], with_traj, strict=True):
        split = neighborhood_calls_by_outcome(run)
        top = max([0, *split["success"], *split["failure"]]) + 1
        bins = [b - 0.5 for b in range(top + 1)]  # one bar per whole number of calls
        ax.hist([split["success"], split["failure"]], bins=bins, label=["Hit@5", "miss"])
        ax.set_title(f"{run.name}\n{run.method}", fontsize=9)
        ax.set_xlabel("neighborhood calls per trajectory")
        ax.set_ylabel("trajectories")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend()
    fig.tight_layout()
    fig.savefig(out / "neighborhood_calls_by_outcome.png", dpi=120)
    plt.close(fig)


def _sweep_plot(grid: list[dict[str, Any]], path: Path) -> None:
    """Figure 2: quality and latency against the step budget, one line per agent count
    (and dataset, when the sweep spans several)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (quality, latency) = plt.subplots(1, 2, figsize=(9, 3.5))
    datasets = {row["dataset"] for row in grid}
    lines: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for row in grid:
        lines.setdefault((row["dataset"], row["agents"]), []).append(row)
    for (dataset, agents), rows in sorted(lines.items(), key=lambda kv: str(kv[0])):
        label = f"{agents} agent{'s' if agents != 1 else ''}"
        if len(datasets) > 1:
            label = f"{dataset}, {label}"
        steps = [r["max_steps"] for r in rows]
        quality.plot(steps, [r["hit@1"] for r in rows], marker="o", label=label)
        latency.plot(steps, [r["s/query"] for r in rows], marker="o", label=label)
    quality.set(xlabel="max steps per agent", ylabel="Hit@1 (%)")
    latency.set(xlabel="max steps per agent", ylabel="seconds per query")
    quality.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _seconds(value: float) -> float:
    """Three significant digits: 0.000512, 0.232, 118.8 — enough to compare methods."""
    return float(f"{value:.3g}") if value < 100 else round(value, 1)
