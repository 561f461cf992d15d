"""The answer step: a model writes a short answer from retrieved nodes' text only.

Retrieval returns nodes; a reader wants a sentence. :func:`write_answer` shows the
model the text of the nodes it is given (and, optionally, the relations the retrieval
followed between them), asks for one JSON value — ``{"answerable", "answer",
"citations"}`` — and checks what comes back: citations must be among the nodes shown
(others are dropped and counted), and a reply that is not that JSON, or a model that
fails, gives an unanswered :class:`Answer` that says why — never an exception — so an
evaluation over many questions keeps going.

The text shown is bounded by characters, not tokens (the step knows no tokenizer):
each node's text is cut to ``max_node_chars`` and the evidence block as a whole to
``max_chars`` (nodes past it are left out, in order, and listed in
``Answer.omitted``). :data:`MAX_CHARS_LIMIT` caps ``max_chars`` so that the prompt
and the reply fit a 16,384-token context even at a pessimistic 2.5 characters per
token (English prose runs near 4).

This module depends only on the graph, the index and the LLM protocol (and the edge
type strategies record), so the answer pipeline (:func:`ark.answer.answer_question`,
GraphSearch's answer from its basis included) and the evaluation's naive-RAG baseline
all call the same function.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ark._coerce import as_int
from ark._safe import cut as cut_text
from ark.answer._support import check_citations
from ark.errors import ArkError
from ark.graph import Graph
from ark.index import Index
from ark.llm import ChatModel, LLMError, Message
from ark.strategies import Edge  # (head, relation, tail): a strategy records them too

__all__ = [
    "ANSWER_SCHEMA",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_NODE_CHARS",
    "MAX_ANSWER_CHARS",
    "MAX_CHARS_LIMIT",
    "MAX_QUESTION_CHARS",
    "Answer",
    "AnswerStatus",
    "Edge",
    "answer_prompt",
    "write_answer",
    "write_answer_sync",
]

#: Characters of node text (headers included) shown by default: ~3-4k tokens, room
#: for about twenty 100-word passages, and a prompt the local model reads in seconds.
DEFAULT_MAX_CHARS = 12_000
#: Characters of one node's text shown by default (a longer text is cut and marked).
DEFAULT_MAX_NODE_CHARS = 1_500
#: The most ``max_chars`` may be: 36,000 characters is under 14,400 tokens at 2.5
#: characters a token, which leaves the instructions, the question (cut to
#: :data:`MAX_QUESTION_CHARS`) and the reply (``max_tokens``) inside 16,384 tokens.
MAX_CHARS_LIMIT = 36_000
#: Characters of the question shown (a longer one is cut).
MAX_QUESTION_CHARS = 1_000
#: Tokens the reply may take: a short answer and its citations.
DEFAULT_MAX_TOKENS = 300
#: The longest answer kept (characters): a short answer is a few words, whatever a
#: server that ignores ``max_tokens`` sends (issue 67). What is cut off is counted in
#: :attr:`Answer.answer_cut`.
MAX_ANSWER_CHARS = 2_000

AnswerStatus = Literal[
    "answered", "not_answerable", "bad_reply", "model_error", "no_evidence", "unsupported"
]

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answerable": {"type": "boolean"},
        "answer": {"type": "string"},
        "citations": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["answerable", "answer", "citations"],
}

SYSTEM = (
    "You answer a question using only the evidence given: nodes of a knowledge graph, "
    "each shown as [index] name (type) followed by its text, and the relations the "
    "retrieval followed between them. Use no outside knowledge. Answer with the "
    "shortest phrase that answers the question (a name, a date, a number, a few words; "
    "not a sentence) and cite the indices of the nodes it comes from. "
    "If the evidence does not answer the question, set answerable to false and say "
    "what is missing. Reply with JSON only: "
    '{"answerable": true, "answer": "...", "citations": [12, 34]}.'
)


@dataclass(frozen=True)
class Answer:
    """What the model wrote, checked against the nodes it was shown.

    ``answerable`` is True only when the model answered (``status == "answered"``);
    otherwise ``reason`` says why not: the model said the evidence does not answer
    (``not_answerable``; ``text`` then holds what it said), its reply was not the
    JSON asked for (``bad_reply``), the model call failed (``model_error``), or there
    was nothing to answer from (``no_evidence``, no model call).
    """

    text: str
    citations: list[int]
    answerable: bool
    status: AnswerStatus
    reason: str | None = None
    #: The nodes whose text the model saw, in the order shown.
    nodes: list[int] = field(default_factory=list)
    #: Given nodes left out because the text budget ran out (in the order given).
    omitted: list[int] = field(default_factory=list)
    #: Nodes whose text was cut to ``max_node_chars``.
    cut: int = 0
    #: Cited indices that were not among the nodes shown (or not integers): dropped.
    dropped_citations: int = 0
    #: Characters of the evidence block shown (within ``max_chars``).
    evidence_chars: int = 0
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    #: Read in steps (:func:`ark.answer.write_answer_in_steps`): each lookup's question
    #: (``#k`` filled in), answer, citations and the nodes shown to it; a last item
    #: ``{"fallback": why}`` when the one-call reading answered instead. Empty for
    #: the one-call reading.
    steps: list[dict[str, Any]] = field(default_factory=list)
    #: Characters of the model's answer cut off past :data:`MAX_ANSWER_CHARS`.
    answer_cut: int = 0
    #: The citations checked against the shown nodes' text (:mod:`._support`):
    #: ``held`` (they hold the answer's claim), ``recited`` (other shown nodes hold it
    #: and are cited instead; ``recited_from``: the model's own citations),
    #: ``unsupported`` (no node shown holds it: nothing is cited, the model's
    #: citations are in ``recited_from``), "" (nothing to check).
    citation_check: str = ""
    recited_from: list[int] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Answer:
        """The answer :meth:`to_dict` wrote (a trajectory keeps it as a dict)."""
        names = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in names})

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "citations": list(self.citations),
            "answerable": self.answerable,
            "status": self.status,
            "reason": self.reason,
            "nodes": list(self.nodes),
            "omitted": list(self.omitted),
            "cut": self.cut,
            "dropped_citations": self.dropped_citations,
            "evidence_chars": self.evidence_chars,
            "model": self.model,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": self.latency_s,
            **({"steps": [dict(s) for s in self.steps]} if self.steps else {}),
            **({"answer_cut": self.answer_cut} if self.answer_cut else {}),
            **({"citation_check": self.citation_check} if self.citation_check else {}),
            **({"recited_from": list(self.recited_from)} if self.recited_from else {}),
        }


@dataclass(frozen=True)
class _Evidence:
    """The evidence block as shown, and what it left out."""

    text: str
    shown: list[int]
    citable: set[int]
    omitted: list[int]
    cut: int


def _node_block(graph: Graph, node: int, max_node_chars: int) -> tuple[str, bool]:
    """``[i] name (type)`` and the node's text (its first line dropped when that is the
    name again, as a passage's title is); cut to ``max_node_chars``."""
    name = graph.name(node)
    text = graph.text(node).strip()
    if text.startswith(name + "\n"):
        text = text[len(name) + 1 :].lstrip()
    elif text == name:
        text = ""
    cut = len(text) > max_node_chars
    if cut:
        text = text[:max_node_chars].rstrip() + " …(cut)"
    head = f"[{node}] {name} ({graph.type_name(node)})"
    return (f"{head}\n{text}" if text else head), cut


