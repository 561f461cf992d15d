"""From a chain's passage, which search finds its next passage? Offline, no model.

    python benchmarks/probe_next_hop.py --index INDEX --questions musique_dev_questions.json

For each question of a MuSiQue-format file (its ``question_decomposition`` names the
passage of each hop, ``paragraph_support_idx``) over ``INDEX``, the index built from
its corpus: for every pair of consecutive hops whose passages are both in the graph,
start from hop k's passage as if the agent had just added it, and ask which global
search (``search_in_graph``, its default five results) returns hop k+1's passage:

- **the question's words**: the question's content words that hop k's passage does not
  state (what the documents note calls unstated): what the 1.5B searched when told to
  "search for that name";
- **the first by score** and **one of the first three**: a search for each name hop k's
  passage mentions (not named in the question), with those words, ranked by the best
  score it gives a passage not in the answer; what a note offering those searches
  would offer (tried in `6afaf72` and taken out: ``docs/decisions/documents.md``);
- **some name's search**: any name the passage mentions (not named in the question),
  searched with those words: the ceiling of any choice among them.

Hop k's passage is in the answer; no bridge or earlier call is assumed, so a pair
counts even where the hints would offer the bridges instead.
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

from ark.datasets import PassageMatcher
from ark.graph import MENTIONS, PASSAGE_TYPE
from ark.index import open_index
from ark.probes import hints_documents
from ark.tools import GraphTools


def search(tools: GraphTools, query: str) -> dict[int, float]:
    """A global search's results (its default five), node to score; none for no words."""
    result = tools.search_in_graph(query) if query else None
    return {h.index: h.score for h in getattr(result, "hits", ())}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True, help="a MuSiQue-format file")
    args = parser.parse_args(argv)
    index = open_index(args.index)
    g = index.graph
    pid, mid = g.type_id(PASSAGE_TYPE), g.relation_id(MENTIONS)
    if pid is None or mid is None:
        raise SystemExit(f"{args.index} has no passages that mention entities")
    tools = GraphTools(index)
    matcher = PassageMatcher(g, f"--questions {args.questions}")  # one pass over the passages
    counts = dict.fromkeys(("words", "first", "any_lead", "any_name"), 0)
    pairs = 0
    for x in json.loads(args.questions.read_text(encoding="utf-8")):
        question = x["question"]
        if "question_decomposition" not in x:
            raise SystemExit(f"{args.questions}: {x.get('id')!r} has no question_decomposition")
        paragraphs = x["paragraphs"]
        groups = [
            matcher.match(p["title"], p["paragraph_text"])
            for p in (paragraphs[h["paragraph_support_idx"]] for h in x["question_decomposition"])
        ]
        hops = [min(group) if group else None for group in groups]
        for a, b in itertools.pairwise(hops):
            if a is None or b is None:
                continue
            pairs += 1
            mentioned = [int(e) for e in g.neighborhood(a, None, [mid]).neighbors.tolist()]
            entities = [e for e in mentioned if g.node_type[e] != pid]
            named = [g.name(e) for e in entities if hints_documents.named_in(question, g.name(e))]
            words = " ".join(hints_documents.unstated_words(question, named, [g.text(a)])[:8])
            others = list(dict.fromkeys(g.name(e) for e in entities if g.name(e) not in named))
            hits = {q: search(tools, q) for q in [words, *(f"{n} {words}".strip() for n in others)]}
            counts["words"] += bool(words) and b in hits[words]
            ranked = sorted(
                (q for q in hits if q != words),
                key=lambda q: (
                    -max(
                        (sc for n, sc in hits[q].items() if n != a and g.node_type[n] == pid),
                        default=0.0,
                    )
                ),
            )
            counts["first"] += bool(ranked) and b in hits[ranked[0]]
            counts["any_lead"] += any(b in hits[q] for q in ranked[:3])
            counts["any_name"] += any(b in hits[q] for q in ranked)
    print(f"{args.questions.name} over {args.index}: {pairs} hop pairs")
    print("| search | finds the next hop's passage |")
    print("|---|---:|")
    print(f"| the question's unstated words alone | {counts['words']} |")
    print(f"| the first name's search by score | {counts['first']} |")
    print(f"| one of the first three names' searches | {counts['any_lead']} |")
    print(f"| some name's search (the ceiling of a choice) | {counts['any_name']} |")


if __name__ == "__main__":
    main()
