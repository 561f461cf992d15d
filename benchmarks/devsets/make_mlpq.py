"""Build the ``mlpq`` dev set: MLPQ's English path questions over the DBpedia facts of their paths.

    python benchmarks/devsets/make_mlpq.py [--source DIR_OR_GIT_DIR] [--commit SHA]
        [--out /work/devdata/mlpq] [--n 300] [--seed 0]

Why this set: its nodes are named the way a DBpedia dump names them
(``Greek_legislative_election,_1996``, ``Cassis_(Bouches-du-Rhône)``: underscores,
commas, parentheses, years), its questions write the start node in that form
("… the one that is after election of Bulgarian_parliamentary_election,_1966"), and
its relations are DBpedia property names in camel case (``afterElection``,
``shipNamesake``, ``state/province``) — none of which MetaQA or WC2014 has. It is
cross-lingual by construction: every path crosses once between English and French
DBpedia, so part of each path (and of the node and relation names) is French
(``prédécesseur``, ``saisonPrécédente``).

Source: MLPQ (Tan, Chen, Qi, Li, Wang, "MLPQ: A Dataset for Path Question Answering
over Multilingual Knowledge Graphs", Big Data Research 2023),
https://github.com/tan92hl/Dataset-for-QA-over-Multilingual-KG, version 1.3 files
``datasets/Questions 1.3/en_fr/en_question/{train,dev,test}_en_fr_{2h,3h}_en.txt``
(English questions over the English–French pair). A line is ``QUESTION@@@PATH``, the
path the URIs of its hops, three per hop; the tail of one hop and the head of the
next are the same entity, in one language or aligned across the two. The
``train_en_fr_3h_en.txt`` file is over the 4 MiB the fetched snapshot keeps and is
skipped when absent. ``--source`` is a folder holding those files (by base name) or a
git directory (the fetched mirror) read at ``--commit``.

What it writes under ``--out``:

- ``kb.tsv`` — ``head<TAB>relation<TAB>tail``: every hop of every path of all
  splits, with an English entity and its aligned French one as one node (the
  dataset's own "ILLs fusion" of the two graphs), named by its English DBpedia name
  when it has one, else its French one; a relation is the property's local name.
- ``dev.jsonl`` — ``--n`` questions of the dev files, half 2-hop and half 3-hop (a
  seeded sample), for ``ark eval --dataset jsonl:...``. The gold answers are what
  the question's relation path gives from its start node in ``kb.tsv`` (a superset of
  the path's own tail, which the file names as the one answer).
- ``README.md`` — provenance, licence and counts.
"""

from __future__ import annotations

import random
import re
import sys
from collections import Counter, defaultdict
from itertools import pairwise
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import most_used, parse_args, read_source, relation_counts, sample, write_set

DEFAULT_MIRROR = Path("/work/.mirror/tan92hl+Dataset-for-QA-over-Multilingual-KG/repo")
DEFAULT_COMMIT = "13abc3a8112789040706e9f1c91c87b09e20dcb7"
DEFAULT_OUT = Path("/work/devdata/mlpq")
FOLDER = "datasets/Questions 1.3/en_fr/en_question"
SPLITS = ("train", "dev", "test")
HOPS = ("2h", "3h")
URI = re.compile(r"<([^>]*)>")

Hop = tuple[str, str, str]  # (head URI, relation URI, tail URI)


def parse_line(line: str, where: str) -> tuple[str, list[Hop]]:
    """``QUESTION@@@PATH`` → the question and its hops."""
    question, sep, path = line.partition("@@@")
    uris = URI.findall(path)
    if not sep or not uris or len(uris) % 3:
        raise SystemExit(f"{where}: expected QUESTION@@@<h> <r> <t> ..., got {line[:80]!r}")
    hops = [(uris[i], uris[i + 1], uris[i + 2]) for i in range(0, len(uris), 3)]
    return question.strip(), hops


def local(uri: str) -> str:
    """The name after ``/resource/`` or ``/property/``."""
    for marker in ("/resource/", "/property/"):
        if marker in uri:
            return uri.split(marker, 1)[1]
    return uri


def is_english(uri: str) -> bool:
    return uri.startswith("http://dbpedia.org/")


