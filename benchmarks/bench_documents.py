"""Retrieval and answers over a graph built from documents, measured as the field does.

    python benchmarks/bench_documents.py --dataset musique:FILE --index INDEX
        [--rows bm25 bm25-linked dense naive-rag linked-rag ark ark-guided graphsearch]
        [--models]
        [--limit N] [--sample-seed 0] [--agents 1] [--max-steps 8] [--seed 0]
        [--temperature 0.7] [--model 1.5b|0.5b|GGUF | --base-url URL --model NAME]
        [--no-answer] [--writer one|steps] [--embed] [--out .bench/documents] [--label current]

One table over the same questions (a MuSiQue- or HotpotQA-format file, ``musique:FILE``
or ``hotpotqa:FILE``, or your own, ``docqa:FILE``, over an index built from its
corpus, e.g. ``ark index build ../shared/data/musique --format hipporag -o mq.idx``):
passage recall at 2 and 5
(HippoRAG's), Hit@1 (a supporting passage first), exact match and F1 of the answer
(SQuAD's, against the answer and its aliases) and seconds per question. The rows:

- ``bm25``: BM25 over the passage nodes alone (its own term statistics);
- ``bm25-linked``: BM25's best passage, then up to 3 passages sharing a bridge entity
  with it (``ark.retrieval.linked_passages``), then BM25's others: what the graph gives
  without a model, and what the agents' passage lists are judged against;
- ``dense``: cosine over the passage nodes' embeddings (the ``[dense]`` extra and
  ``ark index embed INDEX``, or ``--embed`` to make them);
- ``naive-rag``: the model answering from BM25's top 5 passages;
- ``linked-rag``: the model answering from ``bm25-linked``'s top 5;
- ``ark``, ``ark-guided``, ``graphsearch``: the agents (``--agents``, fixed ``--seed``),
  each answering from its retrieval as ``ark ask --answer`` does (``--no-answer``:
  retrieval only); recall reads their evidence passages, linked ones included
  (``--linked-passages``, default 3; 0 for what the agents reached alone).

The answering rows write in one call unless ``--writer steps`` has them (not
``graphsearch``, whose answer is written in one call from its workflow's own answer
basis; ``--reader`` is the option's old name) write in lookups of one fact each
(``ark.answer.write_answer_in_steps``, the library's default since session 55); such a
row's run goes to ``OUT/LABEL/ROW+steps``. One call stays this bench's default so that
its rows compare with the runs recorded before.

Without ``--rows``, the rows needing no model (``bm25``, ``dense``) run, and with
``--models`` the model rows too. Every row goes through the evaluation API (the same
code as ``ark eval``) into ``OUT/LABEL/ROW``, resumable: rerunning the same command
continues where an interrupted row stopped. A row that cannot run here (``dense``
without the extra or its embeddings) is reported as skipped, with why.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from ark.errors import ArkError
from ark.eval import Evaluation
from ark.index import open_index
from ark.llm import ChatModel, ModelSettings

BASELINE_ROWS = ("bm25", "bm25-linked", "dense")
MODEL_ROWS = ("naive-rag", "linked-rag", "ark", "ark-guided", "graphsearch")
#: Linked passages of the ``*-linked`` rows (``ark.retrieval.MAX_LINKED``).
LINKED = 3
ROWS = (*BASELINE_ROWS, *MODEL_ROWS)
#: Table columns: (header, metric key in summary.json).
COLUMNS = (
    ("R@2", "recall@2"),
    ("R@5", "recall@5"),
    ("Ans@5", "answer@5"),
    ("Hit@1", "hit@1"),
    ("EM", "em"),
    ("F1", "f1"),
)


def row_settings(row: str, args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`~ark.eval.Evaluation` settings of one row (``--writer`` on the rows
    that answer)."""
    settings = _row_settings(row, args)
    if _written_by_writer(row, settings):
        # Always set: the library writes in steps unless told (ark.answer.DEFAULT_WRITER),
        # while this bench's rows write in one call unless --writer says otherwise, so
        # that they stay comparable with the runs recorded before that default.
        settings["answer_writer"] = args.writer
    return settings


def _written_by_writer(row: str, settings: dict[str, Any]) -> bool:
    """Whether ``--writer`` writes the row's answer: it answers, and not from its own
    answer basis (GraphSearch's answer is written in one call from its workflow's)."""
    return bool(settings.get("answer")) and row != "graphsearch"


def row_dir(row: str, args: argparse.Namespace) -> str:
    """Where a row's run goes under ``OUT/LABEL``: its name, and ``+WRITER`` when its
    answer is written otherwise than in one call (so both sit side by side)."""
    writes = _written_by_writer(row, _row_settings(row, args)) and args.writer != "one"
    return f"{row}+{args.writer}" if writes else row


def _row_settings(row: str, args: argparse.Namespace) -> dict[str, Any]:
    if row == "bm25":
        return {"method": "bm25"}
    if row == "dense":
        return {"method": "dense", "model": ModelSettings(model=args.dense_model)}
    if row == "bm25-linked":
        return {"method": "bm25", "linked_passages": LINKED}
    if row == "naive-rag":
        return {"method": "bm25", "answer": True}
    if row == "linked-rag":
        return {"method": "bm25", "answer": True, "linked_passages": LINKED}
    return {
        "method": "ark",
        "strategy": row,
        "agents": args.agents,
        "max_steps": args.max_steps,
        "temperature": args.temperature,
        "seed": args.seed,
        "answer": args.answer,
        "linked_passages": args.linked_passages,
    }


