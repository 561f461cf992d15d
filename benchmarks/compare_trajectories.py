"""Two runs of the same questions compared call by call: where do their agents first
act differently?

    python benchmarks/compare_trajectories.py RUN_A RUN_B [--show 3]

RUN_A and RUN_B are run directories (``trajectories.jsonl`` inside, as ``ark eval``
and ``bench_quality.py`` write them), e.g. one set under ARK's decoder and under
``create_completion`` at the same seed (``bench_quality.py --decoders ark llama``:
``OUT/LABEL-ark-s0/SET`` and ``OUT/LABEL-llama-s0/SET``). ARK's decoder samples with
``create_completion``'s own chain and seed (``ark/llm/local/_lazy_grammar.py``) and
keeps a drafted token only where the sampler picked exactly it, so on the same logits
the two write the same tokens; they part only where the logits differ (a batch of
drafted tokens is evaluated in one pass, whose float sums may differ in the last bits
from one token at a time) and a draw falls the other way. The table says how many
questions' trajectories are identical (every call's name and arguments, and the
answer list), and for the others at which step they first differ — issue 39's check
that a Hit@1 difference between decoders is noise and not a shifted distribution.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any


def calls(trajectory: dict[str, Any]) -> list[tuple[str, str]]:
    """Each step's calls as (name, canonical JSON arguments), in order."""
    out = []
    for step in trajectory.get("steps", []):
        for call in step.get("tool_calls", []):
            args = json.dumps(call.get("arguments"), sort_keys=True)
            out.append((call.get("name", ""), args))
    return out


def load(run: Path) -> dict[str, dict[str, Any]]:
    """The run's first trajectory of each question (agent 0), by query id."""
    out: dict[str, dict[str, Any]] = {}
    with open(run / "trajectories.jsonl", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                t = json.loads(line)
                if t.get("config", {}).get("agent", 0) == 0:
                    out.setdefault(str(t.get("query_id")), t)
    return out


def first_difference(a: dict[str, Any], b: dict[str, Any]) -> int | None:
    """The index of the first call that differs (None: identical, answers too)."""
    ca, cb = calls(a), calls(b)
    for i, (x, y) in enumerate(zip(ca, cb, strict=False)):
        if x != y:
            return i
    if len(ca) != len(cb):
        return min(len(ca), len(cb))
    return None if a.get("answer") == b.get("answer") else len(ca)


def compare(run_a: Path, run_b: Path) -> dict[str, Any]:
    a, b = load(run_a), load(run_b)
    common = sorted(set(a) & set(b))
    firsts = {q: first_difference(a[q], b[q]) for q in common}
    differ = {q: i for q, i in firsts.items() if i is not None}
    return {
        "questions": len(common),
        "identical": len(common) - len(differ),
        "first_difference_at_call": dict(sorted(Counter(differ.values()).items())),
        "differing": differ,
        "calls": {q: (calls(a[q]), calls(b[q])) for q in differ},
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("run_a", type=Path)
    p.add_argument("run_b", type=Path)
    p.add_argument("--show", type=int, default=3, help="differing questions to print")
    args = p.parse_args()
    r = compare(args.run_a, args.run_b)
    print(f"{r['identical']} of {r['questions']} questions: identical trajectories")
    if r["first_difference_at_call"]:
        where = ", ".join(f"call {i}: {n}" for i, n in r["first_difference_at_call"].items())
        print(f"first difference at {where}")
    for q in list(r["differing"])[: args.show]:
        i = r["differing"][q]
        ca, cb = r["calls"][q]
        print(f"\n{q} (call {i})\n  A: {ca[i] if i < len(ca) else '(end)'}")
        print(f"  B: {cb[i] if i < len(cb) else '(end)'}")


if __name__ == "__main__":
    main()
