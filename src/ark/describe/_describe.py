"""``ark index describe``: a model writes, for the relations and node types whose names
do not already say it, a one-line description and the everyday words a question may
use for them.

Cost is what decides the design: a small local model takes seconds for one relation
asked alone (``docs/decisions/describe.md``), and schemas have 10 to 5,000 relations.
So:

- **Batches.** :data:`BATCH_SIZE` relations (or types) per call, answered as one JSON
  list under a schema whose ``name`` is an enum of the batch's names. The system prompt
  and the instructions are read once per batch instead of once per relation. Each item
  is checked on its own (:func:`check_batch_reply`): an item that does not fit, a name
  the batch did not ask for, or a batch name the reply leaves out changes nothing for
  that relation and is counted under ``rejected``; never fatal.
- **Names that already say it** get no call (:func:`plan_describe`): a relation whose
  name is written as words (it holds a space: a phrase an extractor or a person wrote,
  such as "first president of"), every relation of a graph built from documents (its
  relations are such phrases, thousands of them), and a relation or type whose schema
  file already gave both a description and aliases. A phrase's own words give its
  aliases (:func:`words_of_phrase`). A stored reverse shares its forward relation's.
- **A cap.** At most ``max_relations`` (default :data:`MAX_RELATIONS`) relations are
  asked, the most frequent first; the rest keep their names' labels, and the report
  says how many.
- **Resume.** Each finished batch's checked reply is written to :data:`WORK_FILE` in
  the index directory (atomically: a temporary file renamed over it), keyed by the
  model, the seed, the index's build and the batch's names; an interrupted describe
  run again skips the batches it finished. The file is removed once the result is
  stored.

Decoding is greedy with a fixed seed, so the same model and index give the same
result. The model sees each name, its label, what it joins and two real edges;
nothing else about the graph.

**Why here, and not beside the described schema** (``ark.graph._described``, which
holds the other two sources: ``DescribedSchema.from_names`` and the schema file):
describing asks a language model and stores its words in the index, and the layer
contracts (``[tool.importlinter]`` in ``pyproject.toml``) keep ``ark.graph`` and
``ark.index`` from importing ``ark.llm``, and ``ark.graph`` from importing
``ark.index``. Like ingest's extraction, it is a model writing data into the index, so
it sits beside ``ark.ingest``, above the graph, the index and the words, and below the
reading (``ark.reading``), which reads the words written here and never calls a model
itself. It takes the described schema's limits and text check from ``ark.graph``'s
public names, so a model's reply is held to a schema file's rules.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from ark._files import write_atomic
from ark.graph import (
    MAX_ALIAS_CHARS,
    MAX_DESCRIPTION_CHARS,
    DescribedSchema,
    code_steps,
    is_document_graph,
    text_problem,
    with_layer,
)
from ark.index import linking_encoder, shared_encoder
from ark.llm import ChatModel, Message
from ark.words import content, lemma_key, tokens, without_accents

#: Most words asked for per relation or type: six cover the nouns, verbs and informal
#: words a question uses (``docs/decisions/describe.md``). (The
#: schema bounds no string length: a bounded string makes the local model's JSON
#: grammar large and its decoding slow; ``max_tokens`` bounds the reply instead.)
MAX_WORDS = 6

#: Relations (or types) per model call. Eight keep one call's prompt near 500 tokens and
#: its reply under ~600 (a description and up to :data:`MAX_WORDS` aliases each), well
#: inside a small local model's context and its attention: a 1.5B model keeps a list of
#: eight apart, and a bad reply loses at most eight relations' words. Larger batches
#: save little more, since the reply's tokens, not the prompt, are the cost.
BATCH_SIZE = 8

#: Batches in flight at once, unless the model says how many it takes
#: (``max_concurrency``: the plain local backend 1, the batched one its slots). A served
#: model answers them in parallel; the local batched backend (``--parallel``) decodes
#: their next tokens in one step and reads the shared system prompt once. Results are
#: merged in batch order, so the outcome does not depend on which finishes first.
CONCURRENCY = 4

#: Reply tokens allowed per item of a batch (with a description; words only).
TOKENS_PER_ITEM = 80
TOKENS_PER_WORDS_ITEM = 48

#: Whether the model writes a one-line description of each relation besides its
#: words (the default). The words are what the question reading uses; a description
#: goes into the agents' schema listing and is about a fifth of the reply's tokens.
#: ``descriptions=False`` (``--no-descriptions``) asks for the words alone: faster, but
#: without writing the description first a small model writes the name back, and the
#: reading does worse (``docs/decisions/describe.md``). So descriptions stay on.
DESCRIPTIONS = True

#: Most relations asked of the model by default, the most frequent first, so that a
#: 5,000-relation schema costs what a 200-relation one does; the rest keep their names'
#: labels (``max_relations=0`` asks for all; the cost: ``docs/decisions/describe.md``).
MAX_RELATIONS = 200

#: The work file of an unfinished describe, in the index directory.
WORK_FILE = ".describe-work.json"

#: How much nearer (cosine, under the sentence encoder the reading uses) a model's word
#: for a relation must stand to another relation that the same nodes have than to its
#: own (label and description) to be dropped. A small model puts a neighbour's word on
#: a relation (a cast relation called *screenplay*, nearer the director's); at a node
#: with both, such a word reads the question as the wrong one
#: (``docs/decisions/describe.md``). A word that fits both about equally
#: (*publication* for ``release_year``) stays.
RIVAL_MARGIN = 0.1
#: A rival is a relation that at least this share of the relation's nodes also have:
#: where the two stand side by side (a film's cast, director, writer), a word
#: of one must not read as the other. Relations that meet on a few nodes only (a
#: book's author and a TV episode's writer) keep a word that fits both: the graph
#: tells them apart.
RIVAL_SHARE = 0.5

#: Leading auxiliaries a relation phrase may start with ("was born in"); the phrase
#: without them is another way a question says it ("born in").
AUXILIARIES = frozenset({"is", "was", "are", "were", "be", "been", "being", "has", "have", "had"})

#: The worked example of :data:`SYSTEM`: a relation's name and what the model should
#: give for it.
EXAMPLE_NAME = "employed_by"
EXAMPLE_DESCRIPTION = "the company a person works for"
EXAMPLE_ALIASES = ("employer", "works for", "company", "job at", "employed at", "boss")


def system_prompt(descriptions: bool = True) -> str:
    """The system message of a describe call: what to write for each relation or type
    (a description only when ``descriptions``) and the worked example in that shape."""
    asked = "a one-line description and the different" if descriptions else "the different"
    described = f'"description": "{EXAMPLE_DESCRIPTION}", ' if descriptions else ""
    return (
        "You document the schema of a knowledge graph for a question-answering system. "
        f"For each relation or node type listed, write {asked} words and short phrases "
        "people use for it in questions: what they call the tail (nouns), the verbs, "
        "synonyms and informal words. Reply with JSON only.\n"
        f'Example: relation "{EXAMPLE_NAME}" (person -> company) gives {{"name": '
        f'"{EXAMPLE_NAME}", {described}"aliases": {json.dumps(list(EXAMPLE_ALIASES))}}}.'
    )


SYSTEM = system_prompt(True)
#: :data:`SYSTEM` when only the words are asked for.
WORDS_SYSTEM = system_prompt(False)


def _reply_shape(descriptions: bool) -> str:
    """The JSON a batch's reply has, as its prompt shows it."""
    described = '"description": "...", ' if descriptions else ""
    return f'{{"items": [{{"name": "...", {described}"aliases": ["...", ...]}}, ...]}}'


