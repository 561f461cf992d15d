"""Dataset specs, the one parser of ``--dataset`` (``ark eval``, ``ark distill
collect``, the benchmarks): ``metaqa:N-hop``, ``stark:amazon|mag|prime``, ``jsonl:PATH``,
and the question sets over documents ``musique:FILE`` and ``hotpotqa:FILE``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ark.datasets._queries import Query, load_jsonl
from ark.errors import ArkError

if TYPE_CHECKING:
    from ark.index import Index

#: Question sets over a graph built from documents: their gold nodes are passages,
#: found by title and text, and they score only passage nodes.
DOCUMENT_DATASETS = ("musique", "hotpotqa", "docqa")


def default_split(dataset: str) -> str:
    """MetaQA's splits are train/dev/test; STaRK's are train/val/test (no dev)."""
    return "test" if dataset.startswith("stark:") else "dev"


def load_dataset(
    dataset: str, index: Index, split: str, data_dir: Path | None
) -> tuple[list[Query], list[str] | None]:
    """A dataset spec (``metaqa:2-hop``, ``stark:prime``, ``jsonl:PATH``, ``musique:FILE``,
    ``hotpotqa:FILE``, ``docqa:FILE``) → its queries and
    the candidate node types to score (None: every node); ``ark eval`` and ``ark distill
    collect`` parse ``--dataset`` here. A set with no question, or with one id twice
    (a run keys its records by id: the second would be skipped as done), is refused."""
    queries, types = _load(dataset, index, split, data_dir)
    if not queries:
        raise ArkError(f"--dataset {dataset!r} ({split}): no questions in it")
    first: dict[str, int] = {}
    for i, q in enumerate(queries):
        if q.id in first:
            raise ArkError(
                f"--dataset {dataset!r}: question id {q.id!r} appears twice (questions "
                f"{first[q.id]} and {i}); a run keys its records by id, so give each its own"
            )
        first[q.id] = i
    return queries, types


def _load(
    dataset: str, index: Index, split: str, data_dir: Path | None
) -> tuple[list[Query], list[str] | None]:
    kind, _, arg = dataset.partition(":")
    if kind == "metaqa":
        hop = arg.split("-")[0]
        if not hop.isdigit():
            raise ArkError(f"--dataset metaqa:<N>-hop expected, got {dataset!r}")
        from ark.datasets.metaqa import default_metaqa_dir, load_metaqa

        root = data_dir or default_metaqa_dir()
        return load_metaqa(root, int(hop), split=split, index=index), None
    if kind == "stark":
        from ark.datasets.stark import CANDIDATE_TYPES, load_stark_qa, stark_candidate_types

        name = arg.lower()
        if name not in CANDIDATE_TYPES:
            raise ArkError(f"--dataset stark:{arg}: choose stark:amazon, stark:mag or stark:prime")
        if data_dir is None:
            raise ArkError("stark datasets need --data-dir pointing at qa/<graph>/ (stark_qa.csv)")
        return load_stark_qa(data_dir, split), stark_candidate_types(name, index.meta)
    if kind == "jsonl":
        return load_jsonl(Path(arg), index), None
    if kind in DOCUMENT_DATASETS:
        if not arg:
            raise ArkError(f"--dataset {kind}:FILE expected (the question file), got {dataset!r}")
        from ark.graph import PASSAGE_TYPE

        if kind == "musique":
            from ark.datasets.musique import load_musique

            return load_musique(Path(arg), index), [PASSAGE_TYPE]
        if kind == "docqa":
            from ark.datasets.docqa import load_docqa

            return load_docqa(Path(arg), index), [PASSAGE_TYPE]
        from ark.datasets.hotpotqa import load_hotpotqa

        return load_hotpotqa(Path(arg), index), [PASSAGE_TYPE]
    raise ArkError(
        f"unknown --dataset {dataset!r}; use metaqa:N-hop, stark:GRAPH, jsonl:PATH, "
        "musique:FILE, hotpotqa:FILE or docqa:FILE"
    )


def is_document_dataset(dataset: str) -> bool:
    """Whether ``dataset`` asks questions of passages (``musique:``, ``hotpotqa:``,
    ``docqa:``): its gold nodes are supporting passages, and passage recall and answers
    are scored."""
    return dataset.partition(":")[0] in DOCUMENT_DATASETS
