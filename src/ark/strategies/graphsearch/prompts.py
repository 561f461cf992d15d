"""The prompts and response schemas of GraphSearch's model-facing modules.

Written for this project (SPEC §8): every module asks for one JSON value whose schema
is passed as ``response_schema=``, so a local model decodes under a grammar (node
indices restricted to the nodes on screen, relations to the graph's relations) and a
server gets JSON mode. Prompts stay short: the local 1.5B model reads every token on
two CPU cores.
"""

from __future__ import annotations

from typing import Any

from ark.graph import Schema

MAX_STEPS_PER_PLAN = 4
MAX_NEW_STEPS = 2
#: Up to this many relations, a plan's relation is decoded under an enum of them and
#: the prompt lists the schema; beyond it (a graph extracted from text has thousands of
#: free-text phrases) the relation is a phrase in the model's words and the prompt
#: lists only the most frequent ones, so the prompt stays bounded whatever the graph.
MAX_ENUM_RELATIONS = 60
LISTED_RELATIONS = 20


def _string(max_length: int | None = None) -> dict[str, Any]:
    return {"type": "string", **({"maxLength": max_length} if max_length else {})}


def _node_list(max_items: int) -> dict[str, Any]:
    # Plain integers, checked against the nodes on screen after decoding: an enum of
    # node indices makes grammar sampling slow (docs/decisions/local-model.md).
    return {
        "type": "array",
        "items": {"type": "integer", "minimum": 0},
        "maxItems": max_items,
    }


def free_relations(schema: Schema, documents: bool = False) -> bool:
    """Whether a plan's relations are free text (a document graph's phrases, or more
    relations than an enum and the prompt can carry) rather than the graph's names."""
    return documents or len(schema.relation_names) > MAX_ENUM_RELATIONS


def plan_schema(
    relations: list[str], max_steps: int = MAX_STEPS_PER_PLAN, free: bool = False
) -> dict[str, Any]:
    """Both channels of a plan: questions (semantic) and triples (relational); the
    relation is one of ``relations``, or with ``free`` a short phrase."""
    triple = {
        "type": "object",
        "properties": {
            "subject": _string(80),
            "relation": _string(60) if free else {"enum": relations},
            "object": _string(80),
        },
        "required": ["subject", "relation", "object"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "semantic": {
                "type": "array",
                "items": _string(120),
                "minItems": 1,
                "maxItems": max_steps,
            },
            "relational": {
                "type": "array",
                "items": triple,
                "minItems": 1,
                "maxItems": max_steps,
            },
        },
        "required": ["semantic", "relational"],
        "additionalProperties": False,
    }


_PLAN_RULES = """\
Step N's unknown answer is called #N. A later step writes #N where it needs that \
answer. A question about one fact is one step; a question that goes through another \
entity first needs one step per hop. Give the same steps twice:
- "semantic": each step as a short question in plain words.
- "relational": each step as a triple {{"subject", "relation", "object"}}: one end is \
an entity name from the question or an earlier #N, the other end is the step's own #N; \
{relation_rule}

{schema}

Example, on a graph of books:
Question: which publishers printed the books written by [Ann Lee]
{{"semantic": ["Which books did Ann Lee write?", "Which publishers printed #1?"], \
"relational": [{{"subject": "#1", "relation": "{written}", "object": "Ann Lee"}}, \
{{"subject": "#1", "relation": "{printed}", "object": "#2"}}]}}"""


def schema_text(schema: Schema, free: bool) -> str:
    """The schema as a plan prompt shows it: whole for a graph of few relations; for
    free-text relations, the node types and the most frequent relation phrases only."""
    if not free:
        return schema.render()
    totals: dict[str, int] = {}
    for r in schema.relations:
        totals[r.name] = totals.get(r.name, 0) + r.count
    top = sorted(totals.items(), key=lambda x: (-x[1], x[0]))[:LISTED_RELATIONS]
    lines = ["Node types (count):"]
    lines += [f"- {t.name} ({t.count:,})" for t in schema.node_types if t.count]
    lines.append(
        f"The graph has {len(totals):,} relation phrases; the most frequent (count): "
        + "; ".join(f"{name} ({count:,})" for name, count in top)
    )
    return "\n".join(lines)


