"""Typed tool results and their compact text form for an LLM: one node's or the
whole graph's (:class:`SearchResult`), a set of nodes' merged neighborhoods
(:class:`MultiNeighborhoodResult`), and errors (:class:`ToolError`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ark._safe import cut, printable

if TYPE_CHECKING:
    from ark.tools._phrases import PhraseMatch

#: Longest node name shown in an observation (a graph's name can be megabytes long).
NAME_CHARS = 200

Direction = Literal["out", "in"]


@dataclass(frozen=True, slots=True)
class Relation:
    """An edge between the center node and a neighbor.

    ``out``: the center is the edge's source (center -type-> neighbor);
    ``in``: the neighbor is the source (neighbor -type-> center).
    """

    type: str
    direction: Direction

    def to_dict(self) -> dict[str, str]:
        return {"type": self.type, "direction": self.direction}


@dataclass(frozen=True, slots=True)
class NodeHit:
    index: int
    type: str
    name: str
    score: float
    snippet: str = ""
    relations: tuple[Relation, ...] = ()

    def to_dict(self, with_relations: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            "type": self.type,
            "name": self.name,
            "score": round(float(self.score), 6),
            "snippet": self.snippet,
        }
        if with_relations:
            out["relations"] = [r.to_dict() for r in self.relations]
        return out


_new_object = object.__new__
_SETTERS = tuple(NodeHit.__dict__[f].__set__ for f in NodeHit.__slots__)


def make_hit(
    index: int, type: str, name: str, score: float, snippet: str, relations: tuple[Relation, ...]
) -> NodeHit:
    """``NodeHit(index, type, name, score, snippet, relations)``, built without the
    frozen dataclass's ``__init__`` (one ``object.__setattr__`` by name per field):
    the tools build up to a hundred hits per call, and this halves their cost."""
    hit = _new_object(NodeHit)
    set_index, set_type, set_name, set_score, set_snippet, set_relations = _SETTERS
    set_index(hit, index)
    set_type(hit, type)
    set_name(hit, name)
    set_score(hit, score)
    set_snippet(hit, snippet)
    set_relations(hit, relations)
    return hit


@dataclass(frozen=True, slots=True)
class SearchResult:
    """What a tool returns: ranked hits, and how many matched before the cut to k."""

    tool: str
    arguments: dict[str, Any]
    hits: tuple[NodeHit, ...]
    total: int
    center: NodeHit | None = None  # the explored node, for search_in_neighborhood
    #: When filters left no neighbor: (neighbor type, relation, direction, count) of
    #: the unfiltered neighborhood, so a caller can fix its filters.
    available: tuple[tuple[str, str, str, int], ...] = ()
    ok: Literal[True] = True
    #: Lines shown after the heading, e.g. that an over-long query was cut.
    notes: tuple[str, ...] = ()
    #: The ``edge_type`` phrases that were no relation name, and what they matched.
    matched: tuple[PhraseMatch, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        neighbors = self.tool == "search_in_neighborhood"
        out: dict[str, Any] = {
            "results": [h.to_dict(with_relations=neighbors) for h in self.hits],
            "total": self.total,
        }
        if self.matched:
            out["edge_type_matches"] = [m.to_dict() for m in self.matched]
        if self.available:
            out["available"] = [
                {"node_type": t, "relation": r, "direction": d, "count": c}
                for t, r, d, c in self.available
            ]
        return out

    def render(self, grouped: bool = False, shown: AbstractSet[int] = frozenset()) -> str:
        """The observation text; a node in ``shown`` (its text already in an earlier
        observation of the session) is listed without its text again."""
        return printable(self._render(grouped, shown))

    def _render(self, grouped: bool, shown: AbstractSet[int]) -> str:
        """Compact observation text: one line per hit; ``grouped``, a neighborhood's
        hits with the same relations and type on one line (:func:`grouped_lines`)."""
        if self.tool == "search_in_neighborhood" and self.center is not None:
            c = self.center
            head = (
                f"Neighbors of [{c.index}] {cut(c.name, NAME_CHARS)} ({c.type})"
                f"{_filters(self.arguments)}: "
                f"{_count(len(self.hits), self.total, 'neighbor')}."
            )
        else:
            head = (
                f"Global search for {self.arguments.get('query', '')!r}: "
                f"{_count(len(self.hits), self.total, 'node')}."
            )
        lines = [head, *self.notes]
        if self.available:
            lines.append(
                "No neighbor matches these filters. This node's neighbors are: "
                + "; ".join(f"{c} {t} via {r}({d})" for t, r, d, c in self.available[:8])
                + "."
            )
            fix = self._suggested_filters()
            if fix is not None and self.center is not None:
                edge, node = fix
                lines.append(
                    f"Try search_in_neighborhood(node_index={self.center.index}, "
                    f'edge_type="{edge}", node_type="{node}").'
                )
        ranked = self.tool == "search_in_graph" or bool(self.arguments.get("query"))
        if grouped and self.center is not None and not any(h.snippet for h in self.hits):
            lines += grouped_lines(
                (_via(h.relations, h.type), _member(h, ranked)) for h in self.hits
            )
            return "\n".join(lines)
        for h in self.hits:
            line = f"[{h.index}] {cut(h.name, NAME_CHARS)} ({h.type})"
            if ranked:
                line += f" score={h.score:.2f}"
            if h.relations:
                line += " via " + relations_text(h.relations)
            if h.snippet:
                line += _text(h, shown)
            lines.append(line)
        return "\n".join(lines)

    def _suggested_filters(self) -> tuple[str, str] | None:
        """The (relation, neighbor type) pair that keeps one of the two filters the
        caller gave and fixes the other, when exactly one of them was wrong — the usual
        slip being the start node's own type given as ``node_type``."""
        wanted_edges = _names(self.arguments.get("edge_type"))
        wanted_types = _names(self.arguments.get("node_type"))
        for t, r, _, _ in self.available:  # most common first
            if (r.casefold() in wanted_edges) != (t.casefold() in wanted_types):
                return r, t
        return None