#: Aliases of the worked example an item may repeat before it counts as the example
#: copied rather than an answer (half of :data:`MAX_WORDS`).
MAX_EXAMPLE_ALIASES = MAX_WORDS // 2

ProgressFn = Callable[[int, int], None]

log = logging.getLogger(__name__)

#: The words the prompts use to talk about the graph itself. A small model echoes them
#: into its answer ("number on head entity"); a question never says them, so an alias
#: using one that the relation's own name does not is dropped, and in a description
#: "the head/tail entity" reads as that end's type (or subject/object).
PROMPT_WORDS = frozenset({"head", "tail", "entity", "entities", "node", "nodes", "relation"})


def batch_schema(
    names: Sequence[str], *, descriptions: bool = True, max_words: int = MAX_WORDS
) -> dict[str, Any]:
    """The reply schema of one batch: a list of exactly ``len(names)`` items, each
    naming one of ``names`` (an enum, so a grammar-constrained model cannot misspell
    one) with its aliases (at most ``max_words``) and, if ``descriptions``, its
    description."""
    properties: dict[str, Any] = {"name": {"type": "string", "enum": list(names)}}
    if descriptions:
        properties["description"] = {"type": "string"}
    properties["aliases"] = {"type": "array", "items": {"type": "string"}, "maxItems": max_words}
    item = {"type": "object", "properties": properties, "required": list(properties)}
    return {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": item,
                "minItems": len(names),
                "maxItems": len(names),
            }
        },
        "required": ["items"],
    }


