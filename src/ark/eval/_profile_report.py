"""The time side of ``ark report``: per run, where a step's seconds and prompt tokens
went (prompt evaluation, decoding, saved KV state, tools; tokens evaluated vs reused
from the KV cache). Read off the records' ``profile``; runs made before profiles
have none and are left out of the section."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ark.eval._tables import markdown_table, write_csv
from ark.profile import run_profile


def profile_rows(runs: list[Any]) -> list[dict[str, Any]]:
    """One row per run with profiled model calls: means per step, and steps per query."""
    rows = []
    for run in runs:
        prof = run_profile(run.records)
        if not prof["profiled_steps"]:
            continue
        per = prof["per_step"]
        rows.append(
            {
                "run": run.name,
                "method": run.method,
                "steps/q": round(prof["per_query"]["steps"], 2),
                "prompt_s/step": round(per["prompt_s"], 3),
                "decode_s/step": round(per["decode_s"], 3),
                "state_s/step": round(per["state_s"], 3),
                "unsplit_s/step": round(per["unsplit_s"], 3),
                "tool_s/step": round(per["tool_s"], 4),
                "sent/step": round(per["prompt_tokens"]),
                "evaluated/step": round(per["evaluated_tokens"]),
                "reused/step": round(per["reused_tokens"]),
                "reused%": round(100 * prof["reused_share"], 1),
                "generated/step": round(per["generated_tokens"], 1),
            }
        )
    return rows


def write_profile_report(runs: list[Any], out: Path) -> str:
    """``profile.csv``; returns the Markdown section ('' when no run was profiled)."""
    rows = profile_rows(runs)
    if not rows:
        return ""
    write_csv(out / "profile.csv", rows)
    return (
        "\n## Time per step (profile)\n\n"
        "Mean seconds per step by phase — prompt evaluation, decoding (sampling and "
        "grammar included), saved KV state, what the backend did not split (a server), "
        "tools — and prompt tokens sent, evaluated and reused from the KV cache.\n\n"
        + markdown_table(rows)
    )
