"""Evidence: for each returned node, the recorded chain of tool calls that reached it.

Computed from trajectories only — the nodes each call returned, the center(s) it
explored and the relations linking each hit to its center (``ToolCallRecord.nodes``,
``center``, ``centers``, ``relations``) — so a path is what an agent saw, never a
path looked up in the graph afterwards. A user (or a test) can check every hop
against the graph; a hop whose record predates relations says so (``None``) rather
than guessing.

A path starts at an *anchor*: the node a global search returned (with that search's
query), then goes one hop per neighborhood call: the center explored, the relation
and its direction, the neighbor returned. Each center is reached by its earliest
arrival before the call that explored it, so a path is as early as the agent's own
record allows and always ends. A neighbor reached from several centers (a hop over a
set) has one path per center and relation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ark._coerce import as_int
from ark._safe import cut
from ark.graph import Graph
from ark.tools import NAME_CHARS, ErrorCode
from ark.trajectory import ToolCallRecord, Trajectory

Direction = Literal["out", "in"]
#: Error codes of calls that were recorded but never run.
NOT_RUN = frozenset({str(ErrorCode.OUTPUT_CUT), str(ErrorCode.AFTER_FINISH)})

__all__ = [
    "Addition",
    "EvidencePath",
    "Hop",
    "NodeEvidence",
    "evidence_names",
    "explain",
    "paths_to",
    "render_evidence",
    "render_path",
]


@dataclass(frozen=True)
class Hop:
    """One edge an agent went along: it explored ``center`` at ``step`` and the tool
    returned ``neighbor``. ``direction`` ``"out"``: center -relation-> neighbor;
    ``"in"``: neighbor -relation-> center. ``relation`` and ``direction`` are ``None``
    when the trajectory did not record them (written before ARK recorded relations);
    ``center`` is ``None`` when an old record of a hop over a set did not say which
    center reached the neighbor."""

    center: int | None
    relation: str | None
    direction: Direction | None
    neighbor: int
    step: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "center": self.center,
            "relation": self.relation,
            "direction": self.direction,
            "neighbor": self.neighbor,
            "step": self.step,
        }


@dataclass(frozen=True)
class EvidencePath:
    """How agent ``agent`` reached a node: ``anchor`` returned by the global search
    ``query`` at ``step``, then ``hops``. ``query`` and ``step`` are ``None`` when the
    first center was never returned by a search (the model named its index directly);
    ``anchor`` is ``None`` when the chain's start is unknown (see :class:`Hop`)."""

    agent: int
    anchor: int | None
    query: str | None
    step: int | None
    hops: tuple[Hop, ...]

    @property
    def node(self) -> int | None:
        """The node this path ends at."""
        return self.hops[-1].neighbor if self.hops else self.anchor

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "anchor": self.anchor,
            "query": self.query,
            "step": self.step,
            "hops": [h.to_dict() for h in self.hops],
        }


@dataclass(frozen=True)
class Addition:
    """Agent ``agent`` put the node in its answer at ``step`` (``None``: the strategy
    ranked it without an ``add_to_answer`` call, as GraphSearch's workflow does)."""

    agent: int
    step: int | None
    #: ``"plan"`` when the reading's plan made the add (no model call), else None.
    by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "step": self.step, **({"by": self.by} if self.by else {})}


@dataclass(frozen=True)
class NodeEvidence:
    """Why ``node`` was returned: its ``votes`` (agent answers holding it), the agents
    that added it, and the paths by which those agents reached it before adding it."""

    node: int
    votes: int
    added_by: tuple[Addition, ...]
    paths: tuple[EvidencePath, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "votes": self.votes,
            "added_by": [a.to_dict() for a in self.added_by],
            "paths": [p.to_dict() for p in self.paths],
        }


# -- reading one trajectory ---------------------------------------------------------------


@dataclass(frozen=True)
class _Arrival:
    """``node`` returned by call number ``call``: by a global search, or over ``hop``."""

    node: int
    call: int
    step: int
    query: str | None = None
    hop: Hop | None = None


