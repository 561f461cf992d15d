"""Where a query's time went: each step's model-call profile, summed per trajectory,
per query and per run.

Why: to halve an offline answer's time one must know which phase to cut — prompt
evaluation (tokens evaluated vs reused from the KV cache), decoding, the tools. Read
off trajectories (a step's ``profile``, :class:`ark.llm.CallProfile`; its tool calls'
``duration_s``), the one record of what an agent did. The model's seconds always add
up: ``prompt_s + decode_s + state_s + unsplit_s == llm_s``, where ``unsplit_s`` is
what no backend split (a server's wall time, response-cache lookups, older records).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ark.trajectory import Trajectory

__all__ = [
    "SECONDS",
    "TOKENS",
    "profile_line",
    "query_profile",
    "run_profile",
    "trajectory_profile",
]

TOKENS = (
    "prompt_tokens",
    "evaluated_tokens",
    "reused_tokens",
    "generated_tokens",
    "forced_tokens",
    "draft_tokens",
    "accepted_tokens",
    "predicted_tokens",
)
#: ``llm_s`` is the model calls' wall time, split into the four before it.
SECONDS = ("prompt_s", "decode_s", "state_s", "unsplit_s", "llm_s", "tool_s")
_COUNTS = ("steps", "profiled_steps", *TOKENS)


def _zero() -> dict[str, Any]:
    return {**{k: 0 for k in _COUNTS}, **{k: 0.0 for k in SECONDS}}


def trajectory_profile(t: Trajectory) -> dict[str, Any]:
    """One trajectory's steps summed: tokens by fate, seconds by phase."""
    out = _zero()
    for step in t.steps:
        out["steps"] += 1
        out["llm_s"] += step.llm_latency_s
        out["tool_s"] += sum(c.duration_s for c in step.tool_calls)
        p = step.profile
        if not p:
            continue
        out["profiled_steps"] += 1
        for k in TOKENS:
            out[k] += int(p.get(k) or 0)
        for k in ("prompt_s", "decode_s", "state_s"):
            out[k] += float(p.get(k) or 0.0)
    return _rounded(out)


def query_profile(trajectories: Sequence[Trajectory]) -> dict[str, Any]:
    """The sum over one query's trajectories (its agents); zeros for a query without
    any (a baseline made no model call)."""
    return _sum(trajectory_profile(t) for t in trajectories)


def _sum(profiles: Iterable[dict[str, Any]]) -> dict[str, Any]:
    out = _zero()
    for p in profiles:
        for k in _COUNTS:
            out[k] += int(p.get(k) or 0)
        for k in SECONDS:
            out[k] += float(p.get(k) or 0.0)
    return _rounded(out)


def _rounded(out: dict[str, Any]) -> dict[str, Any]:
    split = out["prompt_s"] + out["decode_s"] + out["state_s"]
    out["unsplit_s"] = max(0.0, out["llm_s"] - split)
    for k in SECONDS:
        out[k] = round(out[k], 6)
    return out


def run_profile(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A run's totals over its records' ``profile`` and means per step and per query;
    records written before profiles count as no step. ``reused_share``: the part of
    the prompt tokens sent that the KV cache already held."""
    total = _sum(r.get("profile") or {} for r in records)
    steps = max(total["steps"], 1)
    n = max(len(records), 1)
    sent = total["prompt_tokens"]
    return {
        **total,
        "per_step": {k: round(total[k] / steps, 4) for k in (*TOKENS, *SECONDS)},
        "per_query": {k: round(total[k] / n, 4) for k in ("steps", *TOKENS, *SECONDS)},
        "reused_share": round(total["reused_tokens"] / sent, 4) if sent else 0.0,
    }


def profile_line(p: dict[str, Any]) -> str:
    """E.g. ``12.3 s evaluating the prompt (1,234 tokens; 5,678 reused), 4.5 s
    decoding (123 tokens), 0.2 s with saved state, 0.0231 s in the tools``."""
    state = f", {p['state_s']:.2f} s with saved KV state" if p["state_s"] else ""
    unsplit = f", {p['unsplit_s']:.2f} s unsplit" if p["unsplit_s"] >= 0.005 else ""
    drafts = p.get("draft_tokens") or 0
    forced = p.get("forced_tokens") or 0
    kept = f", {p.get('accepted_tokens') or 0:,} of {drafts:,} drafted kept" if drafts else ""
    predicted = p.get("predicted_tokens") or 0
    kept += f" ({forced:,} fixed by the call's format)" if forced else ""
    kept += f" ({predicted:,} as predicted)" if predicted else ""
    return (
        f"{p['prompt_s']:.1f} s evaluating the prompt ({p['evaluated_tokens']:,} tokens; "
        f"{p['reused_tokens']:,} reused), {p['decode_s']:.1f} s decoding "
        f"({p['generated_tokens']:,} tokens{kept}){state}{unsplit}, "
        f"{p['tool_s']:.3g} s in the tools"
    )
