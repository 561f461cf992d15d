"""The answer read in steps: the question split into lookups, each answered from the
few retrieved passages that fit it, the last lookup's answer the answer.

Why: a multi-hop question asks the reader to chain facts across passages, and a small
local model does not, even when the passages hold every fact of the chain; asked to
write the chained facts first, it does worse (``docs/decisions/answer-and-tools.md``).
Split into lookups of one fact each, every read is a one-hop question over two or
three passages, which a small model does answer.

The steps, each one JSON reply under a schema:

1. **Plan**: the model splits the question into at most :data:`MAX_LOOKUPS` lookups, a
   later one naming an earlier one's answer as ``#1``, ``#2`` (a one-fact question is
   one lookup).
2. **Look up**, in order: ``#k`` is replaced by lookup k's answer; the given nodes are
   ranked for the lookup by BM25 with the index's statistics (ties keep the given
   order) and the first :data:`NODES_PER_LOOKUP` are shown; the model answers the
   lookup in a few words, citing what it used, or says ``unknown``.
3. **Answer**: the last lookup's answer, citing every lookup's citations (the chain's
   evidence). When the plan is one lookup, is not JSON, is not a chain (a lookup after
   the first that names no earlier answer, :func:`chained`), or the last lookup is
   unknown, the one-call writer answers from all the given nodes instead, so a reading
   in steps never has less to go on than the one-call reading.

Only the given nodes' text is read, as by the one-call writer: the lookups re-rank what
retrieval returned; they do not search the graph again. Each lookup's question, answer
and citations are kept in :attr:`Answer.steps`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ark._safe import cut
from ark.answer._write import (
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_NODE_CHARS,
    MAX_QUESTION_CHARS,
    Answer,
    Edge,
    _check_budget,
    _citations,
    _evidence,
    _graph,
    _known_nodes,
    _name,
    checked,
    write_answer,
)
from ark.errors import ArkError
from ark.graph import Graph
from ark.index import Index, score_nodes
from ark.llm import ChatModel, LLMError, Message

#: Most lookups a plan may have (a multi-hop question chains two to four facts).
MAX_LOOKUPS = 4
#: Given nodes shown to each lookup, the best for it first.
NODES_PER_LOOKUP = 3
#: Longest lookup text kept (characters).
MAX_LOOKUP_CHARS = 200
#: Longest lookup answer kept (characters; the lookup schema's bound).
MAX_LOOKUP_ANSWER = 120
#: A lookup's answer meaning "the passages do not say".
UNKNOWN = "unknown"

PLAN_SYSTEM = (
    "You split a question into the simple lookups that answer it, in the order they "
    "must be made: first the fact about the entity the question names, then each fact "
    "that builds on the one before, and last what the question asks. Each lookup asks "
    "for one fact. Lookup N's answer is called #N; a later lookup writes #N where it "
    "needs that answer. A question that asks for one fact is one lookup. Reply with "
    "JSON only.\n"
    'Example: "Who is the spouse of the director of Titanic?" gives {"lookups": '
    '["Who directed Titanic?", "Who is the spouse of #1?"]}.\n'
    'Example: "When did the museum open in the city where Anna Berg was born?" gives '
    '{"lookups": ["Where was Anna Berg born?", "When did the museum in #1 open?"]}.'
)

LOOKUP_SYSTEM = (
    "You answer one simple question using only the passages given, each shown as "
    "[index] name (type) followed by its text. Answer with the shortest phrase that "
    "answers it (a name, a date, a number, a few words; not a sentence) and cite the "
    f'indices it comes from. If the passages do not say, answer "{UNKNOWN}". Reply '
    'with JSON only: {"answer": "...", "citations": [12]}.'
)


def plan_schema(max_lookups: int = MAX_LOOKUPS) -> dict[str, Any]:
    """The plan's reply: a list of one to ``max_lookups`` lookups. Whether they chain
    is checked after the reply (:func:`chained`), not in the schema: a grammar that
    forbids closing a later lookup before it names an earlier answer sends the small
    model past the quote it wanted to write, and the reply runs to the token limit
    (``docs/decisions/answer-and-tools.md``)."""
    return {
        "type": "object",
        "properties": {
            "lookups": {
                "type": "array",
                "items": {"type": "string", "maxLength": MAX_LOOKUP_CHARS},
                "minItems": 1,
                "maxItems": max_lookups,
            }
        },
        "required": ["lookups"],
    }


LOOKUP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "maxLength": MAX_LOOKUP_ANSWER},
        "citations": {"type": "array", "items": {"type": "integer"}, "maxItems": 5},
    },
    "required": ["answer", "citations"],
}

_REF = re.compile(r"#(\d+)")


def fill(lookup: str, answers: Sequence[str]) -> str:
    """``lookup`` with each ``#k`` (k an earlier lookup) replaced by its answer; a
    reference to no earlier lookup is left as written."""

    def sub(m: re.Match[str]) -> str:
        k = int(m.group(1))
        return answers[k - 1] if 0 < k <= len(answers) else m.group(0)

    return _REF.sub(sub, lookup)


def rank_for(index: Index | Graph, text: str, nodes: Sequence[int]) -> list[int]:
    """``nodes`` best first for ``text`` by BM25 with the index's statistics (what a
    global search for ``text`` scores them); equal scores keep the given order. A
    bare graph (no index) keeps the given order."""
    bm25 = getattr(index, "bm25", None)
    order = list(dict.fromkeys(int(n) for n in nodes))
    if bm25 is None or not order:
        return order
    scores = score_nodes(bm25, bm25.query_terms(text), order)
    ranked = sorted(range(len(order)), key=lambda i: (-scores[i], i))
    return [order[i] for i in ranked]


async def _ask(
    model: ChatModel,
    system: str,
    user: str,
    schema: dict[str, Any],
    max_tokens: int,
    seed: int | None,
    usage: list[int],
) -> Any:
    """One greedy call; its parsed reply (None when not JSON). Adds the call's tokens
    to ``usage`` ([prompt, completion])."""
    completion = await model.complete(
        [Message(role="system", content=system), Message(role="user", content=user)],
        [],
        temperature=0.0,
        max_tokens=max_tokens,
        seed=seed,
        response_schema=schema,
    )
    usage[0] += completion.usage.prompt_tokens
    usage[1] += completion.usage.completion_tokens
    return completion.data


def _plan(data: Any, max_lookups: int) -> list[str]:
    """The plan's lookups (stripped, non-empty, at most ``max_lookups``), or []."""
    if not isinstance(data, dict) or not isinstance(data.get("lookups"), list):
        return []
    lookups = data["lookups"][: 4 * max_lookups]  # a reply may list thousands
    out = [
        " ".join(s[: 4 * MAX_LOOKUP_CHARS].split())[:MAX_LOOKUP_CHARS]
        for s in lookups
        if isinstance(s, str)
    ]
    return [s for s in out if s][:max_lookups]