class _Record:
    """One trajectory read once: every arrival at every node, and where each answer
    node was added (call number and step)."""

    def __init__(self, trajectory: Trajectory) -> None:
        self.arrivals: dict[int, list[_Arrival]] = {}
        self.added: dict[int, tuple[int, int]] = {}
        #: Centers explored, by the first call exploring them (a model may explore,
        #: and then add, a node no search returned: it named the index itself).
        self.explored: dict[int, int] = {}
        answer = set(trajectory.answer)
        seen: set[int] = set()
        k = 0
        for step in trajectory.steps:
            number = step.index + 1
            for call in step.tool_calls:
                k += 1
                if call.name == "add_to_answer":
                    self._add(call, answer, seen, k, number)
                elif call.ok and call.name in ("search_in_graph", "search_in_neighborhood"):
                    for node, arrival in self._read(call, k, number):
                        self.arrivals.setdefault(node, []).append(arrival)
                    seen.update(call.nodes)
                    for center in _centers(call):
                        seen.add(center)
                        self.explored.setdefault(center, k)

    def _add(
        self, call: ToolCallRecord, answer: set[int], seen: set[int], k: int, step: int
    ) -> None:
        """The answer nodes this call added, as recorded (``added``); in a record older
        than that, the nodes it named that were seen before it and not yet added, as
        the session adds them (a call never run added nothing)."""
        if call.added is not None:
            named: list[Any] = call.added
        elif call.error_code in NOT_RUN:
            return
        else:
            raw = (call.arguments or {}).get("node_indices")
            named = [v for v in (raw if isinstance(raw, list) else [raw]) if as_int(v) in seen]
        for value in named:
            node = as_int(value)
            if node is not None and node in answer and node not in self.added:
                self.added[node] = (k, step)

    @staticmethod
    def _read(call: ToolCallRecord, k: int, step: int) -> Iterable[tuple[int, _Arrival]]:
        if call.name == "search_in_graph":
            query = (call.arguments or {}).get("query")
            text = query if isinstance(query, str) else None
            for node in call.nodes:
                yield node, _Arrival(node, k, step, query=text)
            return
        rels = call.relations
        for i, node in enumerate(call.nodes):
            links = rels[i] if rels is not None and i < len(rels) else None
            for center, relation, direction in _links(call, links):
                hop = Hop(center, relation, direction, node, step)
                yield node, _Arrival(node, k, step, hop=hop)

    def paths(self, node: int, agent: int, before: int | None = None) -> list[EvidencePath]:
        """Every distinct path to ``node`` by an arrival before call ``before``."""
        out: dict[tuple[Any, ...], EvidencePath] = {}
        for arrival in self.arrivals.get(node, []):
            if before is not None and arrival.call >= before:
                break
            path = self._chain(arrival, agent)
            key = (path.anchor, path.query, tuple(_edge(h) for h in path.hops))
            out.setdefault(key, path)
        first = self.explored.get(node)
        if not out and first is not None and (before is None or first < before):
            return [EvidencePath(agent, node, None, None, ())]  # explored, never returned
        return list(out.values())

    def _chain(self, arrival: _Arrival, agent: int) -> EvidencePath:
        hops: list[Hop] = []
        current: _Arrival | None = arrival
        while current is not None and current.hop is not None:
            hops.append(current.hop)
            center = current.hop.center
            if center is None:
                return EvidencePath(agent, None, None, None, tuple(reversed(hops)))
            # The center's earliest arrival, strictly before this call: the loop ends.
            earlier = [a for a in self.arrivals.get(center, []) if a.call < current.call]
            if not earlier:
                return EvidencePath(agent, center, None, None, tuple(reversed(hops)))
            current = earlier[0]
        assert current is not None  # the search that returned the anchor
        return EvidencePath(agent, current.node, current.query, current.step, tuple(reversed(hops)))


def _edge(h: Hop) -> tuple[Any, ...]:
    return (h.center, h.relation, h.direction, h.neighbor)


def _centers(call: ToolCallRecord) -> list[int]:
    """The explored node(s) of a neighborhood call, as recorded (or, in a record older
    than centers, as its ``node_index`` argument named them)."""
    if call.centers is not None:
        return list(call.centers)
    if call.center is not None:
        return [call.center]
    value = (call.arguments or {}).get("node_index")
    values = value if isinstance(value, list) else [value]
    return [n for n in (as_int(v) for v in values) if n is not None]


def _links(
    call: ToolCallRecord, links: list[dict[str, Any]] | None
) -> list[tuple[int | None, str | None, Direction | None]]:
    """(center, relation, direction) per edge linking one hit to its center(s)."""
    centers = _centers(call)
    single = centers[0] if len(centers) == 1 and call.centers is None else None
    if not links:
        return [(single, None, None)]
    out = []
    for link in links:
        if not isinstance(link, dict):
            continue
        center = as_int(link.get("center")) if "center" in link else single
        direction = link.get("direction")
        out.append(
            (
                center,
                str(link.get("type")) if link.get("type") is not None else None,
                direction if direction in ("out", "in") else None,
            )
        )
    return out


