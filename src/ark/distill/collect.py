"""Teacher trajectories, label-free (the paper's way, SPEC §7).

Any ``ChatModel`` — an OpenAI-compatible teacher or the local model — runs ARK
``per_query`` times per query (temperature 0.7, T_max 20) through the same
:class:`~ark.retrieval.Retriever` as ``ark eval``; records and trajectories go to a
:class:`~ark.eval.RunStore`, so an interrupted collection resumes without loss or
duplication (the loop is :func:`ark.eval.run_resumable`, the evaluation's own).
Questions carry no answers; when a labelled set is given, its gold is
dropped on loading and nothing is scored.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ark._safe import redact_url
from ark.errors import ArkError
from ark.eval import Method, MethodOutput, RaySettings, RetrieverMethod, RunStore, run_resumable
from ark.index import Index
from ark.llm import ChatModel, ModelSettings
from ark.retrieval import Retriever


@dataclass(frozen=True)
class Question:
    id: str
    text: str


def read_questions(path: str | Path) -> list[Question]:
    """``{"id", "query"}`` per line; any other field (answers included) is ignored."""
    path = Path(path)
    if not path.exists():
        raise ArkError(f"questions file {path} not found")
    out = []
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                qid, text = obj.get("id", f"q{lineno}"), obj["query"]
                if not isinstance(text, str) or not text.strip():
                    raise ValueError("query must be a non-empty string")
            except (json.JSONDecodeError, KeyError, AttributeError, ValueError) as exc:
                raise ArkError(f"{path}:{lineno}: expected {{'id', 'query'}} ({exc})") from exc
            out.append(Question(str(qid), text))
    if len({q.id for q in out}) != len(out):
        raise ArkError(f"{path}: question ids must be unique")
    return out


def load_questions(
    source: str,
    index: Index,
    *,
    split: str = "train",
    data_dir: Path | None = None,
    limit: int | None = None,
    sample_seed: int = 0,
) -> list[Question]:
    """A questions JSONL, or a dataset spec of ``ark eval`` (``metaqa:2-hop``,
    ``stark:prime``, ``jsonl:PATH``) whose gold answers are dropped here; ``limit``:
    a deterministic sample of that many (``ark eval --limit``'s)."""
    kind = source.partition(":")[0]
    if kind in ("metaqa", "stark", "jsonl") and ":" in source:
        from ark.datasets import load_dataset  # the same parsing as `ark eval`

        queries, _ = load_dataset(source, index, split, data_dir)
        out = [Question(q.id, q.text) for q in queries]
    else:
        out = read_questions(source)
    if limit is not None:
        from ark.datasets import sample

        out = sample(out, limit, sample_seed)  # type: ignore[arg-type]
    return out


def collect_settings(
    source: str, split: str, limit: int | None, sample_seed: int, base_url: str | None
) -> dict[str, Any]:
    """What else defines a collection: the split (of a dataset spec), the sample and
    the endpoint — for ``collect(settings=...)``; each is None when it does not apply."""
    is_spec = source.partition(":")[0] in ("metaqa", "stark", "jsonl") and ":" in source
    return {
        "split": split if is_spec else None,
        "limit": limit,
        "sample_seed": sample_seed if limit is not None else None,
        "base_url": redact_url(base_url),
    }


def collect(
    questions: Sequence[Question],
    index: Index,
    llm: ChatModel | None,
    out: str | Path,
    *,
    source: str = "",
    per_query: int = 3,
    temperature: float = 0.7,
    max_steps: int = 20,
    resume: bool = False,
    concurrency: int = 1,
    progress: Callable[[int, int], None] | None = None,
    method: Method | None = None,
    model_name: str | None = None,
    retry_failed: bool = True,
    settings: dict[str, Any] | None = None,
    model: ModelSettings | None = None,
    ray: RaySettings | None = None,
) -> dict[str, Any]:
    """Run the teacher; returns a summary (queries, trajectories, tokens per query).

    The teacher is ``llm``, or the model ``model`` describes (built here, or by each
    Ray worker with ``ray``: the queries spread over a cluster, the run store stays in
    this process). ``method`` replaces the retriever altogether. The loop is the
    evaluation's resumable runner (:func:`ark.eval.run_resumable`): resuming redoes
    failed queries (unless ``retry_failed`` is false) and those whose trajectories are
    missing or damaged; the summary's ``redone`` counts them. ``settings``: more of
    what defines the run (the sample, the endpoint), recorded and compared on resume
    like the rest.
    """
    ray_runner = None
    if method is None and ray is not None:
        from ark.eval import MethodSpec, RayMethod

        spec = MethodSpec(
            method="ark",
            index=str(Path(index.path).resolve()),
            llm=(model or ModelSettings()).kwargs(),
            retriever={"n_agents": per_query, "max_steps": max_steps, "temperature": temperature},
        )
        method = ray_runner = RayMethod(
            spec, address=ray.address, workers=ray.workers, per_worker=concurrency
        )
        model_name = ray_runner.worker_info[0].get("model")
        concurrency = ray_runner.slots
    try:
        if method is None:
            if llm is None and model is None:
                raise ValueError("collect needs an llm, model settings or a method")
            llm = llm if llm is not None else model.build()  # type: ignore[union-attr]
            method = RetrieverMethod(
                Retriever(
                    index, llm, n_agents=per_query, max_steps=max_steps, temperature=temperature
                )
            )
            model_name = llm.name
        config = {
            "method": "collect",
            "source": source,
            "index": str(Path(index.path).resolve()),
            "model": model_name,
            "per_query": per_query,
            "temperature": temperature,
            "max_steps": max_steps,
            "concurrency": concurrency,
            **(settings or {}),
        }
        store = RunStore(out)

        def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
            tokens = [r["prompt_tokens"] + r["completion_tokens"] for r in records]
            return {
                "queries": len(records),
                "failed": sum(r["status"] == "failed" for r in records),
                "trajectories": sum(len(r["trajectory_ids"]) for r in records),
                "tokens": sum(tokens),
                "tokens_per_query": sum(tokens) / len(tokens) if tokens else 0.0,
                "path": str(store.trajectories),
                "config": config,
            }

        return asyncio.run(
            run_resumable(
                questions,
                method,
                store,
                config,
                record=collect_record,
                summarize=summarize,
                resume=resume,
                concurrency=concurrency,
                progress=progress,
                retry_failed=retry_failed,
            )
        )
    finally:
        if ray_runner is not None:
            ray_runner.close()


def collect_record(q: Question, out: MethodOutput, wall_s: float) -> dict[str, Any]:
    """A collection's line: the question, its trajectories' ids and tokens, no score."""
    trajs = out.trajectories
    return {
        "query_id": q.id,
        "query": q.text,
        "status": "failed" if out.error else "ok",
        "error": out.error,
        "wall_s": round(wall_s, 4),
        "prompt_tokens": sum(t.usage["prompt_tokens"] for t in trajs),
        "completion_tokens": sum(t.usage["completion_tokens"] for t in trajs),
        "trajectory_ids": [t.id for t in trajs],
    }