def ensure_embeddings(index_path: Path, model: str | None) -> None:
    """Embed the index's nodes for the dense row when they are missing (``--embed``)."""
    from ark.index import DenseEncoder, build_dense, open_dense

    index = open_index(index_path)
    encoder = DenseEncoder(model)
    try:
        open_dense(index, encoder.name)
    except ArkError:
        print(f"  embedding {index_path} with {encoder.name}", file=sys.stderr)
        build_dense(index, encoder)


def run_row(row: str, args: argparse.Namespace, llm: ChatModel | None) -> dict[str, Any]:
    out = args.out / args.label / row_dir(row, args)
    settings = row_settings(row, args)
    if row == "dense" and args.embed:
        ensure_embeddings(args.index, args.dense_model)
    run = Evaluation(
        args.dataset,
        args.index,
        out,
        limit=args.limit,
        sample_seed=args.sample_seed,
        extra_config={"bench_row": row},
        **settings,
    )

    def progress(done: int, total: int) -> None:
        print(f"\r  {row}: {done}/{total}", end="", file=sys.stderr, flush=True)

    needs_model = settings["method"] == "ark" or settings.get("answer")
    summary = run.run(
        llm=llm if needs_model else None,
        resume=(out / "results.jsonl").exists(),
        progress=progress,
    )
    print(file=sys.stderr)
    return summary


def table(results: dict[str, dict[str, Any] | str]) -> str:
    """One line per row: the measures in percent, '–' where a row has none."""
    lines = [
        "| row | n | " + " | ".join(h for h, _ in COLUMNS) + " | s/question |",
        "|---|---:|" + "---:|" * (len(COLUMNS) + 1),
    ]
    for row, summary in results.items():
        if isinstance(summary, str):
            lines.append(f"| {row} | – | skipped: {summary} |")
            continue
        m = summary["metrics"]
        cells = [f"{m[k]:.1f}" if k in m else "–" for _, k in COLUMNS]
        wall = summary["wall_s_per_query"]["mean"]
        lines.append(f"| {row} | {summary['queries']} | {' | '.join(cells)} | {wall:.2f} |")
    return "\n".join(lines)


def notes(results: dict[str, dict[str, Any] | str]) -> list[str]:
    """Missing gold paragraphs and failed questions or answers, when any."""
    out = []
    for row, summary in results.items():
        if isinstance(summary, str):
            continue
        if summary.get("missing_gold_passages"):
            out.append(
                f"{row}: {summary['missing_gold_passages']} supporting paragraphs not in the "
                "index (counted as never retrieved)"
            )
        if summary["failed"]:
            out.append(f"{row}: {summary['failed']} questions failed")
        answers = summary.get("answers")
        if answers and (answers["failed"] or answers["not_answerable"]):
            out.append(
                f"{row}: {answers['not_answerable']} answers said the evidence does not answer, "
                f"{answers['failed']} failed (both scored as empty)"
            )
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dataset", required=True, help="musique:FILE, hotpotqa:FILE or docqa:FILE")
    p.add_argument("--index", type=Path, required=True, help="an index built from the corpus")
    p.add_argument(
        "--rows", nargs="+", choices=ROWS, help="default: bm25 bm25-linked dense (+ --models)"
    )
    p.add_argument("--models", action="store_true", help="also the rows that need a model")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--sample-seed", type=int, default=0)
    p.add_argument("--agents", type=int, default=1)
    p.add_argument("--max-steps", type=int, default=8)
    p.add_argument("--seed", type=int, default=0, help="agent sampling seed")
    p.add_argument("--temperature", type=float, default=0.7)
    p.add_argument("--model", default=None, help="0.5b, 1.5b, a GGUF path or a server's model")
    p.add_argument("--base-url", default=None, help="an OpenAI-compatible server")
    p.add_argument("--dense-model", default=None, help="a local sentence-transformers dir")
    p.add_argument(
        "--answer",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="agent rows answer in words (scored by EM and F1)",
    )
    p.add_argument(
        "--writer",
        "--reader",  # its old name
        dest="writer",
        choices=["one", "steps"],
        default="one",
        help="how the answering rows write: one call, or in lookups (ark.answer.WRITERS)",
    )
    p.add_argument("--embed", action="store_true", help="embed the index for dense if needed")
    p.add_argument(
        "--linked-passages",
        type=int,
        default=LINKED,
        help="linked passages in the agents' lists (0: only what they reached)",
    )
    p.add_argument("--label", default="current", help="run name under --out")
    p.add_argument("--out", type=Path, default=Path(".bench/documents"))
    args = p.parse_args(argv)
    rows = args.rows or [*BASELINE_ROWS, *(MODEL_ROWS if args.models else ())]
    llm = None
    if any(r in MODEL_ROWS for r in rows):
        llm = ModelSettings(model=args.model, base_url=args.base_url).build()
    started = time.perf_counter()
    results: dict[str, dict[str, Any] | str] = {}
    for row in rows:
        try:
            results[row_dir(row, args)] = run_row(row, args, llm)
        except ArkError as exc:
            if row != "dense":  # only the optional extra may be missing
                sys.exit(f"{row}: {exc}")
            results[row_dir(row, args)] = str(exc)
    limit = f"{args.limit} (sample seed {args.sample_seed})" if args.limit else "all"
    print(f"\n{args.dataset} over {args.index}, questions: {limit}, run {args.label!r}\n")
    print(table(results))
    for line in notes(results):
        print(f"\n- {line}", end="")
    print(f"\n\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
