"""A stored run's trajectories replayed through today's strategy, the model's replies
given back as they were: does every observation read the same?

    python benchmarks/replay_trajectories.py RUN/SET --index IDX [--limit N] [--show 3]

Why: the hints and the reading write most of what the model reads (``ark-guided``'s
observations, the plans it runs by itself). A change meant to keep them (a refactor,
a rule taken out, a module merged) is judged with the model only at the price of a
run per set and seed, and then the sampling hides what changed. Here no model runs:
each question's agent is rebuilt from the trajectory's own config (steps, tools,
plan threshold, options) over ``IDX`` (the index the run used, its fits included),
and at each of its model turns it is handed the reply the stored run's model gave
at that turn (:class:`ark.testing.ScriptedChatModel`). The plans run themselves, as
they did. Every message of the new conversation is compared with the stored one:
the system prompt, each call's name and arguments, each observation's text.

A question is **identical** when every message is; else the first message that
differs is printed (``--show``), the stored text and today's. A reply handed back
after the conversation has already parted may no longer fit it; the count is of
questions, so only the first difference counts. Trajectories of several agents, of
a redrawn reply, or with a model error are left out and counted.

Exit status: 0 when every replayed question is identical, 1 when one is not, 2 when
nothing could be replayed (usable as a check before and after a refactor of the
hints: run it on the recorded runs of every set).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from ark.index import Index, open_index
from ark.llm import Message
from ark.strategies import AgentConfig, AgentOptions, GuidedAgent, GuidedOptions
from ark.testing import ScriptedChatModel
from ark.tools import GraphTools, ToolConfig

#: The AgentConfig fields a trajectory's config records beside its run records (the
#: tools are rebuilt apart); a field an older trajectory lacks keeps today's default.
_CONFIG_FIELDS = tuple(f.name for f in fields(AgentConfig) if f.name != "tools")


def agent_for(
    index: Index, tools: GraphTools, trajectory: dict[str, Any], run: dict[str, Any]
) -> GuidedAgent:
    """The guided agent the trajectory ran with, replying with its stored replies:
    its config and options from the trajectory (which records the options that
    differ from the defaults), the run's ``config.json`` filling in where it says
    more."""
    recorded = trajectory.get("config", {})
    config = AgentConfig(
        tools=ToolConfig(**recorded.get("tools", {})),
        **{k: recorded[k] for k in _CONFIG_FIELDS if k in recorded},
    )
    options = {**run.get("agent_options", {}), **recorded.get("options", {})}
    replies = [
        Message.from_dict(m) for m in trajectory.get("messages", []) if m["role"] == "assistant"
    ]
    model = ScriptedChatModel(replies, name=str(trajectory.get("model", "replayed")))
    return GuidedAgent(
        index,
        model,
        config,
        tools=tools,
        options=AgentOptions(
            example=bool(options.get("example", False)),
            texts_once=bool(options.get("texts_once", False)),
        ),
        guided=GuidedOptions(
            choose_plans=bool(options.get("choose_plans", False)),
            hand_over_plans=bool(options.get("hand_over_plans", True)),
        ),
    )


def _key(message: dict[str, Any]) -> tuple[Any, ...]:
    """What two messages must share to read the same: role, text and calls."""
    calls = tuple(
        (c.get("name"), json.dumps(c.get("arguments"), sort_keys=True))
        for c in message.get("tool_calls", [])
    )
    return (message.get("role"), message.get("content") or "", calls)


def first_difference(
    stored: Sequence[dict[str, Any]], replayed: Sequence[dict[str, Any]]
) -> int | None:
    """The index of the first message that differs (None: the same conversation)."""
    for i, (a, b) in enumerate(zip(stored, replayed, strict=False)):
        if _key(a) != _key(b):
            return i
    return None if len(stored) == len(replayed) else min(len(stored), len(replayed))


def skip_reason(trajectory: dict[str, Any]) -> str | None:
    """Why a trajectory cannot be replayed by handing back its replies (None: it can)."""
    if trajectory.get("config", {}).get("agent", 0) != 0:
        return "not agent 0"
    if trajectory.get("error"):
        return "stopped on an error"
    if any(s.get("redrawn") is not None for s in trajectory.get("steps", [])):
        return "a redrawn reply"
    config = trajectory.get("config", {})
    if config.get("strategy", "ark-guided") not in ("ark", "ark-guided") or not config.get(
        "options", {}
    ).get("hints"):
        return "not ark-guided"
    return None


async def replay(
    index: Index, trajectories: list[dict[str, Any]], run: dict[str, Any]
) -> list[dict[str, Any]]:
    """Each trajectory replayed: its query id, the first differing message (or None),
    and the two messages there."""
    tools = GraphTools(index)
    out = []
    for t in trajectories:
        agent = agent_for(index, tools, t, run)
        new = await agent.run(t["query"], t.get("query_id"))
        stored, replayed = t.get("messages", []), new.messages
        at = first_difference(stored, replayed)
        out.append(
            {
                "query_id": t.get("query_id"),
                "query": t["query"],
                "first_difference": at,
                "stored": stored[at] if at is not None and at < len(stored) else None,
                "replayed": replayed[at] if at is not None and at < len(replayed) else None,
                "answer_same": list(new.answer) == list(t.get("answer", [])),
            }
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("run", type=Path, help="a run folder: trajectories.jsonl and config.json")
    p.add_argument("--index", type=Path, required=True, help="the index the run used")
    p.add_argument("--limit", type=int, default=None, help="the first N trajectories")
    p.add_argument("--show", type=int, default=3, help="differing questions to print")
    args = p.parse_args(argv)
    path = args.run / "trajectories.jsonl"
    if not path.exists():
        sys.exit(f"{path} not found: pass a run folder (RUN/SET) of bench_quality.py or ark eval")
    run = (
        json.loads((args.run / "config.json").read_text())
        if (args.run / "config.json").exists()
        else {}
    )
    trajectories, skipped = [], []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                t = json.loads(line)
            except json.JSONDecodeError as exc:
                sys.exit(f"{path}:{n}: not JSON ({exc.msg})")
            why = skip_reason(t)
            (skipped.append(why) if why else trajectories.append(t))
    trajectories = trajectories[: args.limit]
    results = asyncio.run(replay(open_index(args.index), trajectories, run))
    differ = [r for r in results if r["first_difference"] is not None]
    left = f", {len(skipped)} left out ({', '.join(sorted(set(skipped)))})" if skipped else ""
    print(f"{args.run}: {len(results) - len(differ)} of {len(results)} replayed identical{left}")
    for r in differ[: args.show]:
        print(f"\n{r['query_id']}: {r['query']}")
        print(f"  first difference at message {r['first_difference']}")
        for side in ("stored", "replayed"):
            m = r[side]
            text = "(none)" if m is None else json.dumps(m, ensure_ascii=False)[:1200]
            print(f"  {side}: {text}")
    if not results:
        print("nothing was replayed: no trajectory of one ark-guided agent", file=sys.stderr)
        return 2
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
