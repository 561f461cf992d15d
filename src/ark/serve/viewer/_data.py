"""What the viewer embeds: a run (or a file of trajectories) reduced to structure.

The page reads structure, never observation text: nodes returned by each call, a
neighborhood call's center and the relations linking each hit to it (recorded by the
tool session), the answer list, the fused ranking and the gold answers. Observation
text is carried only to be shown, cut to :data:`MAX_OBSERVATION`. Names and types come
from the index the run names in ``config.json`` (or ``--index``); without one, nodes
are shown by index.

The list of queries is one small JSON block read at load; each query's details — its
trajectories and the names of the nodes they touch — are a separate block parsed only
when the query is selected, so a 1,000-query run opens at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ark._coerce import as_int
from ark.errors import ArkError
from ark.eval import read_records
from ark.eval.metrics import ANSWER_MEASURES, MEASURES
from ark.fusion import fuse_vote
from ark.index import Index, open_index
from ark.retrieval import explain
from ark.trajectory import Trajectory, read_trajectories

#: Characters of an observation shown per call (the full text is in the trajectory file).
MAX_OBSERVATION = 1500
#: Ranked nodes shown per query.
MAX_RANKING = 20
#: Evidence paths embedded per ranked node (the CLI's --json lists them all).
MAX_PATHS = 12

RESULTS_FILE = "results.jsonl"
TRAJECTORIES_FILE = "trajectories.jsonl"


def load_source(
    source: Path, index_dir: Path | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """``(header, query rows, per-query details)`` for a run directory or a
    trajectories file."""
    source = Path(source)
    if source.is_dir():
        return _load_run(source, index_dir)
    if source.is_file():
        trajectories = list(read_trajectories(source))
        index = _open(index_dir) if index_dir else None
        header = {"title": source.name, "source": str(source), "kind": "trajectories"}
        groups: dict[str, list[Trajectory]] = {}
        for t in trajectories:
            groups.setdefault(t.question_id or t.question, []).append(t)
        records = [
            {
                "query_id": qid,
                "query": ts[0].question,
                "status": "ok",
                "ranking": [n for n, _ in fuse_vote([t.answer for t in ts], MAX_RANKING)],
                "gold": [],
                "metrics": None,
                "wall_s": max(t.wall_s for t in ts),
                "prompt_tokens": sum(t.usage.get("prompt_tokens", 0) for t in ts),
                "completion_tokens": sum(t.usage.get("completion_tokens", 0) for t in ts),
            }
            for qid, ts in groups.items()
        ]
        rows, details = _assemble(records, groups, index)
        header.update(_index_info(index, None))
        return header, rows, details
    raise ArkError(f"{source}: no such run directory or trajectories file")


def _load_run(
    run: Path, index_dir: Path | None
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    if not (run / RESULTS_FILE).exists():
        if (run / TRAJECTORIES_FILE).exists():
            return load_source(run / TRAJECTORIES_FILE, index_dir)
        raise ArkError(f"{run} is not a run directory (no {RESULTS_FILE} or {TRAJECTORIES_FILE})")
    config = _read_json(run / "config.json") or {}
    summary = _read_json(run / "summary.json")
    records = read_records(run)
    by_id: dict[str, Trajectory] = {}
    if (run / TRAJECTORIES_FILE).exists():
        by_id = {t.id: t for t in read_trajectories(run / TRAJECTORIES_FILE)}
    groups = {
        r["query_id"]: [by_id[i] for i in r.get("trajectory_ids", []) if i in by_id]
        for r in records
    }
    named = config.get("index")
    index = _open(index_dir) if index_dir else _open_quietly(named)
    header = {
        "title": f"{config.get('method', 'run')} on {config.get('dataset', '?')}",
        "source": str(run),
        "kind": "run",
        "config": {k: v for k, v in config.items() if k != "base_url"},
        "metrics": (summary or {}).get("metrics") or None,
        "finished": summary is not None,
    }
    header.update(_index_info(index, named))
    remap, note = _staleness(index, config)
    if note:
        header["index_note"] = note
    if remap is False:  # the indices cannot be mapped: no names rather than wrong ones
        header.update({"names": False, "names_note": note})
        index = None
    rows, details = _assemble(records, groups, index, remap if remap is not False else None)
    return header, rows, details


def _staleness(index: Index | None, config: dict[str, Any]) -> tuple[Any, str | None]:
    """Whether the run's node indices still name the index's nodes. A run started
    before the index's last build: if that build was a ``compact`` of the index the
    run used, ``remap.npy`` maps each recorded index to its node now (returned); if
    it was compacted more than once since, or rebuilt, the indices cannot be mapped
    (``False``: names are left out rather than shown wrong). Returns ``(remap | None
    | False, note)``."""
    started, created = config.get("started"), (index.meta.get("created") if index else None)
    if index is None or not isinstance(started, str) or not isinstance(created, str):
        return None, None
    if started >= created:  # ISO 8601 UTC timestamps compare as strings
        return None, None
    compacted = index.meta.get("compacted")
    base_created = compacted.get("base_created") if isinstance(compacted, dict) else None
    if isinstance(base_created, str) and base_created <= started:
        from ark.index import read_remap

        remap = read_remap(index.path)
        if remap is not None:
            return remap, (
                f"the index was compacted at {created}, after this run: its node indices "
                "are mapped through remap.npy to the nodes they named"
            )
    what = "compacted" if compacted else "rebuilt"
    return False, (
        f"the index was {what} at {created}, after this run (started {started}); its "
        "node indices may name other nodes now, so names are not shown"
    )


def _assemble(
    records: Sequence[dict[str, Any]],
    groups: dict[str, list[Trajectory]],
    index: Index | None,
    remap: Any = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows, details = [], []
    for r in records:
        trajectories = groups.get(r["query_id"], [])
        ranking = [int(n) for n in r.get("ranking", [])[:MAX_RANKING]]
        gold = [int(n) for n in r.get("gold", [])]
        metrics = r.get("metrics")
        rows.append(
            {
                "id": r["query_id"],
                "q": r["query"],
                "type": r.get("qtype"),
                "status": r.get("status", "ok"),
                "m": {
                    k: round(float(metrics[k]), 4)
                    for k in (*MEASURES, *ANSWER_MEASURES)
                    if k in metrics
                }
                if metrics
                else None,
                "n": len(trajectories),
            }
        )
        compact = [_trajectory(t) for t in trajectories]
        evidence = _evidence(trajectories, ranking)
        touched = set(ranking) | set(gold)
        answer = _answer(r.get("answer"))
        if answer is not None:
            touched.update(answer["citations"])
            touched.update(answer["recited_from"])
        for t in compact:
            touched.update(t["answer"])
            for step in t["steps"]:
                for c in step["calls"]:
                    touched.update(c["nodes"])
                    touched.update(c["centers"] or ())
                    if c["center"] is not None:
                        touched.add(c["center"])
        for paths in evidence.values():
            for p in paths:
                touched.update(n for h in p["hops"] for n in (h[0], h[3]) if n is not None)
                if p["anchor"] is not None:
                    touched.add(p["anchor"])
        details.append(
            {
                "ranking": ranking,
                "gold": gold,
                "missing": r.get("missing_answers", []),
                "error": r.get("error"),
                "wall_s": r.get("wall_s"),
                "tokens": [r.get("prompt_tokens", 0), r.get("completion_tokens", 0)],
                "trajectories": compact,
                "evidence": evidence,
                "answer": answer,
                "names": _names(index, touched, remap),
            }
        )
    return rows, details


def _answer(raw: Any) -> dict[str, Any] | None:
    """A result's answer in words, as the page shows it: the text, or why there is
    none, and its citations checked against the text (the model's own, where they
    were replaced). None for a run that did not answer."""
    if not isinstance(raw, dict):
        return None

    def nodes(key: str) -> list[int]:
        found = (as_int(n) for n in raw.get(key) or [])
        return [n for n in found if n is not None]

    return {
        "text": str(raw.get("text") or "")[:MAX_OBSERVATION],
        "answerable": bool(raw.get("answerable")),
        "status": str(raw.get("status") or ""),
        "reason": str(raw.get("reason") or ""),
        "citations": nodes("citations"),
        "recited_from": nodes("recited_from"),
    }


def _trajectory(t: Trajectory) -> dict[str, Any]:
    steps = []
    for s in t.steps:
        calls = []
        for c in s.tool_calls:
            center = c.center
            if center is None and c.name == "search_in_neighborhood" and c.ok:
                # Written before centers were recorded: the argument names it.
                center = as_int((c.arguments or {}).get("node_index"))
            obs = c.observation
            if len(obs) > MAX_OBSERVATION:
                obs = obs[:MAX_OBSERVATION] + f"\n… ({len(c.observation) - MAX_OBSERVATION} more)"
            calls.append(
                {
                    "tool": c.name,
                    "args": c.arguments if c.arguments is not None else c.raw_arguments,
                    "ok": c.ok,
                    "code": c.error_code,
                    "obs": obs,
                    "dur": round(c.duration_s, 4),
                    "nodes": [int(n) for n in c.nodes],
                    "center": center,
                    "centers": c.centers,  # a hop over a set: its explored nodes
                    # per node: [[relation, direction(, center after a hop over a set)],
                    # ...]; None when not recorded
                    "rels": (
                        [[_rel(r) for r in rs] for rs in c.relations]
                        if c.relations is not None
                        else None
                    ),
                }
            )
        steps.append(
            {
                "i": s.index,
                "lat": round(s.llm_latency_s, 3),
                "tok": [s.prompt_tokens, s.completion_tokens],
                "text": (s.content or "")[:MAX_OBSERVATION],
                "note": s.note,
                "module": s.module,
                "by": s.by,  # "plan": the reading's plan ran it, no model call
                # the tools of a reply not run (a repeat), the model asked again
                "redrawn": (
                    [str(c.get("name")) for c in s.redrawn.get("tool_calls", [])]
                    if s.redrawn
                    else None
                ),
                "calls": calls,
            }
        )
    return {
        "id": t.id,
        "agent": t.config.get("agent"),
        "model": t.model,
        "strategy": t.config.get("strategy"),
        "stop": t.stop_reason,
        "error": t.error,
        "wall_s": t.wall_s,
        "usage": t.usage,
        "synthetic": t.synthetic,
        "answer": [int(n) for n in t.answer],
        "steps": steps,
    }


def _rel(r: dict[str, Any]) -> list[Any]:
    return [r["type"], r["direction"], *([r["center"]] if "center" in r else [])]


def _evidence(trajectories: Sequence[Trajectory], ranking: list[int]) -> dict[str, list[Any]]:
    """Per ranked node, its evidence paths (:func:`ark.retrieval.explain`), compact: each
    ``{"agent", "anchor", "query", "step", "hops": [[center, relation, direction,
    neighbor, step], ...]}``; the page highlights them when the node is selected."""
    voting = [t for t in trajectories if t.stop_reason != "error"]
    votes = [(n, sum(n in t.answer for t in voting)) for n in ranking]
    out: dict[str, list[Any]] = {}
    for ev in explain(trajectories, votes):
        out[str(ev.node)] = [
            {
                "agent": p.agent,
                "anchor": p.anchor,
                "query": p.query,
                "step": p.step,
                "hops": [[h.center, h.relation, h.direction, h.neighbor, h.step] for h in p.hops],
            }
            for p in ev.paths[:MAX_PATHS]
        ]
    return out


def _names(index: Index | None, nodes: Iterable[int], remap: Any = None) -> dict[str, list[str]]:
    """Name and type of each recorded node index; with ``remap`` (a compact since
    the run), of the node that index names now (a removed node has none)."""
    if index is None:
        return {}
    g = index.graph
    n = g.n_nodes
    out = {}
    for v in sorted(nodes):
        now = v
        if remap is not None:
            now = int(remap[v]) if 0 <= v < len(remap) else -1
        if 0 <= now < n:
            out[str(v)] = [g.name(now), g.type_name(now)]
    return out


def _index_info(index: Index | None, named: str | None) -> dict[str, Any]:
    if index is not None:
        return {"index": str(index.path), "names": True}
    note = f"the index {named} could not be opened" if named else "no index given (--index)"
    return {"index": named, "names": False, "names_note": note}


def _open(path: Path) -> Index:
    return open_index(path)


def _open_quietly(path: str | None) -> Index | None:
    """The run's index when it still exists; names are a convenience, not a need."""
    if not path:
        return None
    try:
        return open_index(path)
    except (ArkError, OSError):
        return None


def _read_json(path: Path) -> Any:
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ArkError(f"{path}: not valid JSON ({exc})") from exc