def _evidence(
    graph: Graph,
    nodes: Sequence[int],
    edges: Sequence[Edge],
    max_chars: int,
    max_node_chars: int,
) -> _Evidence:
    blocks: list[str] = []
    shown: list[int] = []
    omitted: list[int] = []
    used = 0
    cut = 0
    for node in _known_nodes(graph, nodes):
        block, was_cut = _node_block(graph, node, max_node_chars)
        if omitted or used + len(block) + 2 > max_chars:
            omitted.append(node)  # the budget ran out: this and every later node
            continue
        blocks.append(block)
        shown.append(node)
        used += len(block) + 2
        cut += was_cut
    citable = set(shown)
    facts: list[str] = []
    for head, relation, tail in dict.fromkeys(edges):
        if not (0 <= head < graph.n_nodes and 0 <= tail < graph.n_nodes):
            continue
        line = f"[{head}] {graph.name(head)} -{relation}-> [{tail}] {graph.name(tail)}"
        if used + len(line) + 1 > max_chars:
            break
        facts.append(line)
        citable.update((head, tail))
        used += len(line) + 1
    text = "\n\n".join(blocks)
    if facts:
        text += "\n\nRelations followed:\n" + "\n".join(facts)
    return _Evidence(text, shown, citable, omitted, cut)


def answer_prompt(question: str, evidence: str) -> list[Message]:
    """The two messages the model answers (the question cut to MAX_QUESTION_CHARS)."""
    if len(question) > MAX_QUESTION_CHARS:
        question = question[:MAX_QUESTION_CHARS] + " …(cut)"
    user = f"Question: {question}\n\nEvidence:\n{evidence}\n\nAnswer the question as JSON."
    return [Message(role="system", content=SYSTEM), Message(role="user", content=user)]


def _check_budget(max_chars: int, max_node_chars: int) -> None:
    """Refuse a text budget the answer step cannot keep (a caller's bug)."""
    if not 0 < max_chars <= MAX_CHARS_LIMIT:
        raise ArkError(
            f"max_chars must be in 1..{MAX_CHARS_LIMIT} (to fit a 16k context), not {max_chars}"
        )
    if max_node_chars < 1:
        raise ArkError(f"max_node_chars must be at least 1, not {max_node_chars}")


def _known_nodes(graph: Graph, nodes: Sequence[int]) -> list[int]:
    """``nodes`` once each, in order; a node outside the graph is a caller's bug."""
    out = list(dict.fromkeys(int(n) for n in nodes))
    for node in out:
        if not 0 <= node < graph.n_nodes:
            raise ArkError(f"node {node} is not in the graph (indices 0..{graph.n_nodes - 1})")
    return out


