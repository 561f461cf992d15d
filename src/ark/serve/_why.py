"""The MCP ``why`` tool: the evidence paths behind a node a client found.

An MCP client runs its own agent over ARK's tools and keeps its own answer; what it
lacks is a checkable reason for each answer node. The server keeps no state between
calls (under the current protocol each request may be its own connection), so the
client passes the searches it made, in order. They are run again through a tool
session — the tools are read-only and deterministic, so the results are the ones the
client saw on this index — and recorded as a trajectory records them; the paths come
from that record by :func:`ark.retrieval.paths_to`, the function behind
``RetrievalResult.evidence``. Only edges the client's own calls returned appear: a
node none of them returned has no path, and the answer says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ark._coerce import as_int
from ark._safe import cut, short_repr
from ark.index import Index
from ark.retrieval import NodeEvidence, evidence_names, paths_to, render_path
from ark.serve._service import CallError
from ark.session import ToolSession
from ark.tools import NAME_CHARS, ErrorCode, GraphTools
from ark.trajectory import StepRecord, ToolCallRecord, Trajectory

__all__ = ["MAX_CALLS", "WHY_SPEC", "WhyError", "why"]

#: Most searches one ``why`` call replays.
MAX_CALLS = 50
SEARCH_TOOLS = ("search_in_graph", "search_in_neighborhood")

WHY_SPEC: dict[str, Any] = {
    "name": "why",
    "description": (
        "The evidence for a node you found: every path by which your searches reached "
        "it - the search_in_graph query that returned the start, then each edge "
        "followed (center, relation, direction, neighbor). Pass the searches you made, "
        "in order; `step` numbers them from 1. Use it to justify an answer: a node none "
        "of them returned has no path."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "node_index": {
                "type": "integer",
                "minimum": 0,
                "description": "Index of a node returned by one of the searches.",
            },
            "calls": {
                "type": "array",
                "maxItems": MAX_CALLS,
                "description": "The search calls you made, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "tool": {"type": "string", "enum": list(SEARCH_TOOLS)},
                        "arguments": {"type": "object"},
                    },
                    "required": ["tool", "arguments"],
                },
            },
        },
        "required": ["node_index", "calls"],
        "additionalProperties": False,
    },
}


class WhyError(CallError):
    """A bad ``why`` call: its error code and message."""


def replay(index: Index, tools: GraphTools, calls: list[Any]) -> Trajectory:
    """The searches run again and recorded as the agent loop records them: step N is
    the Nth call (a malformed or failed one is recorded as not ok)."""
    session = ToolSession(index, tools=tools, answer_tools=False, detect_repeats=False)
    steps = []
    for i, item in enumerate(calls):
        name = item.get("tool") if isinstance(item, Mapping) else None
        args = item.get("arguments") if isinstance(item, Mapping) else None
        if name not in SEARCH_TOOLS or not isinstance(args, Mapping):
            record = ToolCallRecord(str(i), short_repr(name, 60), None, "", "", ok=False)
        else:
            # The graph is the one ``why`` was asked about (several served: its index).
            args = {k: v for k, v in args.items() if k != "index"}
            outcome = session.call(name, args)
            record = ToolCallRecord.from_outcome(
                str(i), name, dict(args), outcome, observation="", timed=False
            )
        steps.append(StepRecord(i, 0.0, 0, 0, "", [record]))
    return Trajectory(question="", model="mcp-client", config={"agent": 0}, steps=steps)


def why(index: Index, tools: GraphTools, args: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(text, structured)`` for the ``why`` tool; raises :class:`WhyError` on a bad
    argument (the server returns it as a tool error with its code)."""
    unknown = set(args) - {"node_index", "calls"}
    if unknown:
        raise WhyError(
            ErrorCode.BAD_ARGUMENT,
            f"unknown argument(s) {short_repr(sorted(unknown))}; this tool takes "
            "['calls', 'node_index'].",
        )
    calls = args.get("calls")
    if not isinstance(calls, list) or len(calls) > MAX_CALLS:
        raise WhyError(
            ErrorCode.BAD_ARGUMENT,
            f"calls must be a list of at most {MAX_CALLS} searches "
            '({"tool": ..., "arguments": {...}}), in the order made.',
        )
    node = as_int(args.get("node_index"))
    n = index.graph.n_nodes
    if node is None:
        raise WhyError(
            ErrorCode.BAD_ARGUMENT,
            f"node_index must be an integer, got {short_repr(args.get('node_index'))}.",
        )
    if not 0 <= node < n:
        raise WhyError(
            ErrorCode.UNKNOWN_NODE, f"node {node} is not in the graph (indices 0..{n - 1})."
        )
    paths = paths_to(replay(index, tools, calls), node)
    g = index.graph

    def name(v: int) -> str:
        return cut(g.name(v), NAME_CHARS)

    head = f"[{node}] {name(node)} ({g.type_name(node)})"
    if not paths:
        text = f"{head}: none of these searches returned it, so there is no evidence path."
    else:
        lines = [f"{head}: reached by {len(paths)} path(s):"]
        lines += ["- " + render_path(p, name, unit="search") for p in paths]
        text = "\n".join(lines)
    structured = {
        "node": node,
        "paths": [p.to_dict() for p in paths],
        "names": evidence_names([NodeEvidence(node, 0, (), tuple(paths))], g),
    }
    return text, structured
