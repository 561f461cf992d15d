"""The trajectory: the single record of what one agent did.

Evaluation analytics, distillation and the viewer all read it; none re-derive it.
One trajectory is one JSON object; files hold one per line (JSONL). The schema is
versioned (``schema_version``); :func:`read_trajectories` refuses other versions.

Fields (version 1):

* ``id``, ``query_id``, ``query``, ``created`` (UTC ISO time)
* ``model``: the model name; ``config``: agent settings (max_steps, temperature,
  tool ablations, agent number, seed). Never an API key.
* ``messages``: the whole conversation as sent to the model (system, user,
  assistant with tool calls, tool observations) — what distillation trains on.
* ``steps``: one per model call: latency, token usage, the assistant text, and for
  each tool call its name, arguments (raw text too), observation, whether it
  succeeded (``error_code`` otherwise), nodes it returned and its duration.
* ``answer``: the ordered answer list (node indices); ``stop_reason``: ``finish``,
  ``max_steps`` or ``error``; ``error``: the message when ``stop_reason == "error"``.
* ``usage``: token totals; ``wall_s``: the agent's wall time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from ark.errors import ArkError

SCHEMA_VERSION = 1
StopReason = Literal["finish", "max_steps", "error"]


@dataclass
class ToolCallRecord:
    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str
    observation: str
    ok: bool
    error_code: str | None = None
    nodes: list[int] = field(default_factory=list)
    duration_s: float = 0.0


@dataclass
class StepRecord:
    index: int
    llm_latency_s: float
    prompt_tokens: int
    completion_tokens: int
    content: str
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    note: str | None = None  # e.g. "no tool call" when the model replied in prose


@dataclass
class Trajectory:
    query: str
    model: str
    config: dict[str, Any]
    id: str = ""
    query_id: str | None = None
    created: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    answer: list[int] = field(default_factory=list)
    stop_reason: StopReason = "max_steps"
    error: str | None = None
    usage: dict[str, int] = field(
        default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0}
    )
    wall_s: float = 0.0
    schema_version: int = SCHEMA_VERSION

    # -- derived views used by analytics -------------------------------------------------

    def tool_names(self) -> list[str]:
        """Names of every tool call in order."""
        return [c.name for s in self.steps for c in s.tool_calls]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trajectory:
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ArkError(
                f"trajectory schema version {version!r} is not supported "
                f"(this ARK reads version {SCHEMA_VERSION})"
            )
        data = dict(data)
        data["steps"] = [
            StepRecord(
                **{
                    **s,
                    "tool_calls": [ToolCallRecord(**c) for c in s.get("tool_calls", [])],
                }
            )
            for s in data.get("steps", [])
        ]
        return cls(**data)


def write_trajectories(path: str | Path, trajectories: Iterable[Trajectory]) -> Path:
    """Append trajectories to a JSONL file (created with its parents if needed)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        for t in trajectories:
            f.write(json.dumps(t.to_dict(), ensure_ascii=False) + "\n")
    return path


def read_trajectories(path: str | Path) -> Iterator[Trajectory]:
    """Read a JSONL file of trajectories; a bad line is an error naming file and line."""
    path = Path(path)
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                yield Trajectory.from_dict(json.loads(line))
            except (json.JSONDecodeError, TypeError, ArkError) as exc:
                raise ArkError(f"{path}:{lineno}: not a valid trajectory ({exc})") from exc