def _names(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value.casefold()}
    if isinstance(value, list | tuple):
        return {v.casefold() for v in value if isinstance(v, str)}
    return set()


@dataclass(frozen=True, slots=True)
class ToolError:
    """A bad tool call, returned (never raised) so a model can read it and retry."""

    tool: str
    code: str  # an ``ErrorCode`` value, stored as a plain string
    message: str
    suggestions: tuple[str, ...] = field(default=())
    ok: Literal[False] = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", str(self.code))

    def to_dict(self) -> dict[str, Any]:
        err: dict[str, Any] = {"tool": self.tool, "code": self.code, "message": self.message}
        if self.suggestions:
            err["suggestions"] = list(self.suggestions)
        return {"error": err}

    def render(self) -> str:
        return printable(self._render())

    def _render(self) -> str:
        text = f"Error in {self.tool}: {self.message}"
        if self.suggestions:
            text += " Did you mean: " + ", ".join(self.suggestions) + "?"
        return text


ToolResult = SearchResult | ToolError


def grouped_lines(entries: Iterable[tuple[str, str]], sep: str = ", ") -> list[str]:
    """``(key, member)`` pairs as one line per key, ``key: member, member``; keys in
    the order their first member comes, members in their own order.

    Why: a neighborhood's lines repeat the same type and relation for every neighbor
    ("(movie) via directed_by(in)"), a large share of an observation's tokens, each read
    at prompt speed (``docs/decisions/answer-and-tools.md``)."""
    groups: dict[str, list[str]] = {}
    for key, member in entries:
        groups.setdefault(key, []).append(member)
    return [f"{key}: {sep.join(members)}" for key, members in groups.items()]


def relations_text(relations: Iterable[Relation]) -> str:
    """``type(direction)`` per relation, each cut to :data:`NAME_CHARS` (a free-text
    relation phrase can be a sentence; curated names are far shorter)."""
    return ", ".join(f"{cut(r.type, NAME_CHARS)}({r.direction})" for r in relations)


def _via(relations: Iterable[Relation], node_type: str) -> str:
    via = relations_text(relations)
    return f"{node_type} via {via}" if via else node_type


def _member(hit: NodeHit, ranked: bool) -> str:
    text = f"[{hit.index}] {cut(hit.name, NAME_CHARS)}"
    return f"{text} {hit.score:.2f}" if ranked else text


def _count(shown: int, total: int, noun: str) -> str:
    if shown == 0:
        return f"no {noun}s found"
    if shown == total:
        return f"{total} {noun}{'s' if total != 1 else ''}"
    return f"showing {shown} of {total:,} {noun}s"


def _filters(arguments: dict[str, Any]) -> str:
    parts = []
    for key in ("node_type", "edge_type", "query"):
        value = arguments.get(key)
        if value:
            if key == "query":
                parts.append(f"{key}={value!r}")
            else:
                names = value if isinstance(value, list | tuple) else [value]
                parts.append(f"{key}={', '.join(map(str, names))}")
    return f" [{'; '.join(parts)}]" if parts else ""