def _rules(schema: Schema, free: bool) -> str:
    if free:
        rule = '"relation" is a short phrase in plain words (e.g. "born in").'
        written, printed = "written by", "printed by"
    else:
        rule = '"relation" is one of the graph\'s relations.'
        written, printed = "written_by", "printed_by"
    return _PLAN_RULES.format(
        relation_rule=rule, schema=schema_text(schema, free), written=written, printed=printed
    )


def decomposition_prompt(schema: Schema, free: bool = False) -> str:
    return (
        "You plan how to look up the answer to a question in a knowledge graph: split "
        "it into the smallest lookups, each asking for one fact, in the order they must "
        "be made.\n" + _rules(schema, free)
    )


def expansion_prompt(schema: Schema, next_id: int, free: bool = False) -> str:
    return (
        "A lookup plan over a knowledge graph did not find enough evidence. Write at "
        f"most {MAX_NEW_STEPS} new lookups that would find what is missing. New steps "
        f"are numbered from #{next_id}; they may use the answers of earlier steps.\n"
        + _rules(schema, free)
    )


GROUNDING_SYSTEM = (
    "You rewrite one lookup step so that it names an entity instead of a placeholder "
    "#N, using what earlier steps found. Reply with the entity name (or the rewritten "
    "question) only."
)
GROUNDING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": _string(120)},
    "required": ["text"],
    "additionalProperties": False,
}

REFINEMENT_SYSTEM = (
    "You filter search results. Given one lookup step and the nodes a graph search "
    "returned for it, keep every node that answers the step, most certain first; keep "
    "none if none does. Drop nodes that only share words with the step."
)


#: Context refinement on a graph built from documents: the paper's summary of what the
#: retrieved text says, and the sub-query's answer in words, beside the nodes kept.
READING_SYSTEM = (
    "You read search results for one lookup step: passages, and facts written as "
    "(subject, relation, object). Write a short summary of what they say about the "
    'step, the step\'s answer in a few words ("unknown" if they do not say), and the '
    "indices of the passages or entities that give or are the answer, most useful "
    "first; none if nothing does."
)


def reading_schema(candidates: list[int]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "summary": _string(300),
            "answer": _string(100),
            "keep": _node_list(max(1, min(len(candidates), 10))),
        },
        "required": ["summary", "answer", "keep"],
        "additionalProperties": False,
    }


def refinement_schema(candidates: list[int]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"keep": _node_list(max(1, min(len(candidates), 20)))},
        "required": ["keep"],
        "additionalProperties": False,
    }


DRAFTING_SYSTEM = (
    "You answer a question from evidence gathered step by step in a knowledge graph. "
    "Write the reasoning chain in one or two sentences (from the entity in the question, "
    "through each step, to the answer), then list the node indices that answer the "
    "whole question, best first. The answer is what the question asks for, not the "
    "entities passed through on the way."
)


def drafting_schema(candidates: list[int]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "chain": _string(240),
            "answer": _node_list(max(1, min(len(candidates), 20))),
        },
        "required": ["chain", "answer"],
        "additionalProperties": False,
    }


VERIFICATION_SYSTEM = (
    "You check a drafted answer against the evidence. Say yes if the evidence shows a "
    "fact for every step of the chain and the answer nodes are what the question asks "
    "for; say no if a step is unsupported, the answer is empty, or it names the wrong "
    "kind of thing. If no, say briefly what is missing."
)
VERIFICATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"verdict": {"enum": ["yes", "no"]}, "missing": _string(160)},
    "required": ["verdict", "missing"],
    "additionalProperties": False,
}
