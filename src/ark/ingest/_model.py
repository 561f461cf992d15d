"""Extraction by a model: one call per chunk, the reply a JSON object under a schema.

Like ``ark index describe`` (:mod:`ark.linking._describe`), each call passes
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
"""

from __future__ import annotations

from typing import Any

from ark.ingest._chunks import Chunk
from ark.ingest._extraction import Extraction, clean_extraction
from ark.llm import ChatModel, Message

__all__ = ["PROMPT_VERSION", "RESPONSE_SCHEMA", "ModelExtractor"]

PROMPT_VERSION = "ie-v3"

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

    ``max_tokens`` bounds the reply: a reply cut off there is not valid JSON and
    counts as a bad reply (raise it for long chunks with many facts).
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
            response_schema=RESPONSE_SCHEMA,
        )
        data = completion.data
        result = _read_reply(data, completion.finish_reason)
        result.prompt_tokens = completion.usage.prompt_tokens
        result.completion_tokens = completion.usage.completion_tokens
        result.llm_s = completion.latency_s
        return result


def _read_reply(data: Any, finish_reason: str) -> Extraction:
    if not isinstance(data, dict):
        why = "cut off at max_tokens" if finish_reason == "length" else "not a JSON object"
        return Extraction(ok=False, error=f"bad reply: {why}")
    entities, triples = data.get("entities", []), data.get("triples", [])
    if not isinstance(entities, list) or not isinstance(triples, list):
        return Extraction(ok=False, error='bad reply: "entities" and "triples" must be lists')
    return clean_extraction(entities, triples)
