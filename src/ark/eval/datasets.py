"""Query sets: MetaQA, STaRK's QA files, and a generic JSONL format.

Every loader returns :class:`Query` objects whose gold answers are node indices of
the index being evaluated. Answers given by name that the graph does not contain
are kept in ``missing`` (and a query with no answer in the graph is reported
separately by the runner), never silently dropped.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ark.errors import ArkError
from ark.index import Index

_BRACKETS = re.compile(r"\[([^\]]+)\]")


@dataclass(frozen=True)
class Query:
    id: str
    text: str
    gold: frozenset[int]
    qtype: str | None = None
    missing: tuple[str, ...] = field(default=())


def default_metaqa_dir() -> Path:
    """``$ARK_METAQA_DIR``, else ``../shared/data/metaqa`` beside the repository."""
    env = os.environ.get("ARK_METAQA_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[4] / "shared" / "data" / "metaqa"


def _name_lookup(index: Index) -> dict[str, list[int]]:
    lookup: dict[str, list[int]] = {}
    for i, name in enumerate(index.graph.names.to_pylist()):
        lookup.setdefault(name, []).append(i)
    return lookup


def load_metaqa(data_dir: str | Path, hop: int, *, split: str = "dev", index: Index) -> list[Query]:
    """``{hop}-hop/qa_{split}.txt`` (``question<TAB>a1|a2``) with its qtype file.

    The topic entity's square brackets are removed (the agent reads the natural
    question); answer names map to nodes by exact string match.
    """
    root = Path(data_dir) / f"{hop}-hop"
    qa = root / f"qa_{split}.txt"
    if not qa.exists():
        raise ArkError(f"MetaQA file {qa} not found; point --data-dir at the MetaQA folder")
    qtype_file = root / f"qa_{split}_qtype.txt"
    qtypes = qtype_file.read_text(encoding="utf-8").splitlines() if qtype_file.exists() else []
    lookup = _name_lookup(index)
    queries = []
    with qa.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            line = line.rstrip("\n")
            if not line:
                continue
            question, sep, answers = line.partition("\t")
            if not sep or not answers:
                raise ArkError(f"{qa}:{lineno}: expected 'question<TAB>answer|answer'")
            gold: set[int] = set()
            missing = []
            for name in answers.split("|"):
                if name in lookup:
                    gold.update(lookup[name])
                else:
                    missing.append(name)
            queries.append(
                Query(
                    id=f"{hop}-hop/{split}/{lineno}",
                    text=_BRACKETS.sub(r"\1", question),
                    gold=frozenset(gold),
                    qtype=qtypes[lineno - 1] if lineno - 1 < len(qtypes) else None,
                    missing=tuple(missing),
                )
            )
    return queries


def load_jsonl(path: str | Path, index: Index) -> list[Query]:
    """``{"id", "query", "answer_ids" | "answer_names", "qtype"?}`` per line."""
    path = Path(path)
    if not path.exists():
        raise ArkError(f"query file {path} not found")
    lookup: dict[str, list[int]] | None = None
    n = index.graph.n_nodes
    queries = []
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                qid, text = str(obj["id"]), obj["query"]
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise ArkError(
                    f"{path}:{lineno}: need a JSON object with id and query ({exc})"
                ) from exc
            gold: set[int] = set()
            missing: list[str] = []
            if "answer_ids" in obj:
                for a in obj["answer_ids"]:
                    if not isinstance(a, int) or not 0 <= a < n:
                        raise ArkError(
                            f"{path}:{lineno}: answer id {a!r} is not a node of the index"
                        )
                    gold.add(a)
            elif "answer_names" in obj:
                lookup = lookup or _name_lookup(index)
                for name in obj["answer_names"]:
                    if name in lookup:
                        gold.update(lookup[name])
                    else:
                        missing.append(name)
            else:
                raise ArkError(f"{path}:{lineno}: needs answer_ids or answer_names")
            queries.append(Query(qid, text, frozenset(gold), obj.get("qtype"), tuple(missing)))
    return queries


def load_stark_qa(qa_dir: str | Path, split: str = "test", *, human: bool = False) -> list[Query]:
    """STaRK's ``stark_qa.csv`` (``id, query, answer_ids``) restricted to a split file.

    ``split`` is one of ``train``, ``val``, ``test``, ``test-0.1`` (query ids, one per
    line, in ``split/``); ``human=True`` reads the human-generated set instead.
    """
    root = Path(qa_dir)
    csv_path = root / ("stark_qa_human_generated_eval.csv" if human else "stark_qa.csv")
    if not csv_path.exists():
        nested = root / "stark_qa" / csv_path.name
        csv_path = nested if nested.exists() else csv_path
    if not csv_path.exists():
        raise ArkError(f"STaRK QA file {csv_path} not found")
    wanted: set[str] | None = None
    if not human:
        split_file = root / "split" / f"{split}.index"
        if not split_file.exists():
            raise ArkError(f"STaRK split file {split_file} not found")
        wanted = {s.strip() for s in split_file.read_text().split() if s.strip()}
    queries = []
    with csv_path.open(encoding="utf-8", newline="") as f:
        for lineno, row in enumerate(csv.DictReader(f), start=2):
            try:
                qid = str(int(row["id"]))
                answers = ast.literal_eval(row["answer_ids"])
                text = row["query"]
            except (KeyError, ValueError, SyntaxError) as exc:
                raise ArkError(f"{csv_path}:{lineno}: bad row ({exc})") from exc
            if wanted is not None and qid not in wanted:
                continue
            queries.append(Query(qid, text, frozenset(int(a) for a in answers)))
    return queries


def sample(queries: Sequence[Query], limit: int, seed: int = 0) -> list[Query]:
    """A deterministic sample of ``limit`` queries, kept in their original order."""
    if limit >= len(queries):
        return list(queries)
    chosen = sorted(random.Random(seed).sample(range(len(queries)), limit))
    return [queries[i] for i in chosen]


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
        root = data_dir or default_metaqa_dir()
        return load_metaqa(root, int(hop), split=split, index=index), None
    if kind == "stark":
        from ark.graph import CANDIDATE_TYPES, stark_candidate_types

        name = arg.lower()
        if name not in CANDIDATE_TYPES:
            raise ArkError(f"--dataset stark:{arg}: choose stark:amazon, stark:mag or stark:prime")
        if data_dir is None:
            raise ArkError("stark datasets need --data-dir pointing at qa/<graph>/ (stark_qa.csv)")
        return load_stark_qa(data_dir, split), stark_candidate_types(name, index.meta)
    if kind == "jsonl":
        return load_jsonl(Path(arg), index), None
    raise ArkError(f"unknown --dataset {dataset!r}; use metaqa:N-hop, stark:GRAPH or jsonl:PATH")
