"""Retrieval: several agents run in parallel and their answers fused (SPEC §5).

:class:`Retriever` runs any strategy's agents concurrently and fuses their answer
lists by vote (:mod:`ark.fusion`); the result carries each ranked node's evidence
paths (:func:`explain`) and, on a graph built from documents, the evidence passages
(:func:`evidence_passages`). The retriever only retrieves: answering in words is the
step above it (``ark.answer.answer_question``).
"""

from ark.retrieval._evidence import (
    Addition,
    EvidencePath,
    Hop,
    NodeEvidence,
    evidence_names,
    explain,
    paths_to,
    render_evidence,
    render_path,
)
from ark.retrieval._passages import (
    MAX_LINKED,
    EvidencePassage,
    evidence_passages,
    linked_passages,
    question_relevance,
)
from ark.retrieval._retriever import (
    RankedNode,
    RetrievalResult,
    Retriever,
    fuse_trajectories,
)

__all__ = [
    "MAX_LINKED",
    "Addition",
    "EvidencePassage",
    "EvidencePath",
    "Hop",
    "NodeEvidence",
    "RankedNode",
    "RetrievalResult",
    "Retriever",
    "evidence_names",
    "evidence_passages",
    "explain",
    "fuse_trajectories",
    "linked_passages",
    "paths_to",
    "question_relevance",
    "render_evidence",
    "render_path",
]