def checked(answer: Answer, question: str, index_or_graph: Index | Graph) -> Answer:
    """``answer`` with its citations checked against the shown nodes' text, by the
    index's tokenizer (a bare graph: the default one)."""
    from ark.index import Tokenizer, TokenizerConfig

    bm25 = getattr(index_or_graph, "bm25", None)
    tokenizer = getattr(bm25, "tokenizer", None) or Tokenizer(TokenizerConfig())
    return check_citations(answer, question, _graph(index_or_graph), tokenizer)


def _graph(index_or_graph: Index | Graph) -> Graph:
    """The graph of an index (a static or a segmented one), or the graph itself."""
    return getattr(index_or_graph, "graph", index_or_graph)  # type: ignore[no-any-return]


async def write_answer(
    model: ChatModel,
    question: str,
    index_or_graph: Index | Graph,
    nodes: Sequence[int],
    *,
    edges: Sequence[Edge] = (),
    max_chars: int = DEFAULT_MAX_CHARS,
    max_node_chars: int = DEFAULT_MAX_NODE_CHARS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    temperature: float = 0.0,
    seed: int | None = 0,
) -> Answer:
    """``model``'s short answer to ``question`` from the text of ``nodes`` (in the order
    given: put the best first, the budget keeps a prefix), citing node indices.

    ``edges`` (optional) are relations the retrieval followed, shown as facts under
    the nodes; their ends may be cited too. A node index outside the graph raises
    :class:`~ark.errors.ArkError` (a caller's bug); everything the model does is
    reported in the :class:`Answer` instead.
    """
    _check_budget(max_chars, max_node_chars)
    graph = _graph(index_or_graph)
    ev = _evidence(graph, nodes, edges, max_chars, max_node_chars)
    seen = {
        "nodes": ev.shown,
        "omitted": ev.omitted,
        "cut": ev.cut,
        "evidence_chars": len(ev.text),
    }
    if not ev.shown and not ev.citable:
        return Answer("", [], False, "no_evidence", "no nodes to answer from", **seen)
    try:
        completion = await model.complete(
            answer_prompt(question, ev.text),
            [],
            temperature=temperature,
            max_tokens=max_tokens,
            seed=seed,
            response_schema=ANSWER_SCHEMA,
        )
    except LLMError as exc:
        reason = f"the model failed: {exc}"
        return Answer("", [], False, "model_error", reason, model=_name(model), **seen)
    call = {
        "model": completion.model,
        "prompt_tokens": completion.usage.prompt_tokens,
        "completion_tokens": completion.usage.completion_tokens,
        "latency_s": round(completion.latency_s, 4),
    }
    data = completion.data
    problem = _check(data, completion.finish_reason)
    if problem is not None:
        return Answer("", [], False, "bad_reply", problem, **seen, **call)
    assert isinstance(data, dict)
    citations, dropped = _citations(data.get("citations"), ev.citable)
    text = data["answer"].strip()
    over = max(0, len(text) - MAX_ANSWER_CHARS)
    text = cut_text(text, MAX_ANSWER_CHARS)
    if over:
        call["answer_cut"] = over
    if data["answerable"] is not True:
        reason = "the model said the evidence does not answer the question"
        return Answer(
            text, citations, False, "not_answerable", reason, dropped_citations=dropped,
            **seen, **call,
        )  # fmt: skip
    answer = Answer(text, citations, True, "answered", dropped_citations=dropped, **seen, **call)
    return checked(answer, question, index_or_graph)


def write_answer_sync(
    model: ChatModel,
    question: str,
    index_or_graph: Index | Graph,
    nodes: Sequence[int],
    **options: Any,
) -> Answer:
    """:func:`write_answer` for code without an event loop (runs its own)."""
    return asyncio.run(write_answer(model, question, index_or_graph, nodes, **options))


def _check(data: Any, finish_reason: str) -> str | None:
    """Why ``data`` is not the reply asked for (None: it is)."""
    if data is None:
        if finish_reason == "length":
            return "bad reply: output cut at max_tokens"
        return "bad reply: not JSON"
    if not isinstance(data, dict):
        return f"bad reply: a JSON {type(data).__name__}, not an object"
    if not isinstance(data.get("answerable"), bool):
        return "bad reply: answerable is not true or false"
    if not isinstance(data.get("answer"), str):
        return "bad reply: answer is not a string"
    if data["answerable"] and not data["answer"].strip():
        return "bad reply: an empty answer"
    return None


def _citations(raw: Any, citable: set[int]) -> tuple[list[int], int]:
    """The cited node indices among ``citable`` (in order, once each), and how many
    cited values were dropped (not citable, or not integers)."""
    values = raw if isinstance(raw, list) else ([] if raw is None else [raw])
    kept: list[int] = []
    dropped = 0
    for value in values:
        node = as_int(value)
        if node is None or node not in citable:
            dropped += 1
        elif node not in kept:
            kept.append(node)
    return kept, dropped


def _name(model: ChatModel) -> str:
    return str(getattr(model, "name", "unknown"))
