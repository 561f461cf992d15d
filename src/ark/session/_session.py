"""The tool session: the state of one retrieval and the dispatch of its tool calls.

Every strategy (ARK's loop, GraphSearch's workflow), the MCP server and the oracle
policy of distillation go through a session, so the answer state, repeat detection
and error handling live here once. Aids that add lines to observations (the hints of
``ark-guided``) are observers a strategy composes (:class:`SessionObserver`,
``ToolSession(index, observers=[...])``): the session knows only that protocol, so a
new aid needs no change to the session. Observers return typed parts
(:mod:`ark.session._parts`), which the session renders into the observation and keeps
beside it. A call is a name and JSON arguments; the result is a :class:`CallOutcome` —
the observation a model reads plus a structured record. Nothing a caller sends makes it
raise.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any

from ark._coerce import as_int
from ark._safe import MAX_NESTING, cut, short_repr, too_deep
from ark.index import Index
from ark.llm import ToolCall
from ark.session._parts import Part
from ark.tools import (
    MAX_ADD,
    NAME_CHARS,
    ErrorCode,
    GraphTools,
    MultiNeighborhoodResult,
    SearchResult,
    ToolConfig,
    ToolError,
    ToolResult,
    allowed_arguments,
    argument_defaults,
    tool_specs,
)

ANSWER_TOOLS = ("add_to_answer", "finish")
#: Longest observation a model is shown; longer ones are cut and say so.
MAX_OBSERVATION_CHARS = 20_000


@dataclass
class CallOutcome:
    """What one tool call did: the observation text and its structured record."""

    observation: str
    ok: bool = True
    code: str | None = None
    nodes: list[int] = field(default_factory=list)
    finish: bool = False
    #: The typed result when a retrieval tool ran (its hits, center and relations).
    result: ToolResult | None = None
    duration_s: float = 0.0
    #: The nodes an ``add_to_answer`` call appended (recorded: evidence says who added
    #: each answer node, and when).
    added: list[int] | None = None
    #: What the observers added, as data (:class:`ark.session.Hint`, ``Note``), in the
    #: order rendered into ``observation``: read the calls a hint offers here.
    parts: list[Part] = field(default_factory=list)

    @property
    def center(self) -> int | None:
        """The explored node of a neighborhood call."""
        r = self.result
        return r.center.index if isinstance(r, SearchResult) and r.center else None

    @property
    def centers(self) -> list[int] | None:
        """The explored nodes of a hop over a set (recorded so evidence can name them)."""
        r = self.result
        return [c.index for c in r.centers] if isinstance(r, MultiNeighborhoodResult) else None

    def relations(self) -> list[list[dict[str, Any]]] | None:
        """Per returned node of a neighborhood call, the relations linking it to the
        center; after a hop over a set, each names the center it links
        (``{"type", "direction", "center"}``), since a node may be reached from several."""
        r = self.result
        if isinstance(r, MultiNeighborhoodResult):
            return [
                [
                    {**rel.to_dict(), "center": c}
                    for c, rels in zip(m.centers, m.via, strict=False)
                    for rel in rels
                ]
                for m in r.merged
            ]
        if not isinstance(r, SearchResult) or r.center is None:
            return None
        return [[rel.to_dict() for rel in h.relations] for h in r.hits]


def _error(observation: str, code: ErrorCode) -> CallOutcome:
    return CallOutcome(observation, ok=False, code=str(code))


def _names_key(value: Any) -> Any:
    if value is None or value == []:
        return None
    values = [value] if isinstance(value, str) else value
    if isinstance(values, list) and all(isinstance(v, str) for v in values):
        return sorted({v.strip().casefold() for v in values}) or None
    return value


def _signature(name: str, arguments: Mapping[str, Any]) -> str:
    """What makes two searches the same call."""
    return name + json.dumps(normalise_arguments(name, arguments), sort_keys=True, default=str)


def normalise_arguments(name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments with defaults filled and values in canonical form, so that calls
    that run the same search compare equal: ``"12"`` and ``12``, an omitted ``k`` and
    its default, ``"genre"`` and ``["Genre"]``, a blank query and none."""
    out: dict[str, Any] = {**argument_defaults(name), **arguments}
    if isinstance(out.get("node_index"), list):  # a hop over a set: order does not matter
        values = [as_int(v) for v in out["node_index"]]
        if all(v is not None for v in values):
            out["node_index"] = sorted(set(values))  # type: ignore[type-var]
            if len(out["node_index"]) == 1:
                out["node_index"] = out["node_index"][0]
    for key in ("node_index", "k"):
        if key in out and not isinstance(out[key], list):
            value = as_int(out[key])
            out[key] = value if value is not None else out[key]
    for key in ("node_type", "edge_type"):
        if key in out:
            out[key] = _names_key(out[key])
    if isinstance(out.get("query"), str):
        query = " ".join(out["query"].split())
        out["query"] = query if query or name == "search_in_graph" else None
    return {k: v for k, v in out.items() if v is not None}


