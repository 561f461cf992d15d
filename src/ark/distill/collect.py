"""Teacher trajectories, label-free (the paper's way, SPEC §7).

Any ``ChatModel`` — an OpenAI-compatible teacher or the local model — runs ARK
``per_query`` times per query (temperature 0.7, T_max 20) through the same
:class:`~ark.agent.Retriever` as ``ark eval``; records and trajectories go to a
:class:`~ark.eval.RunStore`, so an interrupted collection resumes without loss or
duplication. Questions carry no answers; when a labelled set is given, its gold is
dropped on loading and nothing is scored.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ark._safe import redact_url
from ark.agent import Retriever
from ark.errors import ArkError
from ark.eval import Method, RetrieverMethod, RunStore
from ark.eval._runner import redone_counts
from ark.index import Index
from ark.llm import ChatModel


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
    source: str, index: Index, *, split: str = "train", data_dir: Path | None = None
) -> list[Question]:
    """A questions JSONL, or a dataset spec of ``ark eval`` (``metaqa:2-hop``,
    ``stark:prime``, ``jsonl:PATH``) whose gold answers are dropped here."""
    kind = source.partition(":")[0]
    if kind in ("metaqa", "stark", "jsonl") and ":" in source:
        from ark.eval.datasets import load_dataset  # the same parsing as `ark eval`

        queries, _ = load_dataset(source, index, split, data_dir)
        return [Question(q.id, q.text) for q in queries]
    return read_questions(source)


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
) -> dict[str, Any]:
    """Run the teacher; returns a summary (queries, trajectories, tokens per query).

    ``method`` replaces the in-process retriever built from ``llm`` — e.g. a
    :class:`~ark.eval._ray.RayMethod` that spreads the queries over a Ray cluster (its
    workers build the same retriever); the run store stays in this process either way.
    Resuming redoes failed queries (unless ``retry_failed`` is false) and those whose
    trajectories are missing or damaged; the summary's ``redone`` counts them.
    ``settings``: more of what defines the run (the sample, the endpoint), recorded
    and compared on resume like the rest.
    """
    if method is None:
        if llm is None:
            raise ValueError("collect needs an llm or a method")
        method = RetrieverMethod(
            Retriever(index, llm, n_agents=per_query, max_steps=max_steps, temperature=temperature)
        )
        model_name = llm.name
    store = RunStore(out)
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
    done = store.start(config, resume=resume, retry_failed=retry_failed)
    try:
        todo = [q for q in questions if q.id not in done]
        total = len(questions)
        finished = total - len(todo)
        if progress:
            progress(finished, total)

        async def run() -> None:
            nonlocal finished
            sem = asyncio.Semaphore(max(1, concurrency))
            lock = asyncio.Lock()

            async def one(q: Question) -> None:
                nonlocal finished
                async with sem:
                    t0 = time.perf_counter()
                    try:
                        output = await method(q.id, q.text)
                        trajs, error = output.trajectories, output.error
                    except Exception as exc:  # one query's failure must not end the run
                        trajs, error = [], f"{type(exc).__name__}: {exc}"
                    wall = time.perf_counter() - t0
                record = {
                    "query_id": q.id,
                    "query": q.text,
                    "status": "failed" if error else "ok",
                    "error": error,
                    "wall_s": round(wall, 4),
                    "prompt_tokens": sum(t.usage["prompt_tokens"] for t in trajs),
                    "completion_tokens": sum(t.usage["completion_tokens"] for t in trajs),
                    "trajectory_ids": [t.id for t in trajs],
                }
                async with lock:
                    store.append(record, trajs)
                    done[q.id] = record
                    finished += 1
                    if progress:
                        progress(finished, total)

            await asyncio.gather(*(one(q) for q in todo))

        asyncio.run(run())
        records = [done[q.id] for q in questions]
        tokens = [r["prompt_tokens"] + r["completion_tokens"] for r in records]
        summary = {
            "queries": len(records),
            "failed": sum(r["status"] == "failed" for r in records),
            "trajectories": sum(len(r["trajectory_ids"]) for r in records),
            "tokens": sum(tokens),
            "tokens_per_query": sum(tokens) / len(tokens) if tokens else 0.0,
            "path": str(store.trajectories),
            "config": config,
        }
        redone = redone_counts(store, [q.id for q in questions])
        if any(redone.values()):
            summary["redone"] = redone
        store.write_json("summary.json", summary)
        return summary
    finally:
        store.close()  # other writers may have the directory now
