"""The trajectory: the single record of what one agent did.

Evaluation analytics, distillation and the viewer all read it; none re-derive it.
One trajectory is one JSON object; files hold one per line (JSONL).

Versioning: ``schema_version`` is the major version (1); a reader refuses other
majors. Within a major, records grow only by optional fields, counted by
``schema_minor``: an older file (no ``schema_minor``) reads with the new fields at
their defaults, and fields this ARK does not know (written by a newer minor) are kept
in ``extra`` and written back unchanged.

Fields (version 1):

* ``id``, ``query_id``, ``query``, ``created`` (UTC ISO time). ``query`` is the
  user's question and ``query_id`` the caller's id of it: the record keeps the keys
  it was first written with, which :attr:`Trajectory.question` and
  :attr:`Trajectory.question_id` read and write (``STORED_AS``).
* ``model``: the model name; ``config``: agent settings (max_steps, temperature,
  tool ablations, agent number, seed, strategy). Never an API key.
* ``messages``: the whole conversation as sent to the model (system, user,
  assistant with tool calls, tool observations) — what distillation trains on.
* ``steps``: one per model call: latency, token usage, the assistant text, and for
  each tool call its name, arguments (raw text too), observation, whether it
  succeeded (``error_code`` otherwise), nodes it returned and its duration.
* ``answer``: the ordered answer list (node indices); ``stop_reason``: ``finish``,
  ``max_steps`` or ``error``; ``error``: the message when ``stop_reason == "error"``.
* ``usage``: token totals; ``wall_s``: the agent's wall time.

Added in minor 1 (all optional): a step's ``module`` (the workflow module that made
the call, for strategies with modules); a tool call's ``center`` (the explored node
of a neighborhood call) and ``relations`` (per returned node, the relations linking
it to the center: ``[{"type", "direction"}]``); the trajectory's ``synthetic`` flag
(made by an oracle policy, not a model) and ``cost`` (accounting, e.g. a price).

Added in minor 2: a step's ``cached`` flag (its reply came from the LLM response
cache, so no model was called and no token was paid for). ``cost`` is filled by
``ark.cost.trajectory_cost``: model calls, cache hits, tokens paid for, seconds in
the model and in the tools, and USD when a price is known.

Added in minor 3: a tool call's ``centers`` (the explored nodes of a hop over a set,
``search_in_neighborhood`` given a list), whose ``relations`` entries then also name
the center they link: ``{"type", "direction", "center"}`` — a neighbor reached from
several centers lists each; and an ``add_to_answer`` call's ``added`` (the nodes it
appended to the answer). Evidence paths (:mod:`ark.retrieval._evidence`) read these;
an older record leaves the hop's centers or relations unknown, never guessed.

Added in minor 4: a step's ``profile`` (:class:`ark.llm.CallProfile` as a dict: prompt
tokens sent, evaluated and reused from the KV cache, tokens generated, seconds in
prompt evaluation, in decoding and with saved KV state), which :mod:`ark.profile`
sums per query; None for a cache hit, a step without a model call, or an older record.

Added in minor 5: a step's ``by``: ``"plan"`` when the reading's plan ran the step's
call itself, with no model call (``ark-guided`` with a sure plan,
:mod:`ark.strategies.guided.plans`); None when the model chose it. Such a trajectory's
``config["plan"]`` holds the plan's confidence, the threshold and why it stopped;
where the model chose between the plan and its rival, also ``rival_confidence`` and
``choice`` (the two readings in words and the 0-based one chosen, None for none), the
choice's model call being the first step (``module: "choose_plan"``); where a plan
that stopped part way handed the session to the model, ``handed_over``: how many of
the first steps it ran.

Added in minor 6: a step's ``redrawn``: the reply the step did not run because the
session would have refused it as a repeat, and the model was asked again without the
repeated tool (``ark-guided``, ``AgentConfig.redraw_repeats``):
``{"tool_calls": [{"name", "arguments"}], "latency_s", "prompt_tokens",
"completion_tokens"}``. The step's latency, tokens and profile are both calls'.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, Protocol

from ark._safe import dumps
from ark.errors import ArkError

SCHEMA_VERSION = 1
SCHEMA_MINOR = 6
StopReason = Literal["finish", "max_steps", "error"]


#: The key a record stores a field under where the two differ: a trajectory's question
#: and its id are ``query`` and ``query_id`` in every record (old runs, the viewer, the
#: reports and resumed runs read them), ``question`` and ``question_id`` in code.
STORED_AS = {"question": "query", "question_id": "query_id"}


def _split_known(cls: type, data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fields ``cls`` declares (read from their stored keys), and the rest (kept
    for writing back)."""
    names = {STORED_AS.get(f.name, f.name): f.name for f in fields(cls) if f.name != "extra"}
    known = {names[k]: v for k, v in data.items() if k in names}
    extra = {k: v for k, v in data.items() if k not in names and k != "extra"}
    extra.update(data.get("extra") or {})
    return known, extra


