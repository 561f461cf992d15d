"""Extraction by a model: one call per chunk, the reply a JSON object under a schema.

Like ``ark index describe`` (:mod:`ark.describe`), each call passes
``response_schema=``: the local model decodes under a grammar made from the schema, a
server gets JSON mode, and the parsed reply arrives as ``Completion.data``. Decoding
is greedy with a fixed seed, so the same model and chunk give the same extraction —
which is also why a bad reply is cached as bad rather than retried on resume: asking
again would get the same reply. A reply that is not an object of lists is a *bad
reply*: the chunk keeps its passage node with nothing extracted, the reply is
counted, and ingestion goes on. A triple that is not three strings is dropped and
counted (:func:`ark.ingest._extraction.clean_extraction`).

:data:`PROMPT_VERSION` is part of every chunk's cache key: change the prompt, the
schema or how a reply is cleaned, bump it, and earlier extractions are no longer
reused.

Greedy decoding of a small model can fall into a loop, writing one triple again until
the token limit (``docs/decisions/documents.md``). Two guards: the schema bounds each
list by the chunk's length (:func:`response_schema`: at most one triple per three
words, one entity per two, above the densest good reply seen), so a loop ends at the
bound instead of at ``max_tokens``; and a reply cut at ``max_tokens`` keeps the list
items it completed before the cut (:func:`salvage_json`), counted as *cut*, instead of
losing the chunk.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

from ark.ingest._chunks import Chunk
from ark.ingest._extraction import Extraction, clean_extraction
from ark.llm import ChatModel, Message

__all__ = ["PROMPT_VERSION", "RESPONSE_SCHEMA", "ModelExtractor", "response_schema", "salvage_json"]

PROMPT_VERSION = "ie-v4"

SYSTEM = (
    "You build a knowledge graph from text. From the passage, list the entities it "
    "names (people, organisations, places, works, events, dates, amounts and other "
    "specific things) and the facts it states as [subject, relation, object] triples. "
    "Subject and object are entities from your list, written as in the text; the "
    "relation is a short phrase in the passage's own words (a verb with its "
    "preposition, or a noun). Write the name, not a pronoun. Only state what this "
    "passage says. Reply with JSON only.\n"
    'Example: "Ada Lovelace, born in London in 1815, worked with Charles Babbage on '
    'the Analytical Engine." gives {"entities": ["Ada Lovelace", "London", "1815", '
    '"Charles Babbage", "Analytical Engine"], "triples": [["Ada Lovelace", "born in", '
    '"London"], ["Ada Lovelace", "born in", "1815"], ["Ada Lovelace", "worked with", '
    '"Charles Babbage"], ["Ada Lovelace", "worked on", "Analytical Engine"]]}'
)

RESPONSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "entities": {"type": "array", "items": {"type": "string"}},
        "triples": {
            "type": "array",
            "items": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 3,
                "maxItems": 3,
            },
        },
    },
    "required": ["entities", "triples"],
}

#: The fewest items a list may hold whatever the chunk's length, and the step the
#: bounds are rounded up to (so chunks of similar length share one grammar).
_MIN_ITEMS = 8


def response_schema(text: str) -> dict[str, Any]:
    """:data:`RESPONSE_SCHEMA` with each list bounded by the length of ``text``: at
    most one triple per three words and one entity per two, rounded up to a multiple
    of 8 and never under 8. A good reply stays far inside (``docs/decisions/documents.md``);
    a reply that repeats itself stops at the bound."""
    words = len(text.split())

    def bound(per_word: float) -> int:
        n = max(_MIN_ITEMS, math.ceil(words * per_word))
        return -(-n // _MIN_ITEMS) * _MIN_ITEMS

    schema = copy.deepcopy(RESPONSE_SCHEMA)
    schema["properties"]["entities"]["maxItems"] = bound(1 / 2)
    schema["properties"]["triples"]["maxItems"] = bound(1 / 3)
    return schema


def salvage_json(text: str) -> dict[str, Any] | None:
    """The object a reply cut mid-way was writing, with each of its lists holding the
    items completed before the cut: ``{"entities": ["A", "B"], "triples": [["A", "x",
    "B"], ["A", "y"`` gives ``{"entities": ["A", "B"], "triples": [["A", "x", "B"]]}``.
    None when not even the first list's opening was written. Only items of the
    object's top-level lists are kept whole; a string or item cut open is left out."""
    stack: list[str] = []
    in_string = escaped = False
    last: tuple[int, str] | None = None  # (end of the last whole top-level list item, closers)
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
                if stack == ["{", "["]:
                    last = (i + 1, "]}")
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append(ch)
            if stack == ["{", "["]:
                last = (i + 1, "]}")  # an empty list so far
        elif ch in "}]":
            if not stack:
                return None
            stack.pop()
            if stack == ["{", "["]:
                last = (i + 1, "]}")
            elif stack == ["{"]:
                last = (i + 1, "}")
            elif not stack:
                break
    if last is None:
        return None
    end, closers = last
    try:
        data = json.loads(text[text.index("{") : end] + closers)
    except ValueError:  # json.JSONDecodeError is one
        return None
    return data if isinstance(data, dict) else None


def user_prompt(chunk: Chunk) -> str:
    """The chunk, under its document's title when it has one (a passage often names
    its subject only in the title, then says "it" or "he")."""
    title = f"Title: {chunk.title}\n" if chunk.title else ""
    return (
        f"{title}Passage:\n{chunk.text}\n\n"
        'Reply as JSON {"entities": ["..."], "triples": [["subject", "relation", "object"]]}.'
    )


class ModelExtractor:
    """Entities and triples of a chunk, as ``llm`` reads them.

    ``max_tokens`` bounds the reply: a reply cut off there keeps the entities and
    triples it completed and is counted as cut (raise it for long chunks with many
    facts).
    """

    def __init__(self, llm: ChatModel, *, seed: int = 0, max_tokens: int = 1024) -> None:
        self.llm = llm
        self.seed = seed
        self.max_tokens = max_tokens
        self.id = f"model:{llm.name}:{PROMPT_VERSION}:seed{seed}:max{max_tokens}"

    async def extract(self, chunk: Chunk) -> Extraction:
        """One model call. Raises :class:`ark.llm.LLMError` when the backend fails
        (nothing was said: the caller retries the chunk on a later run); a reply
        that says nothing usable returns ``ok=False``."""
        completion = await self.llm.complete(
            [
                Message(role="system", content=SYSTEM),
                Message(role="user", content=user_prompt(chunk)),
            ],
            [],
            temperature=0.0,
            max_tokens=self.max_tokens,
            seed=self.seed,
            response_schema=response_schema(chunk.text),
        )
        result = _read_reply(
            completion.data, completion.message.content, completion.finish_reason, chunk.text
        )
        result.prompt_tokens = completion.usage.prompt_tokens
        result.completion_tokens = completion.usage.completion_tokens
        result.llm_s = completion.latency_s
        return result


def _read_reply(data: Any, text: str, finish_reason: str, chunk_text: str = "") -> Extraction:
    """The extraction a reply holds, bounded on our side by the chunk's reply schema
    (:func:`response_schema`: a server may not enforce it, issue 67): the items past a list's
    bound are dropped and counted."""
    cut = finish_reason == "length" and not isinstance(data, dict)
    if cut:
        data = salvage_json(text)
    if not isinstance(data, dict):
        why = "cut off at max_tokens" if cut else "not a JSON object"
        return Extraction(ok=False, error=f"bad reply: {why}")
    entities, triples = data.get("entities", []), data.get("triples", [])
    if not isinstance(entities, list) or not isinstance(triples, list):
        return Extraction(ok=False, error='bad reply: "entities" and "triples" must be lists')
    bounds = response_schema(chunk_text)["properties"]
    over = max(0, len(entities) - bounds["entities"]["maxItems"])
    over += max(0, len(triples) - bounds["triples"]["maxItems"])
    entities = entities[: bounds["entities"]["maxItems"]]
    triples = triples[: bounds["triples"]["maxItems"]]
    result = clean_extraction(entities, triples)
    result.dropped += over
    if cut and not result.entities:  # cut before a single whole item: nothing to keep
        return Extraction(ok=False, error="bad reply: cut off at max_tokens")
    if cut:
        result.cut = True
        result.error = "cut off at max_tokens: kept what was complete before the cut"
    return result