# -- the hop over a set --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MergedHit:
    """A neighbor reached from one or more of the centers."""

    hit: NodeHit
    centers: tuple[int, ...]
    #: Per center in ``centers``, the relations linking it to the neighbor (``hit``'s
    #: relations are their union): which edge each center reached it by, for evidence.
    via: tuple[tuple[Relation, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class MultiNeighborhoodResult:
    """The merged neighborhoods of ``centers``; ``total`` distinct neighbors before the cut."""

    tool: str
    arguments: dict[str, Any]
    merged: tuple[MergedHit, ...]
    total: int
    centers: tuple[NodeHit, ...]
    ok: Literal[True] = True
    center: None = None
    available: tuple[tuple[str, str, str, int], ...] = ()
    #: Lines shown after the heading: what an ``edge_type`` phrase matched.
    notes: tuple[str, ...] = ()

    @property
    def hits(self) -> tuple[NodeHit, ...]:
        return tuple(m.hit for m in self.merged)

    def to_dict(self) -> dict[str, Any]:
        return {
            "centers": [c.index for c in self.centers],
            "results": [
                {**m.hit.to_dict(with_relations=True), "centers": list(m.centers)}
                for m in self.merged
            ],
            "total": self.total,
        }

    def render(self, grouped: bool = False, shown: AbstractSet[int] = frozenset()) -> str:
        """As :meth:`SearchResult.render`."""
        return printable(self._render(grouped, shown))

    def _render(self, grouped: bool, shown: AbstractSet[int]) -> str:
        """One line per neighbor, or (``grouped``) per relations and type, each member
        with its centers; a neighbor with text shows its snippet, as a single node's
        neighborhood does (on a graph built from documents a passage reached by the
        hop is read by its text: without it the model saw titles only). Nodes without
        text (the curated graphs') show no snippet, so their lines are unchanged."""
        n = len(self.centers)
        head = (
            f"Neighbors of {n} node{'s' if n != 1 else ''} "
            f"({', '.join(f'[{c.index}]' for c in self.centers)}){_filters(self.arguments)}: "
            f"{_count(len(self.merged), self.total, 'distinct neighbor')}."
        )
        lines = [head, *self.notes]
        if self.available:
            lines.append(
                "No neighbor matches these filters. These nodes' neighbors are: "
                + "; ".join(f"{c} {t} via {r}({d})" for t, r, d, c in self.available[:8])
                + "."
            )
            fix = self._suggested_filters()
            if fix is not None:
                ids = [c.index for c in self.centers]
                lines.append(
                    f'Try search_in_neighborhood(node_index={ids}, edge_type="{fix[0]}", '
                    f'node_type="{fix[1]}").'
                )
        ranked = bool(self.arguments.get("query"))
        if grouped and not any(m.hit.snippet for m in self.merged):
            # Centers differ from neighbor to neighbor: said per member, after a "; ".
            lines += grouped_lines(
                (
                    (
                        _via(m.hit.relations, m.hit.type),
                        f"{_member(m.hit, ranked)} from {_from(m.centers, n)}",
                    )
                    for m in self.merged
                ),
                sep="; ",
            )
            return "\n".join(lines)
        for m in self.merged:
            h = m.hit
            line = f"[{h.index}] {h.name} ({h.type})"
            if ranked:
                line += f" score={h.score:.2f}"
            if h.relations:
                line += " via " + relations_text(h.relations)
            line += f" from {_from(m.centers, n)}"
            if h.snippet:  # as the single-node tool shows it: a passage's text is its facts
                line += _text(h, shown)
            lines.append(line)
        return "\n".join(lines)

    def _suggested_filters(self) -> tuple[str, str] | None:
        """Keep one of the two filters and fix the other, preferring to keep node_type:
        after a hop, the type asked for is what a model most often gets right (a 1.5B
        model asked for genres with has_tags; has_genre is the fix, not tags)."""
        wanted_edges = _names(self.arguments.get("edge_type"))
        wanted_types = _names(self.arguments.get("node_type"))
        for keep_type in (True, False):
            for t, r, _, _ in self.available:  # most common first
                if (t.casefold() in wanted_types) == keep_type and (
                    r.casefold() in wanted_edges
                ) != keep_type:
                    return r, t
        return None


#: What a node's line says in place of a text an earlier observation showed.
TEXT_SHOWN = " | (its text is shown above)"


def _text(hit: NodeHit, shown: AbstractSet[int]) -> str:
    """A line's text part: the snippet, or, once shown, a pointer to it."""
    return TEXT_SHOWN if hit.index in shown else f" | {hit.snippet}"


def _from(centers: Sequence[int], n: int) -> str:
    if len(centers) <= 3:
        return ", ".join(f"[{c}]" for c in centers)
    return f"{len(centers)} of {n}"
