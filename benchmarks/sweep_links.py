"""How many linked passages, through how specific an entity: recall of supporting
passages over a sweep of ``link_max_mentions`` x ``max_linked``, no model.

    python benchmarks/sweep_links.py --dataset musique:FILE --index INDEX
        [--runs RUN_DIR ...] [--mentions 3 5 10 20] [--linked 2 3 4]

Two lists are re-ranked with the library's own function
(:func:`ark.retrieval.evidence_passages` with the question's relevance), for each setting:

- ``bm25``: BM25's top 20 passages of each question (over all nodes' statistics,
  what ``question_relevance`` scores), its best one leading;
- each ``--runs`` directory (an ``ark eval`` / ``bench_documents.py`` run over the
  same questions, run with ``--linked-passages 0`` or before linking existed): its
  recorded ``passages`` per question, re-ranked as the retriever now does (the agents'
  own answers are not told apart here: all count as reached).

It prints recall@2 and recall@5 per setting, with ``max_linked=0`` (no linking) as the
first row, so a default is chosen on a curve, not on one point.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from ark.datasets import load_dataset
from ark.graph import passage_ids
from ark.index import open_index
from ark.retrieval import evidence_passages, question_relevance


def recall(ranked: list[int], supporting: tuple[frozenset[int], ...], k: int) -> float:
    top = set(ranked[:k])
    return sum(1 for group in supporting if group & top) / max(1, len(supporting))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dataset", required=True)
    p.add_argument("--index", type=Path, required=True)
    p.add_argument("--runs", type=Path, nargs="*", default=[])
    p.add_argument("--mentions", type=int, nargs="+", default=[3, 5, 10, 20])
    p.add_argument("--linked", type=int, nargs="+", default=[2, 3, 4])
    args = p.parse_args()
    index = open_index(args.index)
    graph = index.graph
    queries = {q.id: q for q in load_dataset(args.dataset, index, "dev", None)[0]}
    passages = passage_ids(graph)
    lists: dict[str, dict[str, list[int]]] = {"bm25": {}}
    for q in queries.values():
        scores = question_relevance(index, q.text)(passages)
        order = np.argsort(-scores, kind="stable")[:20]
        lists["bm25"][q.id] = [int(passages[i]) for i in order if scores[i] > 0]
    for run in args.runs:
        with open(run / "results.jsonl", encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        lists[str(run)] = {r["query_id"]: r.get("passages") or [] for r in rows}
    settings = [(0, 0)] + [(m, n) for m in args.mentions for n in args.linked]
    print("| list | questions | link_max_mentions | max_linked | R@2 | R@5 |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, by_query in lists.items():
        ids = [q for q in by_query if q in queries]
        for mentions, linked in settings:
            r2, r5 = [], []
            for qid in ids:
                q = queries[qid]
                ranked = evidence_passages(
                    graph,
                    [],
                    seen=by_query[qid],
                    relevance=question_relevance(index, q.text),
                    max_linked=linked,
                    link_max_mentions=max(mentions, 1),
                )
                nodes = [e.node for e in ranked]
                r2.append(recall(nodes, q.supporting, 2))
                r5.append(recall(nodes, q.supporting, 5))
            print(
                f"| {name} | {len(ids)} | {mentions or '–'} | {linked} | "
                f"{100 * np.mean(r2):.1f} | {100 * np.mean(r5):.1f} |"
            )


if __name__ == "__main__":
    main()