class Nodes:
    """Aligned URIs as one node (union-find), named by an English URI if any."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, u: str) -> str:
        self.parent.setdefault(u, u)
        while self.parent[u] != u:
            self.parent[u] = self.parent[self.parent[u]]
            u = self.parent[u]
        return u

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def names(self) -> dict[str, str]:
        members: dict[str, list[str]] = defaultdict(list)
        for u in self.parent:
            members[self.find(u)].append(u)
        out = {}
        for group in members.values():
            english = sorted(u for u in group if is_english(u))
            name = local(english[0] if english else sorted(group)[0])
            for u in group:
                out[u] = name
        return out


def main(argv: list[str] | None = None) -> None:
    args = parse_args(
        __doc__, mirror=DEFAULT_MIRROR, commit=DEFAULT_COMMIT, out=DEFAULT_OUT, argv=argv
    )

    paths: list[tuple[str, str, str, list[Hop]]] = []  # (split, hops, question, path)
    used, missing = [], []
    for split in SPLITS:
        for h in HOPS:
            name = f"{FOLDER}/{split}_en_fr_{h}_en.txt"
            text = read_source(args.source, args.commit, name)
            if text is None:
                missing.append(name.rsplit("/", 1)[-1])
                continue
            used.append(name.rsplit("/", 1)[-1])
            for lineno, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    q, hops = parse_line(line, f"{name}:{lineno}")
                    paths.append((split, h, q, hops))
    if not any(s == "dev" for s, *_ in paths):
        raise SystemExit(f"no dev question files under {args.source} ({FOLDER})")

    nodes = Nodes()
    for *_, hops in paths:
        for (_, _, tail), (head, _, _) in pairwise(hops):
            nodes.union(tail, head)
        for h, _, t in hops:
            nodes.find(h)
            nodes.find(t)
    name = nodes.names()
    triples: dict[tuple[str, str, str], None] = {}
    for *_, hops in paths:
        for h, r, t in hops:
            triples[(name[h], local(r), name[t])] = None
    out_edges: dict[tuple[str, str], set[str]] = defaultdict(set)
    for h, r, t in triples:
        out_edges[(h, r)].add(t)

    def follow(start: str, relations: list[str]) -> set[str]:
        frontier = {start}
        for r in relations:
            frontier = {t for n in frontier for t in out_edges.get((n, r), ())}
        return frontier

    # one record per question text; a text written for several paths (the same
    # template over the same start) is answered by any of them
    grouped: dict[tuple[str, str], list[list[Hop]]] = {}
    for split, h, q, hops in paths:
        if split == "dev":
            grouped.setdefault((h, q), []).append(hops)
    records: dict[str, list[dict]] = {h: [] for h in HOPS}
    for (h, q), alternatives in grouped.items():
        gold: set[str] = set()
        for hops in alternatives:
            reached = follow(name[hops[0][0]], [local(r) for _, r, _ in hops])
            if name[hops[-1][2]] not in reached:  # cannot happen: its facts are in kb
                raise SystemExit(f"path of {q!r} does not reach its own answer")
            gold |= reached
        records[h].append(
            {
                "id": f"mlpq-dev-{h}/{len(records[h])}",
                "query": q,
                "answer_names": sorted(gold),
                "qtype": f"{h[0]}-hop",
            }
        )
    rng = random.Random(args.seed)
    chosen = []
    for i, h in enumerate(HOPS):
        k = min(len(records[h]), args.n // len(HOPS) + (i < args.n % len(HOPS)))
        chosen += sample(rng, records[h], k)

    kb = list(triples)
    relations, node_set = relation_counts(kb)
    english = sum(1 for u, n in name.items() if is_english(u) and local(u) == n)
    sizes = Counter(min(len(r["answer_names"]), 5) for r in chosen)
    readme = README.format(
        commit=args.commit,
        used=", ".join(f"`{u}`" for u in used),
        missing=", ".join(f"`{m}`" for m in missing) or "none",
        paths=len(paths),
        triples=len(kb),
        nodes=len(node_set),
        english=english,
        relations=len(relations),
        top=most_used(relations),
        dev2=len(records["2h"]),
        dev3=len(records["3h"]),
        n=len(chosen),
        seed=args.seed,
        sizes=", ".join(f"{'5+' if k == 5 else k}: {v}" for k, v in sorted(sizes.items())),
    )
    write_set(args.out, kb, chosen, readme)


README = """# mlpq — MLPQ's English path questions over English–French DBpedia

Made by `benchmarks/devsets/make_mlpq.py` (in the ARK repository); do not edit by hand.

Source: MLPQ (Yiming Tan, Yongrui Chen, Guilin Qi, Weizhuo Li, Meng Wang, "MLPQ: A
Dataset for Path Question Answering over Multilingual Knowledge Graphs", Big Data
Research, 2023), https://github.com/tan92hl/Dataset-for-QA-over-Multilingual-KG at
commit `{commit}`, version 1.3, English questions of the English–French pair:
{used} (not in the fetched snapshot, skipped: {missing}). Licence: GPL-3.0 (the
repository's LICENSE.txt; the data is DBpedia's, CC BY-SA): research use allowed,
credit the authors, redistribute under the same terms.

- `kb.tsv` — `head<TAB>relation<TAB>tail`, {triples} facts over {nodes} nodes and
  {relations} relations (most used: {top}): every hop of the {paths} question paths
  of all splits. An English entity and the French one the path aligns it with are
  one node, named by the English DBpedia name (else the French one); relations keep
  DBpedia's property names, English or French (the paths cross languages once).
  The graph holds only the facts of the questions' paths (the MLPQ graphs are over
  the fetched snapshot's 4 MiB limit).
- `dev.jsonl` — {n} of the dev files' questions ({dev2} two-hop, {dev3} three-hop;
  half of each, seeded sample, seed {seed}) for `ark eval --dataset
  jsonl:dev.jsonl`. Gold answers: what the question's relation path gives from its
  start node in `kb.tsv` (answers per question: {sizes}); the file itself names one.
  Questions are template-written English and name the start node as DBpedia does
  (underscores, parentheses), in French for paths that start on the French side.

A development set: tune on it freely.
"""


if __name__ == "__main__":
    main()
