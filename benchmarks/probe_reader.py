"""The answer step alone, over the stored retrievals of a ``bench_documents.py`` row.

    python benchmarks/probe_reader.py RESULTS.jsonl [--passages 5] [--index .bench/mq.idx]
        [--out probe.jsonl]

Why: on MuSiQue the answer's F1 moves little with passage recall (``journal/results-diary.md``,
session 48), and rerunning a whole agent row to try another reading costs ~2 minutes a
question. This reruns only the answer step (greedy, as the bench's; ~10 s a question
with the local 1.5B) on what each stored run retrieved: the ranking's non-passage nodes
(first 10 ranked), then the first ``--passages`` of its evidence passages (the list
recall is scored on). Resumable: questions already in ``--out`` are skipped. Prints
EM and F1 beside the row's stored ones, on the same questions.

``--facts-first`` is an experiment, not a library option: the answer schema gains a
``facts`` field before the answer, and the instructions ask the model to write there
the facts that chain to the answer, one short sentence a step (a chained reading, as
IRCoT-style readers do). It replaces the answer step's schema and instructions in this
process only. ``--bm25`` reads BM25's top ``--passages`` passages instead (naive RAG's
list), to compare a reading on both lists. ``--passages-only`` drops the ranked entity
nodes: the reader gets the evidence passages alone, as naive RAG gets BM25's.
``--reader steps`` reads the same nodes with ``ark.answer.write_answer_in_steps`` (the
question split into lookups of one fact, each read from the nodes that fit it best)
instead of the one-call answer step.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from ark.answer import write_answer, write_answer_in_steps
from ark.eval import BM25Method
from ark.eval.metrics import exact_match, f1_score
from ark.graph import PASSAGE_TYPE
from ark.index import open_index
from ark.llm import ModelSettings
from ark.probes import answer_write as answer_step


def facts_first() -> None:
    """The answer step asks for the chained facts before the answer (this process)."""
    schema = answer_step.ANSWER_SCHEMA
    answer_step.ANSWER_SCHEMA = {
        "type": "object",
        "properties": {"facts": {"type": "string"}, **schema["properties"]},
        "required": ["facts", *schema["required"]],
    }
    answer_step.SYSTEM = answer_step.SYSTEM.replace(
        "Reply with JSON only: ",
        "The question may chain several facts (X's Y's Z): first write in \"facts\" the "
        "facts from the evidence that lead to the answer, one short sentence per step, in "
        "order; then the answer. Reply with JSON only: ",
    ).replace('{"answerable": true,', '{"facts": "...", "answerable": true,')


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("results", type=Path, help="a row's results.jsonl (bench_documents.py)")
    p.add_argument("--passages", type=int, default=5, help="evidence passages read")
    p.add_argument("--index", type=Path, default=Path(".bench/mq.idx"))
    p.add_argument("--model", default=None, help="0.5b, 1.5b, a GGUF path or a server's model")
    p.add_argument("--base-url", default=None)
    p.add_argument("--out", type=Path, default=None, help="default: next to RESULTS")
    p.add_argument("--facts-first", action="store_true", help="the chained-reading experiment")
    p.add_argument("--bm25", action="store_true", help="read BM25's top passages instead")
    p.add_argument("--passages-only", action="store_true", help="no ranked entity nodes")
    p.add_argument("--reader", choices=["one", "steps"], default="one", help="answer step")
    args = p.parse_args(argv)
    tag = f"p{args.passages}" + ("-bm25" if args.bm25 else "")
    tag += "-facts" if args.facts_first else ""
    tag += "-only" if args.passages_only else ""
    tag += "-steps" if args.reader == "steps" else ""
    out = args.out or args.results.with_name(f"probe-{tag}.jsonl")
    if args.facts_first:
        facts_first()
    index = open_index(args.index)
    passage = index.graph.type_id(PASSAGE_TYPE)
    llm = ModelSettings(model=args.model, base_url=args.base_url).build()
    bm25 = BM25Method(index, passages_only=True) if args.bm25 else None
    stored = [json.loads(line) for line in args.results.open(encoding="utf-8")]
    done = {}
    if out.exists():
        done = {d["query_id"]: d for d in map(json.loads, out.open(encoding="utf-8"))}
    with out.open("a", encoding="utf-8") as f:
        for r in stored:
            if r["query_id"] in done:
                continue
            ranked = [i for i in r["ranking"][:10] if int(index.graph.node_type[i]) != passage]
            if args.passages_only:
                ranked = []
            nodes = ranked + [q for q in r["passages"] if q not in ranked][: args.passages]
            if bm25 is not None:
                nodes = bm25.search(r["query"], args.passages)
            reader = write_answer_in_steps if args.reader == "steps" else write_answer
            answer = asyncio.run(reader(llm, r["query"], index, nodes))
            text = answer.text if answer.answerable else ""
            rec = {
                "query_id": r["query_id"],
                "nodes": nodes,
                "text": answer.text,
                "status": answer.status,
                "em": exact_match(text, r["gold_answers"]),
                "f1": f1_score(text, r["gold_answers"]),
                "prompt_tokens": answer.prompt_tokens,
                "completion_tokens": answer.completion_tokens,
                "latency_s": answer.latency_s,
                "steps": answer.steps,
            }
            f.write(json.dumps(rec) + "\n")
            f.flush()
            done[r["query_id"]] = rec
            print(f"{len(done)}/{len(stored)} {r['query_id']} F1 {rec['f1']:.2f}", flush=True)
    n = len(stored)
    probe = [done[r["query_id"]] for r in stored]
    print(
        f"\n{n} questions: probe EM {100 * sum(d['em'] for d in probe) / n:.1f} "
        f"F1 {100 * sum(d['f1'] for d in probe) / n:.1f}; stored "
        f"EM {100 * sum(r['metrics']['em'] for r in stored) / n:.1f} "
        f"F1 {100 * sum(r['metrics']['f1'] for r in stored) / n:.1f}; "
        f"prompt tokens {sum(d['prompt_tokens'] for d in probe) / n:.0f}"
    )


if __name__ == "__main__":
    main()