def _with_extra(d: dict[str, Any]) -> dict[str, Any]:
    """A record's dict: each field under its stored key, then the kept unknown fields."""
    extra = d.pop("extra", None) or {}
    d = {STORED_AS.get(k, k): v for k, v in d.items()}
    return {**d, **{k: v for k, v in extra.items() if k not in d}}


class CallResult(Protocol):
    """What one tool call did, as :class:`ark.session.CallOutcome` reports it: the shape
    :meth:`ToolCallRecord.from_outcome` reads (a protocol, since the record format sits
    below the agent layer and must not import it)."""

    observation: str
    ok: bool
    code: str | None
    nodes: list[int]
    duration_s: float
    added: list[int] | None

    @property
    def center(self) -> int | None: ...

    @property
    def centers(self) -> list[int] | None: ...

    def relations(self) -> list[list[dict[str, Any]]] | None: ...


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
    center: int | None = None  # minor 1: the explored node of a neighborhood call
    relations: list[list[dict[str, Any]]] | None = None  # minor 1: per node in ``nodes``
    centers: list[int] | None = None  # minor 3: the explored nodes of a hop over a set
    added: list[int] | None = None  # minor 3: the nodes an add_to_answer call appended
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_outcome(
        cls,
        id: str,
        name: str,
        arguments: dict[str, Any] | None,
        outcome: CallResult,
        *,
        raw_arguments: str = "",
        observation: str | None = None,
        timed: bool = True,
    ) -> ToolCallRecord:
        """The record of a call that ran: its outcome's status, nodes, center(s),
        relations and added nodes, so every producer (the agent loop, strategies, the
        oracle, ``why``) records a call the same way and a field added to the outcome
        is recorded everywhere at once.

        ``observation`` is the text the model was shown when it differs from the
        tool's (a step-budget note appended); ``timed=False`` records no duration, for
        producers whose records must not vary between runs (synthetic trajectories)."""
        return cls(
            id=id,
            name=name,
            arguments=arguments,
            raw_arguments=raw_arguments,
            observation=outcome.observation if observation is None else observation,
            ok=outcome.ok,
            error_code=outcome.code,
            nodes=outcome.nodes,
            duration_s=round(outcome.duration_s, 6) if timed else 0.0,
            center=outcome.center,
            relations=outcome.relations(),
            centers=outcome.centers,
            added=outcome.added,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCallRecord:
        known, extra = _split_known(cls, data)
        return cls(**known, extra=extra)


@dataclass
class StepRecord:
    index: int
    llm_latency_s: float
    prompt_tokens: int
    completion_tokens: int
    content: str
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    note: str | None = None  # e.g. "no tool call" when the model replied in prose
    module: str | None = None  # minor 1: the workflow module that made this model call
    cached: bool = False  # minor 2: the reply came from the LLM response cache (no model call)
    profile: dict[str, Any] | None = None  # minor 4: the call's tokens and seconds, by phase
    by: str | None = None  # minor 5: "plan" when the reading's plan ran the step (no model call)
    redrawn: dict[str, Any] | None = None  # minor 6: a reply not run (a repeat), then asked again
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StepRecord:
        known, extra = _split_known(cls, data)
        known["tool_calls"] = [ToolCallRecord.from_dict(c) for c in known.get("tool_calls", [])]
        return cls(**known, extra=extra)


@dataclass
class Trajectory:
    question: str  # stored as "query" (STORED_AS)
    model: str
    config: dict[str, Any]
    id: str = ""
    question_id: str | None = None  # stored as "query_id"
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
    schema_minor: int = SCHEMA_MINOR
    synthetic: bool = False  # minor 1: made by an oracle policy, not a model
    cost: dict[str, Any] | None = None  # minor 1: accounting (calls, tokens, price)
    extra: dict[str, Any] = field(default_factory=dict)

    # -- derived views used by analytics -------------------------------------------------

    def tool_names(self) -> list[str]:
        """Names of every tool call in order."""
        return [c.name for s in self.steps for c in s.tool_calls]

    def to_dict(self) -> dict[str, Any]:
        d = _with_extra(asdict(self))
        d["steps"] = [
            {
                **_with_extra(step),
                "tool_calls": [_with_extra(c) for c in step["tool_calls"]],
            }
            for step in d["steps"]
        ]
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trajectory:
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ArkError(
                f"trajectory schema version {version!r} is not supported "
                f"(this ARK reads version {SCHEMA_VERSION})"
            )
        known, extra = _split_known(cls, data)
        known.setdefault("schema_minor", 0)  # files written before minors existed
        known["steps"] = [StepRecord.from_dict(s) for s in known.get("steps", [])]
        return cls(**known, extra=extra)


def write_trajectories(path: str | Path, trajectories: Iterable[Trajectory]) -> Path:
    """Append trajectories to a JSONL file (created with its parents if needed)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        for t in trajectories:
            f.write(dumps(t.to_dict()) + "\n")
    return path


def read_trajectories(
    path: str | Path, *, skipped: list[int] | None = None
) -> Iterator[Trajectory]:
    """Read a JSONL file of trajectories; a bad line is an error naming file and line,
    or, when ``skipped`` is given, is skipped and its number appended there."""
    path = Path(path)
    with path.open("rb") as f:
        for lineno, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            try:
                yield Trajectory.from_dict(json.loads(raw.decode("utf-8")))
            except (
                ValueError,  # invalid UTF-8 or JSON
                RecursionError,
                TypeError,
                AttributeError,
                KeyError,
                ArkError,
            ) as exc:
                if skipped is None:
                    raise ArkError(f"{path}:{lineno}: not a valid trajectory ({exc})") from exc
                skipped.append(lineno)


#: Beside ``trajectories.jsonl``: each step of a run still going (``{pid}``: the
#: process's, so two runs into one folder keep apart), one JSON line as it happens,
#: so that a run killed before its agents finish loses none of them.
STEP_LOG = "steps.{pid}.partial.jsonl"


class StepLog:
    """Steps written as they happen (``ark ask --save-trajectories DIR``).

    The whole trajectories are written when the agents finish; until then each tool
    call is one line of ``DIR/steps.PID.partial.jsonl`` (the question's id and the
    question under the trajectory's keys ``query_id`` and ``query``, agent, step, tool,
    arguments, ok, summary, who chose the call), flushed at once. :meth:`done` removes
    the file once the trajectories are written; after a kill it stays with every
    step taken.
    """

    def __init__(self, folder: str | Path, question: str, question_id: str | None = None) -> None:
        import os

        from ark._files import open_append

        self.path = Path(folder) / STEP_LOG.format(pid=os.getpid())
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open_append(self.path)
        self.question = question
        self.question_id = question_id

    def write(self, record: dict[str, Any]) -> None:
        line = {"query_id": self.question_id, "query": self.question, **record}
        self._file.write(dumps(line) + "\n")
        self._file.flush()

    def done(self) -> None:
        """The trajectories are written: the partial steps are no longer needed."""
        self._file.close()
        self.path.unlink(missing_ok=True)

    def close(self) -> None:
        """Stop writing, keeping what was written (an interrupted run)."""
        self._file.close()
