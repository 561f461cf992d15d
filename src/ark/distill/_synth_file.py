"""A synthesis written as a file: all or nothing, and what it holds (``ark distill
synthesize``'s work, callable without the CLI)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ark.distill.synthesize import Paraphraser, SynthConfig, synthesize
from ark.errors import ArkError
from ark.index import Index
from ark.trajectory import Trajectory, write_trajectories

SYNTH_FILE = "trajectories.jsonl"


def write_synthesis(
    index: Index,
    cfg: SynthConfig,
    out: str | Path,
    *,
    paraphrase: Paraphraser | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Synthesize ``cfg.n`` trajectories into ``out/trajectories.jsonl``; returns
    :func:`synthesis_stats` plus the path and seconds taken.

    The file appears whole or not at all (written aside, then renamed), and an
    existing one is refused: a synthesis is a fixed set, never appended to.
    """
    target = Path(out) / SYNTH_FILE
    if target.exists():
        raise ArkError(f"{target} exists; choose another -o (synthesis never appends)")
    started = time.perf_counter()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / "trajectories.partial"
    tmp.unlink(missing_ok=True)
    trajs = list(synthesize(index, cfg, paraphrase=paraphrase, progress=progress))
    write_trajectories(tmp, trajs)
    tmp.replace(target)
    stats = synthesis_stats(trajs)
    stats.update({"path": str(target), "wall_s": round(time.perf_counter() - started, 2)})
    return stats


def synthesis_stats(trajs: Sequence[Trajectory]) -> dict[str, Any]:
    """How many of each kind (``2-hop``, ``2-hop intersection``), steps (p50, max), and
    how many hold a tool call that failed (the oracle's deliberate slips)."""
    kinds = Counter(
        f"{t.extra['synthesis']['hops']}-hop"
        + (" intersection" if t.extra["synthesis"]["kind"] == "intersection" else "")
        for t in trajs
    )
    steps = sorted(len(t.steps) for t in trajs) or [0]
    failed = sum(any(not c.ok for s in t.steps for c in s.tool_calls) for t in trajs)
    return {
        "trajectories": len(trajs),
        "by_kind": dict(sorted(kinds.items())),
        "steps_p50": steps[len(steps) // 2],
        "steps_max": steps[-1],
        "with_bad_call": failed,
    }
