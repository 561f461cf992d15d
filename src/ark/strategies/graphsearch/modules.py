"""GraphSearch's six modules over ARK's two tools (arXiv 2509.22009, SPEC §8).

Query decomposition, query grounding, context refinement, logic drafting, evidence
verification and query expansion, and the final answer; plus the retrieval each step
makes in its channel on a curated graph (semantic: ``search_in_graph`` over node text;
relational: find the triple's known end, then ``search_in_neighborhood`` along the
triple's relation; a graph built from documents has its own, in ``documents.py``).
Each model-facing
module makes one call through ``ask`` (the strategy records it as a step) and turns
the JSON reply into checked values: a reply that does not fit degrades to "nothing
found" rather than raising.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Awaitable, Callable
from dataclasses import astuple, dataclass, field
from typing import Any

from ark.graph import Schema
from ark.session import CallOutcome, ToolSession
from ark.strategies.graphsearch import prompts

#: One model call of a module: (module, system, user, schema, max_tokens) -> parsed JSON.
Ask = Callable[[str, str, str, dict[str, Any], int], Awaitable[Any]]

SEMANTIC, RELATIONAL = "semantic", "relational"
_REF = re.compile(r"#(\d+)")
SEMANTIC_K = 10
ANCHOR_K = 5
MAX_ANCHORS = 5
MAX_SHOWN = 30
NAMES_PER_REF = 3


@dataclass(frozen=True)
class Triple:
    subject: str
    relation: str
    object: str

    def __str__(self) -> str:
        return f"({self.subject}, {self.relation}, {self.object})"


@dataclass
class SubQuery:
    """One atomic sub-query of one channel; ``#number`` names its answer. (The
    trajectory lists them under ``extra["graphsearch"]["steps"]``, and the prompts call
    one "Step S1"; a step of the trajectory itself is a model call,
    :class:`ark.trajectory.StepRecord`.)"""

    channel: str
    number: int
    text: str
    triple: Triple | None = None
    origin: str = "decomposition"
    grounded: str | None = None
    nodes: list[int] = field(default_factory=list)  # the nodes refinement kept
    #: Context refinement's summary of what was retrieved and the sub-answer in words
    #: (on a curated graph, where refinement only keeps nodes, the kept nodes' names).
    summary: str = ""
    answer: str = ""

    @property
    def label(self) -> str:
        return f"{self.channel[0].upper()}{self.number}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "channel": self.channel,
            "number": self.number,
            "text": self.text,
            "grounded": self.grounded,
            "origin": self.origin,
            "nodes": self.nodes,
            "triple": None if self.triple is None else list(astuple(self.triple)),
            "summary": self.summary,
            "answer": self.answer,
        }


def references(text: str) -> list[int]:
    return [int(m) for m in _REF.findall(text)]


def map_relation(name: str, relations: list[str]) -> str | None:
    """A relation name as the graph spells it (exact, case-blind, or the closest)."""
    if name in relations:
        return name
    folded = {r.casefold().replace(" ", "_"): r for r in relations}
    key = name.strip().casefold().replace(" ", "_")
    if key in folded:
        return folded[key]
    close = difflib.get_close_matches(key, list(folded), n=1, cutoff=0.6)
    return folded[close[0]] if close else None


# -- 1. query decomposition (and 6. expansion, which writes more of the same) ----------


def parse_plan(
    data: Any,
    relations: list[str],
    first: tuple[int, int] = (1, 1),
    origin: str = "decomposition",
    phrases: bool = False,
) -> tuple[list[SubQuery], list[SubQuery]]:
    """The semantic and relational steps of a plan reply, numbered from ``first``;
    blank questions and triples whose relation maps to none of the graph's are dropped
    (so numbering follows what the model wrote, and a dangling #N grounds to nothing).
    With ``phrases`` (a graph whose relations are free-text phrases), the relation is
    kept as written: it is matched to the graph's phrases by words, not by name."""
    if not isinstance(data, dict):
        return [], []
    questions, triples = data.get(SEMANTIC), data.get(RELATIONAL)
    questions = questions if isinstance(questions, list) else []
    triples = triples if isinstance(triples, list) else []
    semantic = [
        SubQuery(SEMANTIC, first[0] + i, " ".join(q.split()), origin=origin)
        for i, q in enumerate(questions)
        if isinstance(q, str) and q.strip()
    ]
    relational = []
    for i, t in enumerate(triples):
        if not isinstance(t, dict):
            continue
        s, o = str(t.get("subject") or "").strip(), str(t.get("object") or "").strip()
        raw = " ".join(str(t.get("relation") or "").split())
        rel = (raw or None) if phrases else map_relation(raw, relations)
        if not s or not o or rel is None:
            continue
        triple = Triple(s, rel, o)
        relational.append(SubQuery(RELATIONAL, first[1] + i, str(triple), triple, origin=origin))
    return semantic, relational


async def decompose(
    ask: Ask, question: str, schema: Schema, free: bool = False, phrases: bool = False
) -> tuple[list[SubQuery], list[SubQuery]]:
    """The plan; ``free``: relations asked for as phrases (see
    :func:`prompts.free_relations`), ``phrases``: kept as phrases (see :func:`parse_plan`)."""
    relations = schema.relation_names
    data = await ask(
        "query_decomposition",
        prompts.decomposition_prompt(schema, free),
        f"Question: {question}",
        prompts.plan_schema(relations, free=free),
        320,
    )
    return parse_plan(data, relations, phrases=phrases)


async def expand(
    ask: Ask,
    question: str,
    schema: Schema,
    evidence: str,
    missing: str,
    first: tuple[int, int],
    free: bool = False,
    phrases: bool = False,
) -> tuple[list[SubQuery], list[SubQuery]]:
    relations = schema.relation_names
    data = await ask(
        "query_expansion",
        prompts.expansion_prompt(schema, min(first), free),
        f"Question: {question}\n\nEvidence so far:\n{evidence}\n\nMissing: {missing or '?'}",
        prompts.plan_schema(relations, prompts.MAX_NEW_STEPS, free),
        240,
    )
    return parse_plan(data, relations, first, origin="expansion", phrases=phrases)


# -- 2. query grounding ------------------------------------------------------------------


def ground_text(text: str, answers: dict[int, list[str]], own: int) -> str | None:
    """``text`` with each earlier ``#N`` replaced by the names of step N's answer;
    None when a referenced step found nothing (the model is asked instead). The
    step's own ``#number`` (its unknown) is left in place."""
    missing = False

    def sub(m: re.Match[str]) -> str:
        nonlocal missing
        n = int(m.group(1))
        if n >= own:
            return m.group(0)
        names = answers.get(n) or []
        if not names:
            missing = True
            return m.group(0)
        return ", ".join(names[:NAMES_PER_REF])

    out = _REF.sub(sub, text)
    return None if missing else out


async def ground(ask: Ask, step: SubQuery, history: str, question: str = "") -> str:
    """The model's grounding of a step whose placeholder deterministic grounding could
    not fill (the earlier step it names found nothing). The question is shown too: an
    empty earlier step leaves the question as the only clue to what #N stands for."""
    data = await ask(
        "query_grounding",
        prompts.GROUNDING_SYSTEM,
        (f"Question: {question}\n\n" if question else "")
        + f"Earlier steps and what they found:\n{history or '(nothing)'}\n\nStep: {step.text}",
        prompts.GROUNDING_SCHEMA,
        64,
    )
    text = data.get("text") if isinstance(data, dict) else None
    return " ".join(text.split()) if isinstance(text, str) and text.strip() else ""


# -- retrieval in the two channels ------------------------------------------------------

Call = tuple[str, dict[str, Any], CallOutcome]


def retrieve_semantic(session: ToolSession, query: str) -> list[Call]:
    """Semantic channel: global BM25 over node text for the grounded question."""
    args: dict[str, Any] = {"query": query, "k": SEMANTIC_K}
    return [("search_in_graph", args, session.call("search_in_graph", args))]


def _anchors(session: ToolSession, name: str, calls: list[Call]) -> list[int]:
    """Nodes standing for an entity name: exact name matches among the top hits, else
    the top hit."""
    args: dict[str, Any] = {"query": name.strip("[] "), "k": ANCHOR_K}
    outcome = session.call("search_in_graph", args)
    calls.append(("search_in_graph", args, outcome))
    if not outcome.nodes:
        return []
    g = session.index.graph
    wanted = name.strip("[] ").casefold()
    exact = [n for n in outcome.nodes if g.name(n).casefold() == wanted]
    return exact[:MAX_ANCHORS] or outcome.nodes[:1]


def has_anchor(step: SubQuery, answers: dict[int, list[int]]) -> bool:
    """Whether the step's triple has an end to start from: a name, or an earlier step's
    placeholder whose step found nodes."""
    assert step.triple is not None
    for end in (step.triple.subject, step.triple.object):
        refs = references(end)
        if not refs or any(0 < r < step.number and answers.get(r) for r in refs):
            return True
    return False


def retrieve_relational(
    session: ToolSession, step: SubQuery, answers: dict[int, list[int]], grounded_name: str | None
) -> list[Call]:
    """Relational channel: the triple's known end (an earlier step's nodes, or an entity
    found by name), then its neighbors along the triple's relation, ranked by the other
    end when that end is a name too."""
    assert step.triple is not None
    t = step.triple
    calls: list[Call] = []
    ends = [t.subject, t.object]
    refs = [references(e) for e in ends]
    # The anchor end: one naming an earlier step's answer, else one with no placeholder.
    side = next((i for i in (0, 1) if any(0 < r < step.number for r in refs[i])), None)
    if side is None:
        side = next((i for i in (0, 1) if not refs[i]), 0)
    other = ends[1 - side]
    earlier = [r for r in refs[side] if 0 < r < step.number]
    if earlier and answers.get(earlier[0]):
        anchors = answers[earlier[0]][:MAX_ANCHORS]
    else:
        name = grounded_name or ("" if refs[side] else ends[side])
        # No name from grounding: the triple's named end, if it has one, rather than
        # no search at all.
        name = name or next((e for e in ends if not references(e)), "")
        anchors = _anchors(session, name, calls) if name.strip("[] ") else []
    query = None if references(other) else other
    found = False
    for node in anchors:
        args: dict[str, Any] = {"node_index": node, "edge_type": t.relation}
        if query:
            args["query"] = query
        outcome = session.call("search_in_neighborhood", args)
        calls.append(("search_in_neighborhood", args, outcome))
        found = found or bool(outcome.nodes)
    if anchors and not found:  # the relation filter kept nothing: rank the whole neighborhood
        args = {"node_index": anchors[0], "query": query or t.relation.replace("_", " ")}
        calls.append(("search_in_neighborhood", args, session.call("search_in_neighborhood", args)))
    return calls


# -- 3. context refinement ---------------------------------------------------------------


def candidates_of(calls: list[Call]) -> list[int]:
    """Nodes returned by a step's retrieval, in order, without the anchors' searches
    when a neighborhood was explored (the anchor is the question's entity, not an answer)."""
    explored = any(name == "search_in_neighborhood" for name, _, _ in calls)
    seen: dict[int, None] = {}
    for name, _, outcome in calls:
        if explored and name == "search_in_graph":
            continue
        for n in outcome.nodes:
            seen.setdefault(n, None)
    return list(seen)[:MAX_SHOWN]


async def refine(
    ask: Ask, question: str, step: SubQuery, query: str, calls: list[Call]
) -> list[int]:
    """The model keeps the retrieved nodes that answer the step (only those it was shown)."""
    candidates = candidates_of(calls)
    if not candidates:
        return []
    shown = "\n\n".join(o.observation for _, _, o in calls if o.nodes)
    data = await ask(
        "context_refinement",
        prompts.REFINEMENT_SYSTEM,
        f"Question: {question}\nStep {step.label}: {query}\n\nSearch results:\n{shown}",
        prompts.refinement_schema(candidates),
        160,
    )
    keep = data.get("keep") if isinstance(data, dict) else None
    out = _chosen(keep, candidates)
    if not out and step.channel == RELATIONAL:
        # A small model often keeps nothing of a correct neighborhood; nodes reached
        # along the triple's own relation already fit it, so they stay (a departure).
        out = related_nodes(calls)
    return out


async def read(
    ask: Ask, question: str, step: SubQuery, query: str, shown: str, candidates: list[int]
) -> tuple[str, str, list[int]]:
    """Context refinement over passages and triples (a graph built from documents):
    the summary, the sub-answer in words, and the nodes kept (only those shown count).
    A reply that does not fit keeps nothing and says nothing."""
    if not candidates:
        return "", "", []
    data = await ask(
        "context_refinement",
        prompts.READING_SYSTEM,
        f"Question: {question}\nStep {step.label}: {query}\n\nSearch results:\n{shown}",
        prompts.reading_schema(candidates),
        256,
    )
    if not isinstance(data, dict):
        return "", "", []
    summary, answer = data.get("summary"), data.get("answer")
    return (
        " ".join(summary.split()) if isinstance(summary, str) else "",
        " ".join(answer.split()) if isinstance(answer, str) else "",
        _chosen(data.get("keep"), candidates),
    )


def known(answer: str) -> bool:
    """Whether a sub-answer names something (not empty, not the "unknown" the reading
    prompt asks for when the results do not say)."""
    return bool(answer.strip()) and answer.strip(" .").casefold() != "unknown"


def _chosen(raw: Any, candidates: list[int]) -> list[int]:
    allowed = set(candidates)
    out: list[int] = []
    for n in raw if isinstance(raw, list) else []:
        if isinstance(n, int) and not isinstance(n, bool) and n in allowed and n not in out:
            out.append(n)
    return out


def related_nodes(calls: list[Call]) -> list[int]:
    """Nodes returned by relation-filtered neighborhood calls."""
    seen: dict[int, None] = {}
    for name, args, outcome in calls:
        if name == "search_in_neighborhood" and args.get("edge_type"):
            for n in outcome.nodes:
                seen.setdefault(n, None)
    return list(seen)[:MAX_SHOWN]


# -- 4. logic drafting and 5. evidence verification ---------------------------------------


async def draft(
    ask: Ask, question: str, evidence: str, candidates: list[int]
) -> tuple[str, list[int]]:
    data = await ask(
        "logic_drafting",
        prompts.DRAFTING_SYSTEM,
        f"Question: {question}\n\nEvidence:\n{evidence or '(nothing found)'}",
        prompts.drafting_schema(candidates),
        320,
    )
    if not isinstance(data, dict):
        return "", []
    chain = data.get("chain") if isinstance(data.get("chain"), str) else ""
    return chain, _chosen(data.get("answer"), candidates)


@dataclass(frozen=True)
class Verdict:
    """Evidence verification's reply, parsed strictly: ``accepted`` only when the
    verdict is exactly "yes" (case and surrounding space aside) — "yes, but ..." or a
    reply that is not the JSON asked for is no acceptance (the public code accepts any
    reply *containing* "yes"). ``valid``: the verdict was "yes" or "no"."""

    accepted: bool
    missing: str
    raw: Any
    valid: bool


def parse_verdict(data: Any) -> Verdict:
    if not isinstance(data, dict):
        return Verdict(False, "", None, False)
    raw = data.get("verdict")
    word = raw.strip().casefold() if isinstance(raw, str) else None
    missing = data.get("missing") if isinstance(data.get("missing"), str) else ""
    return Verdict(word == "yes", missing, raw, word in ("yes", "no"))


async def verify(ask: Ask, question: str, evidence: str, chain: str, answer: str) -> Verdict:
    """The judge's verdict on the drafted answer ("yes" means the evidence supports it
    and ends the loop, as in the paper; the public code expands on "yes")."""
    data = await ask(
        "evidence_verification",
        prompts.VERIFICATION_SYSTEM,
        f"Question: {question}\n\nEvidence:\n{evidence or '(nothing found)'}\n\n"
        f"Chain: {chain or '(none)'}\nAnswer: {answer or '(empty)'}",
        prompts.VERIFICATION_SCHEMA,
        96,
    )
    return parse_verdict(data)