def _agent(t: Trajectory, position: int) -> int:
    number = t.config.get("agent") if isinstance(t.config, dict) else None
    return number if isinstance(number, int) and not isinstance(number, bool) else position


# -- the public functions --------------------------------------------------------------------


def paths_to(trajectory: Trajectory, node: int, agent: int = 0) -> list[EvidencePath]:
    """Every distinct path by which ``trajectory`` reached ``node`` (empty: never)."""
    return _Record(trajectory).paths(node, agent)


def explain(
    trajectories: Sequence[Trajectory], ranking: Iterable[tuple[int, int]]
) -> list[NodeEvidence]:
    """The evidence of each ``(node, votes)`` of a fused ranking, in its order.

    Only agents that ended normally count (as in the vote); for each that put the node
    in its answer, the paths by which it reached the node before adding it.
    """
    voters = [
        (_agent(t, i), t, _Record(t))
        for i, t in enumerate(trajectories)
        if t.stop_reason != "error"
    ]
    out = []
    for node, votes in ranking:
        added: list[Addition] = []
        paths: list[EvidencePath] = []
        for agent, t, record in voters:
            if node not in t.answer:
                continue
            call, step = record.added.get(node, (None, None))
            by = next((s.by for s in t.steps if step is not None and s.index + 1 == step), None)
            added.append(Addition(agent, step, by))
            paths += record.paths(node, agent, before=call)
        out.append(NodeEvidence(node, votes, tuple(added), tuple(paths)))
    return out


def evidence_names(evidence: Iterable[NodeEvidence], graph: Graph) -> dict[str, list[str]]:
    """``{index: [name, type]}`` for every node on the paths (for JSON readers)."""
    nodes: set[int] = set()
    for e in evidence:
        nodes.add(e.node)
        for p in e.paths:
            ends = [p.anchor, *(x for h in p.hops for x in (h.center, h.neighbor))]
            nodes.update(x for x in ends if x is not None)
    n = graph.n_nodes
    return {str(v): [graph.name(v), graph.type_name(v)] for v in sorted(nodes) if 0 <= v < n}


def render_path(path: EvidencePath, name: Callable[[int], str], unit: str = "step") -> str:
    """One line: ``search 'q' (step 1) → [12] A -rel-> [34] B (step 2)``; an ``in``
    hop is drawn ``<-rel-`` (the neighbor is the edge's source)."""
    if path.query is not None:
        head = f"search {path.query!r} ({unit} {path.step}) → "
    elif path.anchor is not None:
        head = "explored directly: "
    else:
        head = "over a hop whose center was not recorded: "
    parts = [head + (f"[{path.anchor}] {name(path.anchor)}" if path.anchor is not None else "?")]
    for h in path.hops:
        rel = h.relation or "?"
        arrow = f" <-{rel}- " if h.direction == "in" else f" -{rel}-> "
        parts.append(f"{arrow}[{h.neighbor}] {name(h.neighbor)} ({unit} {h.step})")
    return "".join(parts)


def render_evidence(evidence: NodeEvidence, graph: Graph, max_paths: int = 3) -> list[str]:
    """Compact lines for a terminal: who added the node, then up to ``max_paths`` paths."""

    def name(n: int) -> str:
        return cut(graph.name(n), NAME_CHARS) if 0 <= n < graph.n_nodes else "?"

    adds = ", ".join(
        f"agent {a.agent + 1}"
        + (f" at step {a.step}" if a.step is not None else "")
        + (" (run by the plan)" if a.by == "plan" else "")
        for a in evidence.added_by
    )
    votes = f"{evidence.votes} vote{'s' if evidence.votes != 1 else ''}"
    lines = [f"{votes}; added by {adds or 'no agent'}"]
    for p in evidence.paths[:max_paths]:
        lines.append(f"agent {p.agent + 1}: {render_path(p, name)}")
    more = len(evidence.paths) - max_paths
    if more > 0:
        lines.append(f"(+{more} more path{'s' if more != 1 else ''}; --json lists them all)")
    if not evidence.paths:
        lines.append("no recorded path (the trajectory does not show how it was reached)")
    return lines