def relations_prompt(
    described: DescribedSchema,
    names: Sequence[str],
    *,
    descriptions: bool = True,
    max_words: int = MAX_WORDS,
) -> str:
    """One batch's question: a line per relation (name, label, ends, two real edges)."""
    lines = []
    for i, name in enumerate(names, 1):
        doc = described.relation(name)
        assert doc is not None
        ends = f", {doc.source_type} -> {doc.target_type}" if doc.source_type else ""
        examples = "; ".join(f"{h} -> {t}" for h, t in doc.examples) or "none shown"
        lines.append(f'{i}. "{doc.name}" (read as "{doc.label}"){ends}; e.g. {examples}')
    asked = (
        "a short description (what the tail is to the head, under ten words) and "
        if descriptions
        else ""
    )
    return (
        "Relations (head -> tail):\n" + "\n".join(lines) + f"\nFor each, write {asked}up "
        f"to {max_words} aliases a question could use for it, as JSON "
        f"{_reply_shape(descriptions)}, one item per relation, in this order."
    )


def types_prompt(
    described: DescribedSchema,
    names: Sequence[str],
    *,
    descriptions: bool = True,
    max_words: int = MAX_WORDS,
) -> str:
    """One batch's question about node types."""
    lines = []
    for i, name in enumerate(names, 1):
        doc = described.type(name)
        assert doc is not None
        lines.append(f'{i}. "{doc.name}" (read as "{doc.label}")')
    asked = "a short description and " if descriptions else ""
    return (
        "Node types:\n" + "\n".join(lines) + f"\nFor each, write {asked}up to {max_words} "
        "other words a question could use for such nodes (plural, synonyms), as JSON "
        f"{_reply_shape(descriptions)}, one item per type, in this order."
    )


def words_of_phrase(label: str) -> list[str]:
    """The aliases a relation written as a phrase gives itself, with no model: the
    phrase without a leading auxiliary ("was born in" -> "born in"), when that leaves
    words and differs. A question says "born in" more often than "was born in"."""
    words = label.split()
    while len(words) > 1 and words[0].lower() in AUXILIARIES:
        words = words[1:]
    short = " ".join(words)
    return [short] if short and short != label else []


def _own_words(aliases: list[str], name: str) -> list[str]:
    """``aliases`` without those that borrow the prompt's words (see
    :data:`PROMPT_WORDS`) that ``name`` itself does not have."""
    allowed = set(tokens(name))
    return [a for a in aliases if not (set(tokens(a)) - allowed) & PROMPT_WORDS]


def echoes_example(said: dict[str, Any], name: str) -> bool:
    """Whether a checked item (``{"description", "aliases"}``) is the prompt's worked
    example copied for ``name``: at least :data:`MAX_EXAMPLE_ALIASES` of the example's
    aliases that ``name``'s own words do not say. Out of its depth, a small model fills
    a whole batch with the example (``docs/decisions/reading.md``), which would make
    *employer* a word for relations it is not. A relation
    named as the example is (``employed_by``, ``EmployedBy``) may rightly say it."""
    own = {lemma_key(w) for w in tokens(name)}
    if own == {lemma_key(w) for w in tokens(EXAMPLE_NAME)}:
        return False
    example = {a.casefold() for a in EXAMPLE_ALIASES}
    copied = [
        a
        for a in said["aliases"]
        if a.casefold() in example and not {lemma_key(w) for w in content(tokens(a))} <= own
    ]
    return len(copied) >= MAX_EXAMPLE_ALIASES