def _part(line: Part | str | None) -> Part | None:
    """An observer's answer as a part: a bare string (an observer written before the
    parts) is a plain part with that text; ``""`` is none."""
    if isinstance(line, str):
        return Part(line) if line else None
    return line


class SessionObserver:
    """Subclass and override the hooks you need; each returns a part to append to the
    call's observation (:class:`ark.session.Hint`, :class:`ark.session.Note`), or
    ``None`` for none. The session renders the part into the observation
    (:meth:`ark.session.Part.render`) and keeps it in :attr:`CallOutcome.parts`.

    Hooks run after the session has updated its own state (``seen``, ``explored``,
    ``answer``), in the order the observers were given; each sees the session.
    """

    #: Nodes this aid wrote by index in its lines (a hint naming the question's
    #: nodes) that no result has shown: the model has read them, so a session that
    #: refuses unseen nodes (``ToolSession(refuse_unseen=True)``) lets it explore them.
    shown: Set[int] = frozenset()

    def after_search(
        self,
        session: ToolSession,
        name: str,
        arguments: Mapping[str, Any],
        result: SearchResult | MultiNeighborhoodResult,
        centers: list[int],
    ) -> Part | None:
        """After a retrieval call that ran (with or without hits; a tool error is not
        a search). ``centers``: the nodes a neighborhood call explored (empty after a
        global search). The part goes on a line of its own after the results."""
        return None

    def after_repeat(
        self, session: ToolSession, name: str, arguments: Mapping[str, Any]
    ) -> Part | None:
        """After a call the session refused as a repeat of an earlier one; the part
        continues the refusal's sentence."""
        return None

    def after_add(self, session: ToolSession, added: list[int]) -> Part | None:
        """After an ``add_to_answer`` that appended ``added`` (never empty); the part
        continues the call's report."""
        return None


