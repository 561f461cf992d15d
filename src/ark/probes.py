"""The internals the benchmarks measure one at a time, named in one place.

A benchmark that times a decoder's draft, scores the reading's chain table or probes
the answer step's prompt needs parts below the public API. They are re-exported here,
so that ``benchmarks/`` imports only public modules (the import contract
``private`` in ``pyproject.toml`` covers it) and a reader sees in one file which
internals a measurement depends on. Nothing here is stable API: a name moves with the
code it measures.
"""

from __future__ import annotations

import ark.answer._write as answer_write
import ark.linking._encoder as linking_encoders
from ark.index._verify import sample_problems
from ark.linking._chains import step_table
from ark.strategies.ark._prompt import PROMPT_VARIANTS
from ark.strategies.guided.hints._lines import named_relations
from ark.tools._phrases import (
    EMBEDDING_MARGIN,
    EMBEDDING_THRESHOLD,
    MAX_MATCHED,
    RelationPhrases,
    phrase_encoder_name,
)

__all__ = [
    "EMBEDDING_MARGIN",
    "EMBEDDING_THRESHOLD",
    "MAX_MATCHED",
    "PROMPT_VARIANTS",
    "RelationPhrases",
    "answer_write",
    "linking_encoders",
    "local_drafters",
    "named_relations",
    "phrase_encoder_name",
    "sample_problems",
    "step_table",
]


def local_drafters():
    """The local decoder's two drafters and its bound on forced tokens:
    ``(lookup_draft, format_drafter, MAX_FORCED)``. Imported on call: they need the
    ``[local]`` extra (llama-cpp-python)."""
    from ark.llm.local._lookup import MAX_FORCED, lookup_draft
    from ark.llm.local._skeleton import format_drafter

    return lookup_draft, format_drafter, MAX_FORCED