def distinct_words(accepted: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The items of one batch reply with the words the model gave two or more of its
    relations kept only by those whose own name says them (every content word of the
    word, by lemma, in the name). Asked about eight relations at once, a small model
    copies one item's words into its neighbours': a word given to several of one
    batch tells them apart for none. Across batches the words stay: applied to the
    whole schema, the check cost readings (``docs/decisions/reading.md``)."""
    givers: dict[str, set[str]] = {}
    for name, said in accepted.items():
        for alias in said["aliases"]:
            givers.setdefault(alias.casefold(), set()).add(name)
    out: dict[str, dict[str, Any]] = {}
    for name, said in accepted.items():
        own = {lemma_key(w) for w in tokens(name)}
        kept = [
            a
            for a in said["aliases"]
            if len(givers[a.casefold()]) < 2 or {lemma_key(w) for w in content(tokens(a))} <= own
        ]
        out[name] = {**said, "aliases": kept}
    return out


def _plain(description: str, source: str | None, target: str | None) -> str:
    """``description`` with "the head/tail entity" (the prompt's words) read as the
    type of that end, when the graph has one other than the generic ``entity``, and
    otherwise as the subject or object."""
    for end, type_name, role in (("head", source, "subject"), ("tail", target, "object")):
        said = type_name if type_name and type_name != "entity" else role
        for form in (f"the {end} entity", f"the {end} node", f"a {end} entity"):
            description = description.replace(form, f"the {said}")
    return description


def check_reply(
    data: Any, *, descriptions: bool = True, max_words: int = MAX_WORDS
) -> dict[str, Any] | str:
    """``data`` (a parsed reply) as ``{"description", "aliases"}`` if it fits the
    response schema — exactly those keys (``aliases`` alone when ``descriptions`` is
    off; the result then has an empty description), a string and a list of strings,
    each within the sizes a schema file may have and holding no NUL, control character
    or lone surrogate — else a string saying why not. At most ``max_words`` aliases
    are kept."""
    if not isinstance(data, dict):
        return "not a JSON object" if data is not None else "no JSON in the reply"
    keys = set(data)
    expected = {"description", "aliases"} if descriptions else {"aliases"}
    if keys != expected:
        return f"keys {sorted(map(str, keys))}, expected {sorted(expected)}"
    description = data.get("description", "")
    problem = text_problem(description, MAX_DESCRIPTION_CHARS)
    if problem:
        return f"description: {problem}"
    raw = data["aliases"]
    if not isinstance(raw, list):
        return f"aliases: expected a list of strings, got {type(raw).__name__}"
    for i, alias in enumerate(raw[: 4 * max_words]):
        problem = text_problem(alias, MAX_ALIAS_CHARS)
        if problem:
            return f"aliases[{i}]: {problem}"
    if len(raw) > 4 * max_words:
        return f"aliases: {len(raw)} given, at most {max_words} asked for"
    aliases = list(dict.fromkeys(" ".join(a.split()) for a in raw if a.strip()))
    return {"description": description.strip(), "aliases": aliases[:max_words]}


def check_batch_reply(
    data: Any, names: Sequence[str], *, descriptions: bool = True, max_words: int = MAX_WORDS
) -> tuple[dict[str, dict[str, Any]], dict[str, str], int]:
    """A batch reply checked item by item against ``names`` (the batch asked):
    ``(accepted, rejected, strangers)``. ``accepted`` maps a name to
    :func:`check_reply`'s result; ``rejected`` maps each other name of the batch to why
    its words were not taken (the whole reply unreadable, its item not fitting, named
    twice, or left out); ``strangers`` counts items naming something the batch did not
    ask for (not keyed by that name: a reply's text is not trusted as a key)."""
    wanted = set(names)
    if not isinstance(data, dict) or set(data) != {"items"} or not isinstance(data["items"], list):
        why = "no JSON in the reply" if data is None else 'not a JSON object {"items": [...]}'
        return {}, {n: why for n in names}, 0
    accepted: dict[str, dict[str, Any]] = {}
    rejected: dict[str, str] = {}
    strangers = 0
    for item in data["items"][: 4 * len(names)]:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            strangers += 1
            continue
        name = item["name"]
        if name not in wanted:
            strangers += 1
            continue
        if name in accepted or name in rejected:
            rejected[name] = "named twice in the reply"
            accepted.pop(name, None)
            continue
        said = check_reply(
            {k: v for k, v in item.items() if k != "name"},
            descriptions=descriptions,
            max_words=max_words,
        )
        if isinstance(said, str):
            rejected[name] = said
        elif echoes_example(said, name):
            rejected[name] = "the prompt's example copied"
        else:
            accepted[name] = said
    strangers += max(0, len(data["items"]) - 4 * len(names))
    for name in names:
        if name not in accepted and name not in rejected:
            rejected[name] = "left out of the batch's reply"
    return accepted, rejected, strangers


def rival_relations(
    graph: Any, canonical: Mapping[str, str], names: Sequence[str], share: float = RIVAL_SHARE
) -> dict[str, set[str]]:
    """Per relation of ``names`` (forward names), the other forward relations that at
    least ``share`` of the nodes it leaves also leave: the relations a question about
    such a node could mean instead. A stored reverse counts as its forward relation,
    read the other way."""
    forward = [rel if way == "out" else "" for rel, way in code_steps(graph, canonical)]
    columns = sorted({f for f in forward if f})
    col = {f: j for j, f in enumerate(columns)}
    code_col = np.array([col.get(f, -1) for f in forward], dtype=np.int64)
    codes = np.asarray(graph.adj_code, dtype=np.int64)
    centers = np.repeat(np.arange(graph.n_nodes), np.diff(np.asarray(graph.indptr)))
    keep = code_col[codes] >= 0
    heads = sparse.csr_matrix(
        (np.ones(int(keep.sum()), dtype=np.float32), (centers[keep], code_col[codes[keep]])),
        shape=(graph.n_nodes, len(columns)),
    )
    heads.data[:] = 1.0  # repeated edges summed: a node has a relation or not
    asked = [col[n] for n in names if n in col]
    shared = (heads[:, asked].T @ heads).tocsr()
    out: dict[str, set[str]] = {}
    own = np.asarray(heads.sum(axis=0)).ravel()  # nodes leaving along each relation
    for row, j in enumerate(asked):
        lo, hi = shared.indptr[row], shared.indptr[row + 1]
        both = zip(shared.indices[lo:hi].tolist(), shared.data[lo:hi].tolist(), strict=True)
        out[columns[j]] = {columns[k] for k, n in both if k != j and n >= share * own[j]}
    return out


def _folded_lemmas(text: str) -> set[str]:
    """``text``'s content words by lemma, accents folded (*président*: *president*)."""
    return {lemma_key(w) for w in content(tokens(without_accents(text)))}


def rival_words(
    described: DescribedSchema,
    words: Mapping[str, Sequence[str]],
    rivals: Mapping[str, set[str]],
    encoder: Any,
    margin: float = RIVAL_MARGIN,
) -> dict[str, list[str]]:
    """Of ``words`` (a relation's model-given aliases, by forward name), those the
    ``encoder`` puts more than ``margin`` nearer one of the relation's ``rivals``
    (label and description, as ``described`` has them) than to the relation itself: by
    relation, the words to drop. A word whose content words the relation's own name
    has (*leader* for ``leader``, *president* for ``président``) always stays."""
    unsaid = {n: ws for n, ws in unsaid_words(described, words).items() if rivals.get(n)}
    asked = list(unsaid)
    if not asked:
        return {}
    texts: dict[str, str] = {}
    for name in {*asked, *(r for n in asked for r in rivals[n])}:
        doc = described.relation(name)
        if doc is not None:
            texts[name] = f"{doc.label}: {doc.description}" if doc.description else doc.label
    order = list(texts)
    row = {n: i for i, n in enumerate(order)}
    vectors = _unit(encoder.encode([texts[n] for n in order]))
    dropped: dict[str, list[str]] = {}
    for name in asked:
        checked = unsaid[name]
        others = [row[r] for r in sorted(rivals[name]) if r in row]
        if name not in row or not others:
            continue
        sims = _unit(encoder.encode(checked)) @ vectors.T
        for w, s in zip(checked, sims, strict=True):
            if float(s[others].max()) - float(s[row[name]]) > margin:
                dropped.setdefault(name, []).append(w)
    return dropped


def unsaid_words(
    described: DescribedSchema, words: Mapping[str, Sequence[str]]
) -> dict[str, list[str]]:
    """Per relation, those of its ``words`` whose content words its own name and label
    do not have (accents folded); relations with none left out. Only these are worth
    comparing: a graph built from documents gives every relation its own phrase's
    words, thousands of relations with nothing to check."""
    out: dict[str, list[str]] = {}
    for name, ws in words.items():
        doc = described.relation(name)
        own = _folded_lemmas(name) | (_folded_lemmas(doc.label) if doc is not None else set())
        left = [w for w in ws if not _folded_lemmas(w) <= own]
        if left:
            out[name] = left
    return out


def _unit(vectors: Any) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norms > 0, norms, 1.0)


def drop_rival_words(
    index: Any,
    layer: dict[str, Any],
    source: str,
    encoder: Any,
    margin: float = RIVAL_MARGIN,
) -> dict[str, list[str]]:
    """Drop from a model's ``layer`` (as :func:`ask_model` returns it, stored as
    ``source``) the words :func:`rival_words` finds nearer a rival relation of
    ``index``'s graph, in place: a stored reverse keeps its forward relation's words;
    the dropped words are kept under the layer's ``dropped`` and counted in its
    ``report`` (``rival_words``). Returns them by relation."""
    said = layer.get("relations") or {}
    base = DescribedSchema.from_names(index.schema, index.graph)
    candidate = with_layer(index.described, source, layer, base)
    forward = [n for n in said if (doc := base.relation(n)) is not None and not doc.inverse_of]
    words = {n: list(said[n].get("aliases") or []) for n in forward}
    checked = list(unsaid_words(candidate, words))
    rivals = rival_relations(index.graph, candidate.canonical, checked)
    dropped = rival_words(candidate, words, rivals, encoder, margin)
    for name, gone in dropped.items():
        said[name]["aliases"] = [w for w in said[name]["aliases"] if w not in gone]
    for r in base.relations:
        if r.inverse_of in dropped and r.name in said:
            said[r.name] = {"aliases": list(said[r.inverse_of]["aliases"])}
    if dropped:
        layer["dropped"] = dropped
    layer.setdefault("report", {})["rival_words"] = sum(map(len, dropped.values()))
    return dropped


@dataclass
class DescribePlan:
    """Which relations and types the model is asked about, and why the others are not:
    ``own_words`` (written as a phrase, or a document graph's), ``from_file`` (a schema
    file gave description and aliases), ``beyond_cap`` (less frequent than the
    ``max_relations`` asked); reverses always share their forward relation's words."""

    relations: list[str]
    types: list[str]
    own_words: list[str] = field(default_factory=list)
    from_file: list[str] = field(default_factory=list)
    beyond_cap: list[str] = field(default_factory=list)
    types_from_file: list[str] = field(default_factory=list)


def _file_gave(layers: Any, section: str) -> set[str]:
    """The names a schema file's layer gave both a description and aliases."""
    out: set[str] = set()
    for source, layer in (layers or {}).items():
        if str(source).startswith("file:"):
            for name, given in ((layer or {}).get(section) or {}).items():
                if isinstance(given, dict) and given.get("description") and given.get("aliases"):
                    out.add(name)
    return out


def plan_describe(
    described: DescribedSchema,
    *,
    totals: Sequence[tuple[str, int]] = (),
    document_graph: bool = False,
    layers: Any = None,
    max_relations: int | None = MAX_RELATIONS,
    types: bool = True,
) -> DescribePlan:
    """Split the forward relations (and types) into those to ask the model about — the
    most frequent first by ``totals`` (``Schema.relation_totals()``), at most
    ``max_relations`` (``None`` or 0: all) — and those whose words come from elsewhere
    (see :class:`DescribePlan` and the module docstring for the rule)."""
    if max_relations is not None and max_relations < 0:
        raise ValueError(f"max_relations must be 0 (all) or more, got {max_relations}")
    rank = {name: i for i, (name, _) in enumerate(totals)}
    forward = [r for r in described.relations if not r.inverse_of]
    forward.sort(key=lambda r: rank.get(r.name, len(rank)))  # stable: schema order on ties
    given = _file_gave(layers, "relations")
    plan = DescribePlan([], [])
    for r in forward:
        if r.name in given:
            plan.from_file.append(r.name)
        elif document_graph or any(ch.isspace() for ch in r.name.strip()):
            plan.own_words.append(r.name)
        elif max_relations and len(plan.relations) >= max_relations:
            plan.beyond_cap.append(r.name)
        else:
            plan.relations.append(r.name)
    if types:
        given_types = _file_gave(layers, "types")
        for t in described.types:
            (plan.types_from_file if t.name in given_types else plan.types).append(t.name)
    return plan


class _WorkFile:
    """Finished batches of one describe run, kept in ``path`` until the result is
    stored. ``key`` names the run (model, seed, index build): a file of another run is
    ignored and replaced. Each write is atomic (a temporary file, fsynced, renamed)."""

    def __init__(self, path: Path, key: dict[str, Any]) -> None:
        self.path, self.key = path, key
        self.batches: dict[str, dict[str, Any]] = {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            log.warning("describe: %s is unreadable (%s); starting over", path, exc)
            return
        if (
            isinstance(data, dict)
            and data.get("key") == key
            and isinstance(data.get("batches"), dict)
        ):
            self.batches = {k: v for k, v in data["batches"].items() if isinstance(v, dict)}

    @staticmethod
    def batch_key(section: str, names: Sequence[str]) -> str:
        return hashlib.sha256(json.dumps([section, *names]).encode("utf-8")).hexdigest()[:24]

    def save(self, key: str, result: dict[str, Any]) -> None:
        self.batches[key] = result
        data = {"key": self.key, "batches": self.batches}
        write_atomic(self.path, json.dumps(data, ensure_ascii=False))

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def _batches(names: Sequence[str], size: int) -> list[list[str]]:
    return [list(names[i : i + size]) for i in range(0, len(names), size)]


async def ask_model(
    described: DescribedSchema,
    llm: ChatModel,
    *,
    seed: int = 0,
    types: bool = True,
    progress: ProgressFn | None = None,
    batch_size: int = BATCH_SIZE,
    plan: DescribePlan | None = None,
    work: _WorkFile | None = None,
    descriptions: bool = True,
    max_words: int = MAX_WORDS,
    concurrency: int | None = None,
) -> dict[str, Any]:
    """What ``llm`` says of the relations and types ``plan`` asks about (by default
    every forward relation and type), ``batch_size`` to a call, as a layer for
    :func:`ark.graph.merge_described`: ``relations``, ``types``, ``rejected`` (what
    did not fit, by ``relations.NAME``/``types.NAME``) and ``report`` (the counts).
    Relations the plan gives their own words get them; a stored reverse gets its
    forward relation's aliases. ``progress(done, total)`` is called after each batch
    with the relations and types done so far. ``descriptions`` off asks for the words
    alone (the items then have no description); ``max_words``: aliases asked per item;
    ``concurrency``: batches asked at once (None: the model's ``max_concurrency``, else
    :data:`CONCURRENCY`)."""
    if concurrency is None:
        concurrency = int(getattr(llm, "max_concurrency", CONCURRENCY))
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1, got {max_words}")
    shape = {"descriptions": descriptions, "max_words": max_words}
    per_item = TOKENS_PER_ITEM if descriptions else TOKENS_PER_WORDS_ITEM
    if plan is None:
        plan = plan_describe(described, max_relations=None, types=types)
    jobs = [("relations", b) for b in _batches(plan.relations, batch_size)]
    jobs += [("types", b) for b in _batches(plan.types, batch_size)]
    total = len(plan.relations) + len(plan.types)
    sections: dict[str, dict[str, dict[str, Any]]] = {"relations": {}, "types": {}}
    rejected: dict[str, str] = {}
    calls = resumed = strangers = done = prompt_tokens = completion_tokens = 0
    gate = asyncio.Semaphore(concurrency)
    failed = False

    async def answer(section: str, names: list[str]) -> tuple[dict[str, Any], dict[str, str], int]:
        """One batch's checked reply: from the work file if a run before finished it,
        else from the model (then saved there at once)."""
        nonlocal calls, resumed, done, prompt_tokens, completion_tokens, failed
        key = _WorkFile.batch_key(section, names)
        kept = work.batches.get(key) if work is not None else None
        if kept is not None:
            resumed += 1
            accepted, why, odd = check_batch_reply(kept.get("reply"), names, **shape)
            said_before = kept.get("rejected")
            if isinstance(said_before, dict):  # why they were rejected, not "left out"
                why = {n: str(said_before.get(n, w))[:200] for n, w in why.items()}
            odd = int(kept.get("strangers", 0)) if isinstance(kept.get("strangers"), int) else 0
        else:
            prompt = (relations_prompt if section == "relations" else types_prompt)(
                described, names, **shape
            )
            async with gate:
                if failed:  # another batch failed: start no more (the run is over)
                    raise asyncio.CancelledError
                try:
                    completion = await llm.complete(
                        [
                            Message(role="system", content=system_prompt(descriptions)),
                            Message(role="user", content=prompt),
                        ],
                        [],
                        temperature=0.0,
                        max_tokens=40 + per_item * len(names),
                        seed=seed,
                        response_schema=batch_schema(names, **shape),
                    )
                except BaseException:
                    failed = True
                    raise
            calls += 1
            prompt_tokens += completion.usage.prompt_tokens
            completion_tokens += completion.usage.completion_tokens
            accepted, why, odd = check_batch_reply(completion.data, names, **shape)
            if work is not None:
                reply = {
                    "items": [
                        {"name": n, **(said if descriptions else {"aliases": said["aliases"]})}
                        for n, said in accepted.items()
                    ]
                }
                work.save(key, {"reply": reply, "rejected": why, "strangers": odd})
        done += len(names)
        if progress:
            progress(done, total)
        return accepted, why, odd

    # Every batch at once, ``concurrency`` of them at the model; merged in batch order.
    answers = await asyncio.gather(*(answer(section, names) for section, names in jobs))
    for (section, _), (accepted, why, odd) in zip(jobs, answers, strict=True):
        strangers += odd
        rejected.update({f"{section}.{n}": w for n, w in why.items() if n not in accepted})
        for name, said in distinct_words(accepted).items():
            said["aliases"] = _own_words(said["aliases"], name)
            doc = described.relation(name) if section == "relations" else None
            if said["description"] and doc is not None:
                said["description"] = _plain(said["description"], doc.source_type, doc.target_type)
            if not said["description"]:  # not asked for (or left empty): nothing to store
                del said["description"]
            sections[section][name] = said
    relations = sections["relations"]
    for name in plan.own_words:
        doc = described.relation(name)
        aliases = words_of_phrase(doc.label) if doc is not None else []
        if aliases:
            relations[name] = {"aliases": aliases}
    for r in described.relations:
        if r.inverse_of and r.inverse_of in relations:
            relations[r.name] = {"aliases": relations[r.inverse_of].get("aliases", [])}
    layer: dict[str, Any] = {"relations": relations, "types": sections["types"]}
    if rejected:
        layer["rejected"] = rejected
    layer["report"] = {
        "asked": len(plan.relations),
        "types_asked": len(plan.types),
        "batch_size": batch_size,
        "concurrency": concurrency,
        "descriptions": descriptions,
        "max_words": max_words,
        "calls": calls,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "resumed_batches": resumed,
        "own_words": len(plan.own_words),
        "from_file": len(plan.from_file) + len(plan.types_from_file),
        "beyond_cap": len(plan.beyond_cap),
        "rejected": len(rejected),
        "unasked_names": strangers,
    }
    return layer


def describe_index(
    index: Any,
    llm: ChatModel,
    *,
    seed: int = 0,
    progress: ProgressFn | None = None,
    batch_size: int = BATCH_SIZE,
    max_relations: int | None = MAX_RELATIONS,
    on_report: Callable[[dict[str, Any]], None] | None = None,
    descriptions: bool = DESCRIPTIONS,
    max_words: int = MAX_WORDS,
    concurrency: int | None = None,
    encoder: str = "auto",
) -> DescribedSchema:
    """Describe ``index``'s schema with ``llm`` and store it in the index, replacing an
    earlier model's words and keeping a user's schema file's (which win).

    Only what the names do not already say is asked (:func:`plan_describe`), at most
    ``max_relations`` relations, ``batch_size`` to a call; the counts are stored under
    the model layer's ``report`` and passed to ``on_report`` (also when nothing fits and
    nothing is stored). Finished batches are kept in :data:`WORK_FILE` so an
    interrupted run resumes where it stopped. ``descriptions``: whether the model also
    writes a one-line description of each (on by default, see :data:`DESCRIPTIONS`);
    ``max_words``: the most aliases asked for each; ``concurrency``: batches asked at
    once (None: as many as the model takes, see :data:`CONCURRENCY`); ``encoder``: the
    sentence encoder the reading uses (``auto``, ``on``, ``off``, as
    :func:`ark.index.linking_encoder` takes it), with which a model's word that
    stands nearer another relation the same nodes have is dropped
    (:func:`drop_rival_words`; the report says which encoder, or None).

    A reply that does not fit the response schema changes nothing: that relation or
    type keeps what an earlier model said of it; each is logged (a warning) and
    listed under ``rejected`` in the stored layer. If no reply fits, nothing is
    stored at all."""
    from ark.index import save_described

    base = DescribedSchema.from_names(index.schema, index.graph)
    current = index.described
    plan = plan_describe(
        base,
        totals=index.schema.relation_totals(),
        document_graph=is_document_graph(index.graph),
        layers=current.layers,
        max_relations=max_relations,
    )
    build = index.base_digest
    work = _WorkFile(
        Path(index.path) / WORK_FILE,
        {
            "model": llm.name,
            "seed": seed,
            "build": build,
            "max_words": max_words,
            "descriptions": descriptions,
        },
    )
    layer = asyncio.run(
        ask_model(
            base,
            llm,
            seed=seed,
            progress=progress,
            batch_size=batch_size,
            plan=plan,
            work=work,
            descriptions=descriptions,
            max_words=max_words,
            concurrency=concurrency,
        )
    )
    encoder_name = linking_encoder(encoder)  # type: ignore[arg-type]
    layer["report"]["encoder"] = encoder_name
    if encoder_name is not None and layer["relations"]:
        drop_rival_words(index, layer, f"model:{llm.name}", shared_encoder())
    if on_report is not None:
        on_report(dict(layer["report"]))
    rejected: dict[str, str] = layer.get("rejected", {})
    for where, why in rejected.items():
        log.warning(
            "describe: %s's reply for %s does not fit; kept as it was (%s)", llm.name, where, why
        )
    asked = plan.relations or plan.types
    if asked and not (set(layer["relations"]) & set(plan.relations)) and not layer["types"]:
        log.warning("describe: no reply of %s fits; nothing was stored", llm.name)
        work.remove()
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
    work.remove()
    return described
