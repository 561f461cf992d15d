"""Do the cited passages say what the answer says? Measured on recorded answers.

    python benchmarks/probe_citations.py --index INDEX RESULTS.jsonl [RESULTS.jsonl ...]

For every answered question of each run (``results.jsonl`` of ``ark eval --answer`` or
``bench_documents.py``, over ``INDEX``, the index the run read), the answer's claim is
the terms of its text the question does not have, by the index's own tokenizer (its
stop words and stemmer): :func:`ark.answer.unsupported_terms`. Counted per run: the
answers whose cited nodes' texts hold every claim term (supported), and those with a
claim term no cited text holds; each split by whether the answer scored (F1 > 0
against the gold answers). A check worth having flags few answers that scored and
many that did not. The last column: F1 over all the run's questions as recorded, and
with the unsupported answers counted as no answer (a re-cited answer keeps its text).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ark.answer import unsupported_terms
from ark.index import open_index


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--show", type=int, default=0, help="print N flagged answers a run")
    args = parser.parse_args(argv)
    index = open_index(args.index)
    g, tok = index.graph, index.bm25.tokenizer

    print(
        "| run | answered | cited hold the claim: F1 > 0 / = 0 | other shown nodes hold it "
        "(re-cited): F1 > 0 / = 0 | no shown node holds it: F1 > 0 / = 0 | F1 before → after |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for run in args.runs:
        counts = {(s, w): 0 for s in ("cited", "shown", "none") for w in (True, False)}
        shown = 0
        answered = 0
        questions = 0
        f1_before = f1_lost = 0.0
        for line in run.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            questions += 1
            f1 = float((r.get("metrics") or {}).get("f1", 0.0))
            f1_before += f1
            a = r.get("answer") or {}
            if not a.get("answerable"):
                continue
            answered += 1
            texts = [f"{g.name(c)}\n{g.text(c)}" for c in a.get("citations", [])]
            missing = unsupported_terms(a["text"], r["query"], texts, tok)
            shown_nodes = _shown(r)
            everything = [f"{g.name(c)}\n{g.text(c)}" for c in shown_nodes]
            anywhere = unsupported_terms(a["text"], r["query"], everything, tok)
            scored = (r.get("metrics") or {}).get("f1", 0.0) > 0
            kind = "cited" if not missing else "shown" if not anywhere else "none"
            counts[(kind, scored)] += 1
            if kind == "none":  # said unsupported: no answer, F1 0
                f1_lost += f1
            if missing and shown < args.show:
                shown += 1
                print(f"  {r['query_id']}: {a['text']!r} cites {a.get('citations')}; "
                      f"missing {sorted(missing)}; F1 {r['metrics'].get('f1')}")  # fmt: skip
        name = f"{run.parent.parent.name}/{run.parent.name}"
        cells = " | ".join(
            f"{counts[(k, True)]} / {counts[(k, False)]}" for k in ("cited", "shown", "none")
        )
        before, after = 100 * f1_before / questions, 100 * (f1_before - f1_lost) / questions
        print(f"| {name} | {answered} | {cells} | {before:.1f} → {after:.1f} |")


def _shown(result: dict) -> list[int]:
    """The nodes the answer step was shown, as far as a result records them: each
    lookup's (read in steps), else the ranking and the evidence passages."""
    a = result.get("answer") or {}
    nodes = list(a.get("nodes") or [])
    for step in a.get("steps") or []:
        nodes.extend(step.get("shown") or [])
    if not nodes:
        nodes = list(result.get("ranking") or []) + list(result.get("passages") or [])
    return list(dict.fromkeys(int(n) for n in nodes))


if __name__ == "__main__":
    main()
