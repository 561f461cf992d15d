"""``ark ingest``: documents → chunks → entities and relations → passages → index.

The steps, each its own module: read the documents (:mod:`._documents`), cut them into
overlapping chunks (:mod:`._chunks`), extract entities and triples from every chunk
with a model (:mod:`._model`) or with spaCy (:mod:`._fast`), caching each chunk's
extraction in the work directory as it arrives (:mod:`._work`), write the passages
JSONL, and build the index from it with the ``passages`` reader, so an ingested graph
is exactly what ``ark index build --format passages`` makes of the same file.

A killed run resumes where it stopped: run the same command again and every chunk
already in the work directory is reused, none extracted twice or written twice.

``into=INDEX`` adds documents to an index ``ark ingest`` built, instead of building
one: the new documents' chunks are extracted as above (the same cache), their
records merged into the work directory's passages file (a document given again
replaces its records where they were: unchanged text, unchanged records), and the
index synced with that file (:func:`ark.index.sync_index`: one atomic update, only
what changed written). So the index holds what a full ingest of every document holds,
and a run killed at any point resumes: the merge and the sync find the same
difference again.
A bad model reply is counted and the chunk kept with nothing extracted; a failed
model call (the backend's error) is counted and retried on the next run; only a
model that fails on every chunk stops the ingestion, before any index is built.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from ark._files import write_atomic
from ark._safe import JSON_ERRORS, dumps, jsonl_lines
from ark.cost import PriceTable
from ark.errors import ArkError
from ark.graph import entity_key, relation_key
from ark.ingest._chunks import CHUNK_TOKENS, OVERLAP, Chunk, check_sizes, chunk_documents
from ark.ingest._documents import read_documents
from ark.ingest._extraction import Extraction
from ark.ingest._fast import FastExtractor
from ark.ingest._model import ModelExtractor
from ark.ingest._work import PASSAGES, WorkDir, chunk_key
from ark.llm import ChatModel, LLMError

__all__ = ["IngestReport", "ProgressFn", "default_work_dir", "ingest"]

#: ``progress(stage, done, total)``, the signature ``build_index`` reports with.
ProgressFn = Callable[[str, int, int], None]
ExtractorName = Literal["model", "fast"]


@dataclass
class IngestReport:
    """What an ingestion read, extracted, cost and built."""

    documents: int
    empty_documents: int
    chunks: int
    extractor: str
    #: Chunks extracted by this run; chunks whose extraction came from the work
    #: directory (an earlier run, or a repeated text).
    extracted: int
    reused: int
    #: Model replies that said nothing usable (the chunk has no entities); replies
    #: cut at the token limit (kept: what was complete before the cut); triples
    #: dropped as malformed; model calls that failed (retried on the next run).
    bad_replies: int
    cut_replies: int
    dropped_triples: int
    failed: int
    entities: int
    triples: int
    relations: int
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    llm_s: float
    usd: float | None
    seconds: float
    work_dir: str
    passages: str
    index: str | None = None
    nodes: int | None = None
    edges: int | None = None
    damaged_cache_lines: int = 0
    #: Files of a documents folder that were not read (not ``.txt`` / ``.md``).
    other_files: list[str] = field(default_factory=list)
    #: A folder's entries not read and why (links out of it, devices, a folder twice).
    skipped: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: With ``into``: documents new to the index, given again with other text, and
    #: given again unchanged; and what the sync added and removed.
    update: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def default_work_dir(out: str | Path) -> Path:
    """Where ``ark ingest DOCS -o OUT`` keeps its cache: ``OUT.ingest`` beside the
    index (not inside it: an index directory is replaced whole when rebuilt)."""
    out = Path(out)
    return out.with_name(out.name + ".ingest")


def ingest(
    docs: str | Path,
    out: str | Path | None,
    *,
    extractor: ExtractorName | ModelExtractor | FastExtractor = "model",
    llm: ChatModel | None = None,
    model: str | None = None,
    base_url: str | None = None,
    chunk_tokens: int = CHUNK_TOKENS,
    overlap: int = OVERLAP,
    work_dir: str | Path | None = None,
    concurrency: int = 1,
    max_tokens: int = 1024,
    seed: int = 0,
    pipeline: str | None = None,
    prices: PriceTable | None = None,
    limit: int | None = None,
    progress: ProgressFn | None = None,
    index_options: dict[str, Any] | None = None,
    follow_links: bool = False,
    request_timeout: float | None = None,
    max_retries: int | None = None,
    into: str | Path | None = None,
) -> IngestReport:
    """Ingest the documents at ``docs`` into an index at ``out``, or add them to the
    index ``into`` that an earlier ingest built (its work directory by default
    ``INTO.ingest``; see the module's docstring).

    ``extractor``: ``"model"`` (``llm``, or the model that ``make_chat_model(model,
    base_url)`` gives: the local one by default), ``"fast"`` (spaCy; ``pipeline``
    names an installed one), or an extractor object. ``chunk_tokens``/``overlap``
    size the chunks (see :mod:`ark.ingest._chunks` for what a token is).
    ``work_dir`` (default :func:`default_work_dir`) holds the per-chunk cache that
    makes a rerun resume; ``concurrency`` model calls run at once (a server
    benefits; the local model serves one at a time). ``limit`` ingests only the
    first N documents (a sample to try a model on). ``prices`` turns the tokens
    into USD. ``out=None`` stops after writing the passages file (no index).
    ``index_options`` go to :func:`ark.index.build_index` (``tokenizer``,
    ``params``). In a folder, a link is followed only into the folder itself unless
    ``follow_links`` (:func:`read_documents`). ``request_timeout`` (seconds one model
    call may take) and ``max_retries`` go to the model ``make_chat_model`` makes, as
    for the agents (a server's defaults: 120 s and 4 retries).
    """
    started = time.perf_counter()
    check_sizes(chunk_tokens, overlap)
    if concurrency < 1:
        raise ArkError(f"--concurrency must be at least 1, got {concurrency}")
    if out is not None and into is not None:
        raise ArkError("give -o OUT (a new index) or --into INDEX (add to one), not both")
    if out is not None:
        _check_target(Path(out))
    if into is not None:
        _check_into(Path(into), Path(work_dir) if work_dir is not None else None)
    work = WorkDir(work_dir if work_dir is not None else default_work_dir(into or out or docs))
    work.lock()  # one ingest at a time in a work directory
    try:
        found = read_documents(docs, follow_links=follow_links)
        documents = found.documents[:limit] if limit is not None else found.documents
        chunks = chunk_documents(documents, chunk_tokens=chunk_tokens, overlap=overlap)
        if progress:  # loading the local model takes seconds, minutes under load
            progress("loading", 0, 1)
        ext = _extractor(
            extractor,
            llm,
            model,
            base_url,
            seed,
            max_tokens,
            pipeline,
            request_timeout,
            max_retries,
        )
        if progress:
            progress("loading", 1, 1)
        report = IngestReport(
            documents=len(documents),
            empty_documents=found.empty,
            other_files=found.other_files,
            skipped=found.skipped,
            chunks=len(chunks),
            extractor=ext.id,
            extracted=0,
            reused=0,
            bad_replies=0,
            cut_replies=0,
            dropped_triples=0,
            failed=0,
            entities=0,
            triples=0,
            relations=0,
            llm_calls=0,
            prompt_tokens=0,
            completion_tokens=0,
            llm_s=0.0,
            usd=None,
            seconds=0.0,
            work_dir=str(work.path),
            passages=str(work.passages_path),
        )
        keys = [chunk_key(ext.id, c.text) for c in chunks]
        cached = work.load()
        report.damaged_cache_lines = work.damaged_lines
        asked = len({k for k in keys if k not in cached})
        results = _extract_all(ext, chunks, keys, cached, work, report, concurrency, progress)
        if report.failed and report.failed == asked:
            raise ArkError(
                f"the model failed on every chunk it was asked about ({report.failed}); first "
                f"error: {report.errors[0] if report.errors else 'unknown'}"
            )
        _summarise(report, chunks, keys, results, ext, prices)
        passages = _passages_jsonl(chunks, keys, results)
        if into is not None:
            passages, report.update = _merged(work.passages_path, passages)
        write_atomic(work.passages_path, passages)
        if into is not None:
            from ark.index import sync_index

            synced = sync_index(into, work.passages_path, fmt="passages")
            report.index = str(into)
            report.nodes = synced["counts"]["nodes"]
            report.edges = synced["counts"]["edges"]
            report.update.update(
                {
                    k: synced[k]
                    for k in ("added_nodes", "removed_nodes", "added_edges", "removed_edges")
                }
            )
            report.update["generation"] = synced["generation"]
        if out is not None:
            index = _build(work.passages_path, Path(out), progress, index_options or {})
            report.index = str(out)
            report.nodes = index.meta["counts"]["nodes"]
            report.edges = index.meta["counts"]["edges"]
        report.seconds = round(time.perf_counter() - started, 3)
        write_atomic(work.report_path, dumps(report.to_dict(), indent=2) + "\n")
    finally:
        work.close()
    return report


def _check_target(out: Path) -> None:
    """Refuse an output that is not an index before hours of extraction, as
    ``build_index`` would refuse it after."""
    from ark.index import is_ark_index_dir

    if not out.exists() and not out.is_symlink():
        return
    if out.is_dir() and not out.is_symlink() and (not any(out.iterdir()) or is_ark_index_dir(out)):
        return
    raise ArkError(
        f"{out} exists and is not an ARK index; choose another output directory "
        "(an existing index is replaced, anything else is left alone)"
    )


def _check_into(index: Path, work_dir: Path | None) -> None:
    """Refuse, before any extraction, an index to add to that ``ark ingest`` did not
    build (or whose work directory is elsewhere): its passages file is the corpus so
    far, which the new documents are merged into."""
    from ark.index import is_ark_index_dir

    if not is_ark_index_dir(index):
        raise ArkError(f"--into {index}: not an ARK index (build one with `ark ingest DOCS -o`)")
    work = work_dir if work_dir is not None else default_work_dir(index)
    if not (work / PASSAGES).is_file():
        raise ArkError(
            f"--into {index}: {work / PASSAGES} not found; documents are added to an index "
            "`ark ingest` built, through its work directory (give --work-dir if it used "
            "another)"
        )


def _merged(existing: Path, new: str) -> tuple[str, dict[str, Any]]:
    """The passages file ``existing`` with the documents of ``new`` (passages JSONL)
    merged in: a document it holds is replaced where it stands, a new one appended.
    Also how many documents were new, changed and unchanged."""
    fresh = _records_by_document(new, "the new passages")
    old = _records_by_document(existing.read_text(encoding="utf-8"), str(existing))
    out: list[str] = []
    for doc, lines in old.items():  # in the order of the file
        out.extend(fresh.get(doc, lines))
    out.extend(line for doc, lines in fresh.items() if doc not in old for line in lines)
    counts = {
        "new_documents": sum(1 for d in fresh if d not in old),
        "changed_documents": sum(1 for d in fresh if d in old and fresh[d] != old[d]),
        "unchanged_documents": sum(1 for d in fresh if d in old and fresh[d] == old[d]),
    }
    return "".join(out), counts


def _records_by_document(text: str, where: str) -> dict[str, list[str]]:
    """A passages JSONL's lines (each ending in a newline) by their ``doc``, documents
    in the order they first appear; split as JSON Lines are (``jsonl_lines``: a raw
    U+2028 inside a record's text is no line break)."""
    found: dict[str, list[str]] = {}
    for lineno, line in jsonl_lines(text):
        if not line.strip():
            continue
        try:
            doc = str(json.loads(line).get("doc"))
        except (*JSON_ERRORS, AttributeError) as exc:
            raise ArkError(f"{where}:{lineno}: not a passage record ({exc})") from None
        found.setdefault(doc, []).append(line + "\n")
    return found


def _extractor(
    extractor: ExtractorName | ModelExtractor | FastExtractor,
    llm: ChatModel | None,
    model: str | None,
    base_url: str | None,
    seed: int,
    max_tokens: int,
    pipeline: str | None,
    request_timeout: float | None = None,
    max_retries: int | None = None,
) -> ModelExtractor | FastExtractor:
    if isinstance(extractor, ModelExtractor | FastExtractor):
        return extractor
    if extractor == "fast":
        if llm is not None or model is not None or base_url is not None:
            raise ArkError("--extractor fast calls no model: drop --model/--base-url")
        if request_timeout is not None or max_retries is not None:
            raise ArkError("--extractor fast calls no model: drop --request-timeout/--max-retries")
        return FastExtractor(pipeline)
    if extractor != "model":
        raise ArkError(f"unknown extractor {extractor!r}; use model or fast")
    if llm is None:
        from ark.llm import make_chat_model

        llm = make_chat_model(
            model=model, base_url=base_url, request_timeout=request_timeout, max_retries=max_retries
        )
    return ModelExtractor(llm, seed=seed, max_tokens=max_tokens)


def _extract_all(
    ext: ModelExtractor | FastExtractor,
    chunks: Sequence[Chunk],
    keys: Sequence[str],
    cached: dict[str, Extraction],
    work: WorkDir,
    report: IngestReport,
    concurrency: int,
    progress: ProgressFn | None,
) -> dict[str, Extraction]:
    """Every chunk's extraction by key: the cached ones, then the missing ones, each
    appended to the cache as it arrives."""
    results = {k: cached[k] for k in keys if k in cached}
    todo: dict[str, Chunk] = {}
    for key, chunk in zip(keys, chunks, strict=True):
        if key not in results:
            todo.setdefault(key, chunk)
    report.reused = len(chunks) - sum(1 for k in keys if k in todo)
    total = len(chunks)
    done = report.reused
    if progress:
        progress("extracting", done, total)
    repeats = Counter(k for k in keys if k in todo)  # a text met twice is extracted once

    def finished(key: str, extraction: Extraction | None) -> None:
        nonlocal done
        if extraction is not None:
            results[key] = extraction
            work.append(key, todo[key].id, ext.id, extraction)
            report.extracted += 1
        done += repeats[key]
        if progress:
            progress("extracting", done, total)

    if isinstance(ext, FastExtractor):
        for key, extraction in zip(todo, ext.extract_many(todo.values()), strict=True):
            finished(key, extraction)
    else:
        asyncio.run(_extract_with_model(ext, todo, report, concurrency, finished))
    return results


async def _extract_with_model(
    ext: ModelExtractor,
    todo: dict[str, Chunk],
    report: IngestReport,
    concurrency: int,
    finished: Callable[[str, Extraction | None], None],
) -> None:
    """``concurrency`` workers take the chunks in order. An unexpected exception (an
    interrupt, a bug) stops every worker from taking another chunk, so the cache
    holds exactly the chunks finished before it."""
    queue = list(todo.items())
    next_item = 0
    stopped = False

    async def worker() -> None:
        nonlocal next_item, stopped
        while next_item < len(queue) and not stopped:
            key, chunk = queue[next_item]
            next_item += 1
            try:
                extraction = await ext.extract(chunk)
            except LLMError as exc:
                report.failed += 1
                if len(report.errors) < 5:
                    report.errors.append(f"{chunk.id}: {exc}")
                finished(key, None)
                continue
            except BaseException:
                stopped = True
                raise
            report.llm_calls += 1
            report.prompt_tokens += extraction.prompt_tokens
            report.completion_tokens += extraction.completion_tokens
            report.llm_s += extraction.llm_s
            finished(key, extraction)

    await asyncio.gather(*(worker() for _ in range(min(concurrency, len(queue)))))


def _summarise(
    report: IngestReport,
    chunks: Sequence[Chunk],
    keys: Sequence[str],
    results: dict[str, Extraction],
    ext: ModelExtractor | FastExtractor,
    prices: PriceTable | None,
) -> None:
    entities: set[str] = set()
    triples: set[tuple[str, str, str]] = set()
    for key in dict.fromkeys(keys):
        extraction = results.get(key)
        if extraction is None:
            continue
        report.bad_replies += 0 if extraction.ok else 1
        report.cut_replies += 1 if extraction.cut else 0
        report.dropped_triples += extraction.dropped
        entities.update(entity_key(e) for e in extraction.entities)
        triples.update(
            (entity_key(s), relation_key(r), entity_key(o)) for s, r, o in extraction.triples
        )
    report.entities = len(entities)
    report.triples = len(triples)
    report.relations = len({r for _, r, _ in triples})
    report.llm_s = round(report.llm_s, 3)
    if prices is not None and isinstance(ext, ModelExtractor):
        price = prices.price(ext.llm.name)
        if price is not None:
            report.usd = round(price.usd(report.prompt_tokens, report.completion_tokens), 8)
    elif isinstance(ext, FastExtractor):
        report.usd = 0.0


def _passages_jsonl(
    chunks: Sequence[Chunk], keys: Sequence[str], results: dict[str, Extraction]
) -> str:
    """One line per chunk: the generic passages format (id, title, text, doc,
    position, entities, triples)."""
    lines = []
    for chunk, key in zip(chunks, keys, strict=True):
        record: dict[str, Any] = {"id": chunk.id}
        if chunk.title:
            record["title"] = chunk.title
        record.update(text=chunk.text, doc=chunk.doc, position=chunk.position)
        extraction = results.get(key)
        if extraction is not None and extraction.entities:
            record["entities"] = extraction.entities
        if extraction is not None and extraction.triples:
            record["triples"] = extraction.triples
        lines.append(dumps(record) + "\n")
    return "".join(lines)


def _build(passages: Path, out: Path, progress: ProgressFn | None, options: dict[str, Any]) -> Any:
    from ark.index import build_index

    return build_index(passages, out, fmt="passages", progress=progress, **options)  # type: ignore[arg-type]