def chained(lookups: Sequence[str]) -> bool:
    """Whether every lookup after the first builds on an earlier one (names some #k,
    k before it). A plan that does not is a list of the question's parts in its
    surface order, not a chain: the 1.5B split "the currency before the Euro in the
    country Signmark is from" into the currency first, then the country, and answered
    the last lookup's entity. Such a plan is not read in steps."""
    for i, lookup in enumerate(lookups[1:], start=2):
        if not any(0 < int(k) < i for k in _REF.findall(lookup)):
            return False
    return True


async def write_answer_in_steps(
    model: ChatModel,
    question: str,
    index_or_graph: Index | Graph,
    nodes: Sequence[int],
    *,
    edges: Sequence[Edge] = (),
    max_lookups: int = MAX_LOOKUPS,
    nodes_per_lookup: int = NODES_PER_LOOKUP,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_node_chars: int = DEFAULT_MAX_NODE_CHARS,
    max_tokens: int = 300,
    temperature: float = 0.0,
    seed: int | None = 0,
) -> Answer:
    """``model``'s short answer to ``question`` from the text of ``nodes``, read in
    lookups (see the module docstring); the same contract as
    :func:`ark.answer.write_answer`: citations only among the nodes shown, an
    unanswered :class:`Answer` saying why instead of an exception, a node outside the
    graph an :class:`~ark.errors.ArkError`. ``temperature`` applies to the fallback
    one-call reading; the plan and the lookups are greedy."""
    _check_budget(max_chars, max_node_chars)
    if max_lookups < 1 or nodes_per_lookup < 1:
        raise ArkError("max_lookups and nodes_per_lookup must be at least 1")
    graph = _graph(index_or_graph)
    pool = _known_nodes(graph, nodes)
    options: dict[str, Any] = {
        "edges": edges,
        "max_chars": max_chars,
        "max_node_chars": max_node_chars,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "seed": seed,
    }
    if not pool:
        return await write_answer(model, question, index_or_graph, pool, **options)
    started = time.perf_counter()
    usage = [0, 0]
    steps: list[dict[str, Any]] = []

    async def one_call(why: str) -> Answer:
        answer = await write_answer(model, question, index_or_graph, pool, **options)
        return replace(
            answer,
            steps=[*steps, {"fallback": why}],
            prompt_tokens=answer.prompt_tokens + usage[0],
            completion_tokens=answer.completion_tokens + usage[1],
            latency_s=round(time.perf_counter() - started, 4),
        )

    q = question if len(question) <= MAX_QUESTION_CHARS else question[:MAX_QUESTION_CHARS]
    try:
        plan = plan_schema(max_lookups)
        data = await _ask(
            model, PLAN_SYSTEM, f"Question: {q}", plan, 40 + 60 * max_lookups, seed, usage
        )
    except LLMError as exc:
        return await one_call(f"the plan failed: {exc}")
    lookups = _plan(data, max_lookups)
    if len(lookups) < 2:
        return await one_call("one lookup" if lookups else "no plan in the reply")
    if not chained(lookups):
        steps.append({"plan": lookups})
        return await one_call("the lookups do not build on each other")
    answers: list[str] = []
    cited: list[int] = []
    seen: list[int] = []
    dropped = chars = 0
    for lookup in lookups:
        text = cut(fill(lookup, answers), 2 * MAX_LOOKUP_CHARS)
        shown = rank_for(index_or_graph, text, pool)[:nodes_per_lookup]
        ev = _evidence(graph, shown, (), max_chars, max_node_chars)
        user = f"Question: {text}\n\nPassages:\n{ev.text}"
        try:
            data = await _ask(model, LOOKUP_SYSTEM, user, LOOKUP_SCHEMA, 80, seed, usage)
        except LLMError as exc:
            return await one_call(f"a lookup failed: {exc}")
        said = data.get("answer") if isinstance(data, dict) else None
        # Held to the schema's length here too (a server may ignore it): a lookup's
        # answer is filled into the next lookup's prompt (issue 67).
        said = " ".join(said[: 4 * MAX_LOOKUP_ANSWER].split()) if isinstance(said, str) else ""
        said = cut(said, MAX_LOOKUP_ANSWER)
        raw = data.get("citations") if isinstance(data, dict) else None
        got, bad = _citations(raw, ev.citable)
        dropped += bad
        seen += [n for n in ev.shown if n not in seen]
        chars += len(ev.text)
        known = bool(said) and said.casefold().strip(" .") != UNKNOWN
        steps.append({"lookup": text, "answer": said, "citations": got, "shown": ev.shown})
        answers.append(said if known else UNKNOWN)
        cited += [n for n in got if n not in cited]
    if answers[-1] == UNKNOWN:
        return await one_call("the last lookup is unknown")
    answer = Answer(
        answers[-1],
        cited,
        True,
        "answered",
        nodes=seen,
        dropped_citations=dropped,
        evidence_chars=chars,
        model=_name(model),
        prompt_tokens=usage[0],
        completion_tokens=usage[1],
        latency_s=round(time.perf_counter() - started, 4),
        steps=steps,
    )
    return checked(answer, question, index_or_graph)


#: The answer writers by name: ``one`` (one call over every node) and ``steps``
#: (:func:`write_answer_in_steps`). Both take the same arguments.
WRITERS = {"one": write_answer, "steps": write_answer_in_steps}

#: The writer ``ark.answer.answer_question``, ``ark ask --answer`` and ``ark eval
#: --answer`` use unless told: in steps (why: docs/decisions/answer-and-tools.md).
DEFAULT_WRITER = "steps"


def writer_named(name: str) -> Any:
    """The answer writer called ``name`` (see :data:`WRITERS`)."""
    try:
        return WRITERS[name]
    except KeyError:
        raise ArkError(f"unknown answer writer {name!r}; use {' or '.join(WRITERS)}") from None