class ToolSession:
    """One retrieval's state — nodes seen, the ordered answer, searches made — and the
    dispatch of named calls to the tools.

    ``answer_tools=False`` offers the retrieval tools only (an MCP client keeps its own
    answer); ``detect_repeats=False`` runs a repeated search again instead of pointing
    at the earlier one. ``observers`` append their lines to observations
    (:class:`~ark.session.SessionObserver`), in the order given: the one way to add aids
    such as the hints of ``ark-guided``
    (``observers=[ChainHints(index, question)]``), so the session never imports them.
    ``refuse_unseen=True`` refuses, without running it, a neighborhood call from a node
    index that no result nor observer line has shown (:meth:`unseen_centers`).
    ``texts_once=True``, for a session whose observations are one conversation: a node
    whose text an earlier observation showed is listed again by index and name, its
    text pointed to instead of printed (:data:`ark.tools.TEXT_SHOWN`).
    """

    def __init__(
        self,
        index: Index,
        *,
        tools: GraphTools | None = None,
        config: ToolConfig | None = None,
        answer_tools: bool = True,
        detect_repeats: bool = True,
        question: str | None = None,
        observers: Sequence[SessionObserver] = (),
        refuse_unseen: bool = False,
        texts_once: bool = False,
    ) -> None:
        #: The question this session serves, when the caller gave it.
        self.question = question
        #: Centers of neighborhood calls, in the order first explored.
        self.explored: list[int] = []
        self.index = index
        self.observers: list[SessionObserver] = list(observers)
        self.config = config or ToolConfig()
        self.tools = tools or GraphTools(index, phrase_encoder=self.config.phrase_encoder)
        self.specs = tool_specs(index.schema, self.config, answer_tools=answer_tools)
        self.allowed = allowed_arguments(self.specs)
        self.detect_repeats = detect_repeats
        self.refuse_unseen = refuse_unseen
        #: (index, name, type) of the first node of the latest search with results.
        self.last_hit: tuple[int, str, str] | None = None
        self.seen: set[int] = set()
        #: Nodes whose text an observation of this session showed: later ones list
        #: them by index and name alone (the text is in the conversation already).
        self.texts_shown: set[int] = set()
        self.texts_once = texts_once
        self.answer: list[int] = []
        self.finished = False
        self.step = 0
        self._warned_empty = False
        self._searches: dict[str, int] = {}  # normalised call -> step first made

    # -- calls ------------------------------------------------------------------------

    def run_reply(self, calls: Sequence[ToolCall]) -> list[CallOutcome]:
        """Run the calls of one model reply in order; calls after a successful
        ``finish`` are not run (their observation says so)."""
        outcomes = []
        for call in calls:
            if self.finished:
                outcomes.append(
                    _error(
                        f"Not run: finish was called earlier in this reply, so {call.name} "
                        "came after the search had ended.",
                        ErrorCode.AFTER_FINISH,
                    )
                )
                continue
            outcomes.append(self.call(call.name, call.arguments, call.raw_arguments))
        return outcomes

    def call(
        self, name: str, arguments: Mapping[str, Any] | None, raw_arguments: str = ""
    ) -> CallOutcome:
        """Run one call; every fault becomes an observation with its error code."""
        started = time.perf_counter()
        outcome = self._call(name, arguments, raw_arguments)
        if len(outcome.observation) > MAX_OBSERVATION_CHARS:
            outcome.observation = (
                outcome.observation[:MAX_OBSERVATION_CHARS]
                + f"\n(Observation cut at {MAX_OBSERVATION_CHARS:,} of "
                f"{len(outcome.observation):,} characters; ask for fewer results with k.)"
            )
        result = outcome.result
        if self.texts_once and outcome.ok and result is not None:
            # A node's text is shown once: later observations point to it.
            self.texts_shown.update(
                h.index
                for h in result.hits
                if h.snippet and f"| {h.snippet[:40]}" in outcome.observation
            )
        outcome.duration_s = time.perf_counter() - started
        return outcome

    def _call(
        self, name: str, arguments: Mapping[str, Any] | None, raw_arguments: str
    ) -> CallOutcome:
        if not isinstance(name, str) or name not in self.allowed:  # a list is unhashable
            offered = ", ".join(self.allowed)
            return _error(
                f"Error: there is no tool {short_repr(name, 60)}. Tools: {offered}.",
                ErrorCode.UNKNOWN_TOOL,
            )
        if isinstance(arguments, Mapping) and too_deep(arguments):
            return _error(
                f"Error in {name}: the arguments nest lists or objects more than "
                f"{MAX_NESTING} levels deep; send flat values.",
                ErrorCode.BAD_ARGUMENT,
            )
        if not isinstance(arguments, Mapping):
            raw = raw_arguments or short_repr(arguments, 200)
            return _error(
                f"Error in {name}: the arguments are not a JSON object: {short_repr(raw, 200)}.",
                ErrorCode.BAD_ARGUMENT,
            )
        unknown = set(arguments) - self.allowed[name]
        if unknown:
            return _error(
                f"Error in {name}: unknown argument(s) {short_repr(sorted(unknown))}; "
                f"this tool takes {sorted(self.allowed[name])}.",
                ErrorCode.BAD_ARGUMENT,
            )
        if name == "finish":
            return self.finish()
        if name == "add_to_answer":
            return self.add_to_answer(arguments.get("node_indices"))
        return self._search(name, arguments)

    def unseen_centers(self, name: str, arguments: Mapping[str, Any]) -> CallOutcome | None:
        """The refusal of a ``search_in_neighborhood`` call whose ``node_index`` names a
        node that no result (nor an observer's line) has shown, else None.

        Why: the paper's agent adds only nodes it has seen, and it explores from the
        nodes a search returned (SPEC §3: "multi-hop = calling it again on a returned
        node"); an index it never saw is a number read from elsewhere. On a graph built
        from documents a 1.5B model took the counts of "These nodes' neighbors are: 334
        passage via mentions(in); 58 entity via …" for indices, explored
        ``[334, 58, 23, 10, …]`` and read the neighbors of nodes it knew nothing of as
        if they were its own. Refused, with what the indices are, the step is not lost
        to a result about strangers. Nothing is run, so the session records nothing."""
        if name != "search_in_neighborhood":
            return None
        value = arguments.get("node_index")
        values = value if isinstance(value, list) else [value]
        shown = set().union(*(o.shown for o in self.observers))
        unseen = [
            i
            for i in dict.fromkeys(as_int(v) for v in values)
            if i is not None and i not in self.seen and i not in shown
        ]
        if not unseen:
            return None
        nodes = "node" if len(unseen) == 1 else "nodes"
        hit = self.last_hit
        like = f", as in [{hit[0]}] {cut(hit[1], 60)} ({hit[2]})" if hit else ""
        return _error(
            f"Error in search_in_neighborhood: not run: {nodes} {unseen} never appeared "
            "in a result. A node's index is the number in square brackets before its name"
            f"{like}; the other numbers in results are counts and scores. Explore from a "
            "node listed in the results above.",
            ErrorCode.UNSEEN_NODE,
        )

    def made(self, name: str, arguments: Mapping[str, Any]) -> bool:
        """Whether this session would refuse the search ``name(arguments)`` as a repeat
        of one made before: a hint never offers such a call."""
        return self.detect_repeats and _signature(name, arguments) in self._searches

    def _search(self, name: str, arguments: Mapping[str, Any]) -> CallOutcome:
        refused = self.unseen_centers(name, arguments) if self.refuse_unseen else None
        if refused is not None:
            return refused
        signature = _signature(name, arguments)
        if self.detect_repeats and signature in self._searches:
            text = (
                f"You already made this exact {name} call at step "
                f"{self._searches[signature] + 1}; its result is above and has not changed. "
                "Use a different node, filter or query, add the nodes that answer the "
                "question, or finish."
            )
            parts = [_part(o.after_repeat(self, name, arguments)) for o in self.observers]
            kept = [p for p in parts if p is not None]
            repeat = _error(" ".join([text, *(p.render() for p in kept)]), ErrorCode.REPEATED_CALL)
            repeat.parts = kept
            return repeat
        self._searches[signature] = self.step
        multi = (
            name == "search_in_neighborhood"
            and self.config.multi_neighborhood
            and isinstance(arguments.get("node_index"), list)
        )
        if multi:
            result = self.tools.neighborhood_over_set(
                arguments["node_index"],
                **{k: v for k, v in arguments.items() if k != "node_index"},
            )
        else:
            result = self.tools.call(name, arguments)
        if isinstance(result, ToolError):
            return CallOutcome(result.render(), ok=False, code=result.code, result=result)
        nodes = [h.index for h in result.hits]
        self.seen.update(nodes)
        if result.hits:
            self.last_hit = (result.hits[0].index, result.hits[0].name, result.hits[0].type)
        centers = [c.index for c in getattr(result, "centers", ())]
        if result.center is not None:
            centers = [result.center.index]
        self.seen.update(centers)
        self.explored += [c for c in centers if c not in self.explored]
        observation = result.render(
            grouped=self.config.grouped_observations,
            shown=self.texts_shown if self.texts_once else frozenset(),
        )
        parts = [
            _part(o.after_search(self, name, arguments, result, centers))  # type: ignore[arg-type]
            for o in self.observers
        ]
        kept = [p for p in parts if p is not None]
        observation = "\n".join([observation, *(p.render() for p in kept)])
        return CallOutcome(observation, nodes=nodes, result=result, parts=kept)  # type: ignore[arg-type]

    # -- the answer ----------------------------------------------------------------------

    def finish(self) -> CallOutcome:
        """End the retrieval; an empty answer is questioned once, then accepted."""
        if not self.answer and not self._warned_empty:
            self._warned_empty = True
            return _error(
                "Your answer list is empty. Add the answer nodes with add_to_answer, or "
                "call finish again to end with an empty answer.",
                ErrorCode.EMPTY_ANSWER,
            )
        self.finished = True
        return CallOutcome(f"Finished with {len(self.answer)} node(s) in the answer.", finish=True)

    def add_to_answer(self, raw: object) -> CallOutcome:
        """Append seen nodes to the answer, in order; says what was added and what not."""
        answer = self.answer
        values = raw if isinstance(raw, list) else [raw]
        if raw is None or not values:
            return _error(
                "Error in add_to_answer: node_indices must be a non-empty list of integers.",
                ErrorCode.BAD_ARGUMENT,
            )
        if len(values) > MAX_ADD:
            return _error(
                f"Error in add_to_answer: {len(values)} node indices given, at most "
                f"{MAX_ADD} per call. Add the best {MAX_ADD} first, then call again.",
                ErrorCode.BAD_ARGUMENT,
            )
        added, already, unseen, invalid = [], [], [], []
        for v in values:
            node = as_int(v)
            if node is None:
                invalid.append(v)
            elif node not in self.seen:
                unseen.append(node)
            elif node in answer:
                already.append(node)
            else:
                answer.append(node)
                added.append(node)
        g = self.index.graph
        sentences = []
        if added:
            sentences.append(
                "Added " + ", ".join(f"[{n}] {cut(g.name(n), NAME_CHARS)}" for n in added) + "."
            )
        if already:
            sentences.append(f"Already in the answer: {already}.")
        if unseen:
            sentences.append(
                f"Not added, never returned by a search: {unseen}. Only nodes shown in tool "
                "results can be added."
            )
        if invalid:
            sentences.append(f"Not node indices: {short_repr(invalid)}.")
        sentences.append(f"The answer has {len(answer)} node(s).")
        notes = [_part(o.after_add(self, added)) for o in (self.observers if added else ())]
        kept = [p for p in notes if p is not None]
        ok = not unseen and not invalid
        code = None if ok else str(ErrorCode.UNSEEN_NODE if unseen else ErrorCode.BAD_ARGUMENT)
        text = " ".join([*sentences, *(p.render() for p in kept)])
        return CallOutcome(text, ok=ok, code=code, added=added, parts=kept)
