"""Dataset specs, the one parser of ``--dataset`` (``ark eval``, ``ark distill
collect``, the benchmarks): ``metaqa:N-hop``, ``stark:amazon|mag|prime``, ``jsonl:PATH``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ark.datasets._queries import Query, load_jsonl
from ark.errors import ArkError

if TYPE_CHECKING:
    from ark.index import Index


def default_split(dataset: str) -> str:
    """MetaQA's splits are train/dev/test; STaRK's are train/val/test (no dev)."""
    return "test" if dataset.startswith("stark:") else "dev"


def load_dataset(
    dataset: str, index: Index, split: str, data_dir: Path | None
) -> tuple[list[Query], list[str] | None]:
    """A dataset spec (``metaqa:2-hop``, ``stark:prime``, ``jsonl:PATH``) → its queries and
    the candidate node types to score (None: every node); ``ark eval`` and ``ark distill
    collect`` parse ``--dataset`` here."""
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
    raise ArkError(f"unknown --dataset {dataset!r}; use metaqa:N-hop, stark:GRAPH or jsonl:PATH")
