"""From a question in the user's words to the graph's relations and nodes.

:class:`RelationLinker` ranks the relations a question uses, with a confidence, from
the index's described schema (labels, aliases, descriptions) and, when the ``[dense]``
extra is installed, a sentence encoder; :func:`spot_entities` finds the node names
a question contains; :func:`read_chain` reads the question's relation chain among the
paths the graph has from the node it names, never ending it at a nameless mediator
node (:func:`mediators`: Freebase's compound values, RDF blank nodes). The hints of
``ark-guided``, GraphSearch's grounding and synthetic questions read the same linking.

The reading is its own room in the layers contract: above the tools and the tool
session (it reads the index, the graph and :mod:`ark.words`, never the tools), below
the strategies that act on it, and it never calls a model: the words a model writes
for the schema come from ``ark index describe`` (:mod:`ark.describe`), stored in the
index before the reading starts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ark.index import EncoderChoice, linking_encoder, shared_encoder
from ark.reading._chains import (
    BEAM,
    DEFAULT_WEIGHTS,
    FEATURES,
    RERANKED,
    Chain,
    ChainWeights,
    PathFacts,
    path_features,
    path_words,
)
from ark.reading._entities import EntityMention, spot_entities
from ark.reading._linker import (
    CONFIDENT,
    Encoder,
    Link,
    Linking,
    Mention,
    RelationLinker,
    entity_positions,
)
from ark.reading._mediators import Mediators, identifier_name, mediators, onward_relation
from ark.reading._search import read_chains
from ark.words import tokens

if TYPE_CHECKING:
    from ark.index import Index

__all__ = [
    "BEAM",
    "CONFIDENT",
    "DEFAULT_WEIGHTS",
    "FEATURES",
    "READING_VERSION",
    "RERANKED",
    "Chain",
    "ChainWeights",
    "Encoder",
    "EntityMention",
    "Link",
    "Linking",
    "Mediators",
    "Mention",
    "PathFacts",
    "Reading",
    "RelationLinker",
    "entity_positions",
    "identifier_name",
    "linker_for",
    "mediators",
    "onward_relation",
    "path_features",
    "path_words",
    "ranked_chains",
    "read_chain",
    "read_chain_and_rival",
    "read_chains",
    "read_question",
    "spot_entities",
]


#: What the reading computes, numbered: a fit made on another number's readings (the
#: plan confidence, ``ark index fit-plans``) is stale. Raised when a change alters how
#: questions are read (2: the English rules of issue 64 removed; 3: the encoder's
#: similarity of question and path, :attr:`ChainWeights.similarity`; 4: no cost for a
#: path ending at a type the question does not name).
READING_VERSION = 4


@dataclass(frozen=True)
class Reading:
    """A question read against one index: its relations and the nodes it names."""

    linking: Linking
    entities: tuple[EntityMention, ...]


def linker_for(index: Index, encoder: EncoderChoice = "auto") -> RelationLinker:
    """The index's linker, built once per opened index and encoder setting: ``auto`` uses
    the sentence encoder when the ``[dense]`` extra is installed
    (:func:`ark.index.linking_encoder` says which it is)."""
    use_dense = linking_encoder(encoder) is not None
    described = index.described
    linkers: dict[tuple[bool, int], RelationLinker] = index.memo("linkers", dict)
    # Keyed by the described schema too: `ark index describe` in this process (which
    # replaces it) must not leave a linker reading the old words.
    key = (use_dense, id(described))
    cached = linkers.get(key)
    if cached is None or cached.described is not described:
        encoder = shared_encoder() if use_dense else None
        cached = linkers[key] = RelationLinker(described, encoder=encoder)
    return cached


def read_question(index: Index, question: str, encoder: EncoderChoice = "auto") -> Reading:
    """The linker's reading of ``question`` with the nodes it names: entities are
    spotted first, a one-word name that is also a relation or type word by its label
    (a tag called *director*) is dropped, and the relations are linked with the
    remaining names' words masked."""
    linker = linker_for(index, encoder)
    first = linker.link(question, dense=False)
    taken = {i for link in first.confident() for i in link.positions}
    taken |= {i for _, at in first.types for i in at}
    entities = [
        e for e in spot_entities(index, question) if e.end - e.start > 1 or e.start not in taken
    ]
    linking = linker.link(
        question, entities=[e.name for e in entities], spans=[(e.start, e.end) for e in entities]
    )
    return Reading(linking, tuple(entities))


def read_chain(
    index: Index,
    reading: Reading,
    question: str,
    weights: ChainWeights = DEFAULT_WEIGHTS,
    encoder: EncoderChoice = "auto",
) -> Chain | None:
    """The best chain for a question naming exactly one node (several: an
    intersection, read by the hints from each node's own relation; none: nothing to
    start from), or None; ``weights``: the chain scorer's; ``encoder``: as
    :func:`read_question`'s."""
    return read_chain_and_rival(index, reading, question, weights, encoder)[0]


#: How far down the ranked chains :func:`read_chain_and_rival` looks for the rival: as
#: far as the encoder reorders them.
RIVAL_DEPTH = RERANKED


def ranked_chains(
    index: Index,
    reading: Reading,
    question: str,
    weights: ChainWeights = DEFAULT_WEIGHTS,
    encoder: EncoderChoice = "auto",
    limit: int = RIVAL_DEPTH,
) -> list[Chain]:
    """The best ``limit`` chains of a question naming exactly one node, best first
    (:func:`read_chains` from that node with the reading's masked names and node
    types); [] for a question naming none or several."""
    if len(reading.entities) != 1:
        return []
    entity = reading.entities[0]
    return read_chains(
        index,
        linker_for(index, encoder),
        tokens(question),
        entity.index,
        set(reading.linking.entity_positions),
        reading.linking.types,
        anchor_span=(entity.start, entity.end),
        limit=limit,
        weights=weights,
    )


def read_chain_and_rival(
    index: Index,
    reading: Reading,
    question: str,
    weights: ChainWeights = DEFAULT_WEIGHTS,
    encoder: EncoderChoice = "auto",
) -> tuple[Chain | None, Chain | None]:
    """:func:`read_chain`'s chain and its rival: the best chain below it that reaches
    other nodes (the one its :attr:`Chain.runner_up` scores), or None; the rival's
    ``runner_up`` is the best chain's score, so its margin says how far below it is.
    Two readings a question leaves close are the choice the model is asked to make
    (:mod:`ark.strategies.guided.plans`)."""
    chains = ranked_chains(index, reading, question, weights, encoder)
    if not chains:
        return None, None
    best = chains[0]
    rival = next((c for c in chains[1:] if c.score == best.runner_up), None)
    # The rival's own rival is the best chain: its margin is below zero.
    return best, None if rival is None else replace(rival, runner_up=best.score)
