"""``ark index describe``: a model writes, once per relation and node type, a one-line
description and the everyday words a question may use for it.

One call per relation (a stored reverse shares its forward relation's words) and one
per node type, each decoded as JSON under a schema, at temperature 0 with a fixed
seed, so the same model and index give the same result. The model sees the name,
what it joins and two real edges; nothing else about the graph.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from ark.graph import DescribedSchema, describe_from_names, with_layer
from ark.graph._described import MAX_ALIAS_CHARS, MAX_DESCRIPTION_CHARS, text_problem
from ark.linking._words import tokens
from ark.llm import ChatModel, Message

#: Most words asked for per relation or type. (The schema bounds no string length: a
#: bounded string makes the local model's JSON grammar large and its decoding slow;
#: ``max_tokens`` bounds the reply instead.)
MAX_WORDS = 8

SYSTEM = (
    "You document the schema of a knowledge graph for a question-answering system. "
    "For one relation or node type, write a one-line description and the different "
    "words and short phrases people use for it in questions: what they call the tail "
    "(nouns), the verbs, synonyms and informal words. Reply with JSON only.\n"
    'Example: relation "employed_by" (person -> company) gives {"description": "the '
    'company a person works for", "aliases": ["employer", "works for", "company", '
    '"job at", "employed at", "boss"]}.'
)

RESPONSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "description": {"type": "string"},
        "aliases": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_WORDS},
    },
    "required": ["description", "aliases"],
}

ProgressFn = Callable[[int, int], None]

log = logging.getLogger(__name__)

#: The words the prompts use to talk about the graph itself. A small model echoes them
#: into its answer ("number on head entity"); a question never says them, so an alias
#: using one that the relation's own name does not is dropped, and in a description
#: "the head/tail entity" reads as that end's type (or subject/object).
PROMPT_WORDS = frozenset({"head", "tail", "entity", "entities", "node", "nodes", "relation"})


def relation_prompt(described: DescribedSchema, name: str) -> str:
    doc = described.relation(name)
    assert doc is not None
    examples = "; ".join(f"{h} -> {t}" for h, t in doc.examples) or "none shown"
    ends = f"from {doc.source_type} nodes to {doc.target_type} nodes" if doc.source_type else ""
    return (
        f'Relation "{doc.name}" (read as "{doc.label}"), {ends}. Examples (head -> tail): '
        f"{examples}.\nWrite its description (what the tail is to the head) and up to "
        f"{MAX_WORDS} aliases a question could use for it, as JSON "
        '{"description": "...", "aliases": ["...", ...]}.'
    )


def type_prompt(described: DescribedSchema, name: str) -> str:
    doc = described.type(name)
    assert doc is not None
    return (
        f'Node type "{doc.name}" (read as "{doc.label}").\nWrite its description and up to '
        f"{MAX_WORDS} other words a question could use for such nodes (plural, synonyms), "
        'as JSON {"description": "...", "aliases": ["...", ...]}.'
    )


def _own_words(aliases: list[str], name: str) -> list[str]:
    """``aliases`` without those that borrow the prompt's words (see
    :data:`PROMPT_WORDS`) that ``name`` itself does not have."""
    allowed = set(tokens(name))
    return [a for a in aliases if not (set(tokens(a)) - allowed) & PROMPT_WORDS]


def _plain(description: str, source: str | None, target: str | None) -> str:
    """``description`` with "the head/tail entity" (the prompt's words) read as the
    type of that end, when the graph has one other than the generic ``entity``, and
    otherwise as the subject or object."""
    for end, type_name, role in (("head", source, "subject"), ("tail", target, "object")):
        said = type_name if type_name and type_name != "entity" else role
        for form in (f"the {end} entity", f"the {end} node", f"a {end} entity"):
            description = description.replace(form, f"the {said}")
    return description


async def _ask(llm: ChatModel, prompt: str, seed: int) -> dict[str, Any] | str:
    """The model's description and aliases, or why its reply does not fit
    :data:`RESPONSE_SCHEMA` (a string): a reply that does not fit changes nothing."""
    completion = await llm.complete(
        [Message(role="system", content=SYSTEM), Message(role="user", content=prompt)],
        [],
        temperature=0.0,
        max_tokens=200,
        seed=seed,
        response_schema=RESPONSE_SCHEMA,
    )
    return check_reply(completion.data)


def check_reply(data: Any) -> dict[str, Any] | str:
    """``data`` (a parsed reply) as ``{"description", "aliases"}`` if it fits the
    response schema — exactly those keys, a string and a list of strings, each within
    the sizes a schema file may have and holding no NUL, control character or lone
    surrogate — else a string saying why not."""
    if not isinstance(data, dict):
        return "not a JSON object" if data is not None else "no JSON in the reply"
    keys = set(data)
    if keys != {"description", "aliases"}:
        return f"keys {sorted(map(str, keys))}, expected ['aliases', 'description']"
    problem = text_problem(data["description"], MAX_DESCRIPTION_CHARS)
    if problem:
        return f"description: {problem}"
    raw = data["aliases"]
    if not isinstance(raw, list):
        return f"aliases: expected a list of strings, got {type(raw).__name__}"
    for i, alias in enumerate(raw[: 4 * MAX_WORDS]):
        problem = text_problem(alias, MAX_ALIAS_CHARS)
        if problem:
            return f"aliases[{i}]: {problem}"
    if len(raw) > 4 * MAX_WORDS:
        return f"aliases: {len(raw)} given, at most {MAX_WORDS} asked for"
    aliases = list(dict.fromkeys(" ".join(a.split()) for a in raw if a.strip()))
    return {"description": data["description"].strip(), "aliases": aliases[:MAX_WORDS]}


async def ask_model(
    described: DescribedSchema,
    llm: ChatModel,
    *,
    seed: int = 0,
    types: bool = True,
    progress: ProgressFn | None = None,
) -> dict[str, Any]:
    """What ``llm`` says of every forward relation (a reverse copy gets its forward
    relation's aliases) and, with ``types``, of every node type, as a layer for
    :func:`ark.graph.merge_described`."""
    forward = [r.name for r in described.relations if not r.inverse_of]
    type_names = [t.name for t in described.types] if types else []
    total = len(forward) + len(type_names)
    relations: dict[str, dict[str, Any]] = {}
    type_docs: dict[str, dict[str, Any]] = {}
    rejected: dict[str, str] = {}
    for i, name in enumerate(forward):
        said = await _ask(llm, relation_prompt(described, name), seed)
        if isinstance(said, str):
            rejected[f"relations.{name}"] = said
        else:
            doc = described.relation(name)
            said["aliases"] = _own_words(said["aliases"], name)
            if said["description"] and doc is not None:
                said["description"] = _plain(said["description"], doc.source_type, doc.target_type)
            relations[name] = said
        if progress:
            progress(i + 1, total)
    for j, name in enumerate(type_names):
        said = await _ask(llm, type_prompt(described, name), seed)
        if isinstance(said, str):
            rejected[f"types.{name}"] = said
        else:
            said["aliases"] = _own_words(said["aliases"], name)
            type_docs[name] = said
        if progress:
            progress(len(forward) + j + 1, total)
    for r in described.relations:
        if r.inverse_of and r.inverse_of in relations:
            relations[r.name] = {"aliases": relations[r.inverse_of].get("aliases", [])}
    layer: dict[str, Any] = {"relations": relations, "types": type_docs}
    if rejected:
        layer["rejected"] = rejected
    return layer


def describe_index(
    index: Any, llm: ChatModel, *, seed: int = 0, progress: ProgressFn | None = None
) -> DescribedSchema:
    """Describe ``index``'s schema with ``llm`` and store it in the index, replacing an
    earlier model's words and keeping a user's schema file's (which win).

    A reply that does not fit the response schema changes nothing: that relation or
    type keeps what an earlier model said of it; each is logged (a warning) and
    listed under ``rejected`` in the stored layer. If no reply fits, nothing is
    stored at all."""
    from ark.index import save_described

    base = describe_from_names(index.schema, index.graph)
    layer = asyncio.run(ask_model(base, llm, seed=seed, progress=progress))
    rejected: dict[str, str] = layer.get("rejected", {})
    for where, why in rejected.items():
        log.warning(
            "describe: %s's reply for %s does not fit; kept as it was (%s)", llm.name, where, why
        )
    current = index.described
    if rejected and not layer["relations"] and not layer["types"]:
        log.warning("describe: no reply of %s fits; nothing was stored", llm.name)
        return current  # type: ignore[no-any-return]
    earlier = next((v for k, v in current.layers.items() if k.startswith("model:")), {})
    for where in rejected:
        section, _, name = where.partition(".")
        kept = (earlier.get(section) or {}).get(name)
        if kept is not None:
            layer[section][name] = kept
            if section == "relations":  # its stored reverse keeps its words too
                for r in base.relations:
                    if r.inverse_of == name and r.name in (earlier.get(section) or {}):
                        layer[section][r.name] = earlier[section][r.name]
    described = with_layer(current, f"model:{llm.name}", layer, base)
    save_described(index, described)
    return described
