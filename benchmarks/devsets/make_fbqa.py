"""Build the ``fbqa`` dev set: FreebaseQA's questions over the Freebase facts they were matched to.

    python benchmarks/devsets/make_fbqa.py [--source DIR_OR_GIT_DIR] [--commit SHA]
        [--out /work/devdata/fbqa] [--n 300] [--seed 0]

Why this set: MetaQA and WC2014 name their relations in a handful of words
(``directed_by``, ``plays_in_club``) and their nodes in title case; a Freebase
export names relations by dotted schema paths (``people.person.spouse_s``), reaches
many answers through unnamed mediator (CVT) nodes, and its node names here are lower
case. The questions are trivia written for people (FreebaseQA, Jiang et al., NAACL
2019, CC-BY-4.0), not templates, so the wording is the dataset's own.

Source: the tab-separated files of https://github.com/kelvin-jiang/FreebaseQA at
commit ``d71dab0`` (the last commit that ships them; later ones ship JSON only), in
its ``fixed secondary predicates`` form: per matched parse, the mention, the Freebase
name and mid of the topic entity, the predicate, the mediator's predicate (or
``null``), the answer's mid, the answer string and the question. ``--source`` is a
folder holding ``FreebaseQA-dev.tab`` and ``FreebaseQA-eval.tab``, or a git directory
(the fetched mirror) read at ``--commit``.

What it writes under ``--out``:

- ``kb.tsv`` — ``head<TAB>relation<TAB>tail``: every parse of the dev and eval files
  as a fact (``topic p answer``), or through a mediator node (``topic p1 cvt`` and
  ``cvt p2 answer``) when the parse has a secondary predicate. A mediator has no name
  in Freebase; it is named ``cvt_`` and a hash of its parse, one per (topic, p1, p2,
  answer). An entity is named by its Freebase name where the files give one (the
  topic column), else by its answer string; names are lower-cased, as the Freebase
  names of these files are; mids with one name are one node.
- ``dev.jsonl`` — ``--n`` questions of FreebaseQA's dev file (a seeded sample), each
  with every answer node of its parses as ``answer_names``, for ``ark eval --dataset
  jsonl:...``; ``qtype`` is ``1-hop`` when a parse reaches the answer directly, else
  ``cvt`` (two hops through a mediator).
- ``README.md`` — provenance, licence and counts.
"""

from __future__ import annotations

import csv
import hashlib
import io
import random
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import most_used, parse_args, read_source, relation_counts, sample, write_set

DEFAULT_MIRROR = Path("/work/.mirror/kelvin-jiang+FreebaseQA/repo")
DEFAULT_COMMIT = "d71dab0452f77c338e26c23fee0a6472c50bb77d"
DEFAULT_OUT = Path("/work/devdata/fbqa")
FILES = ("FreebaseQA-dev.tab", "FreebaseQA-eval.tab")


@dataclass(frozen=True)
class Parse:
    """One line of a FreebaseQA ``.tab`` file."""

    topic_name: str
    topic_mid: str
    p1: str
    p2: str | None
    answer_mid: str
    answer: str
    question: str


def read_text(source: Path, commit: str, name: str) -> str:
    """``name`` from a folder, or from a git directory at ``commit``."""
    text = read_source(source, commit, name)
    if text is None:
        raise SystemExit(f"{name}: neither in the folder {source} nor at {commit} in it")
    return text


def parse_tab(text: str, name: str) -> list[Parse]:
    """The rows of a ``.tab`` file; a question with quotes is CSV-quoted there."""
    rows = []
    reader = csv.reader(io.StringIO(text), delimiter="\t", quotechar='"')
    for lineno, row in enumerate(reader, start=1):
        if not row:
            continue
        if len(row) != 8:
            raise SystemExit(f"{name}:{lineno}: expected 8 tab-separated fields, got {len(row)}")
        _, topic, tmid, p1, p2, amid, answer, question = (c.strip() for c in row)
        rows.append(Parse(topic, tmid, p1, None if p2 == "null" else p2, amid, answer, question))
    return rows


def node_names(parses: list[Parse]) -> dict[str, str]:
    """A name for every mid: its most frequent Freebase name (topic column), else its
    most frequent answer string, lower-cased. Mids that share a name become one node,
    as MetaQA's one string is one entity: Freebase keeps a play, its films and each
    recording of a title as separate mids (4,770 of 13,807 here share a name), which a
    question cannot tell apart."""
    fb: dict[str, Counter[str]] = defaultdict(Counter)
    given: dict[str, Counter[str]] = defaultdict(Counter)
    for p in parses:
        fb[p.topic_mid][p.topic_name.lower()] += 1
        given[p.answer_mid][p.answer.lower()] += 1
    names = {}
    for mid in sorted(set(fb) | set(given)):
        counts = fb.get(mid) or given[mid]
        names[mid] = min(counts, key=lambda n: (-counts[n], n))
    return names


def cvt_name(p: Parse) -> str:
    key = "|".join((p.topic_mid, p.p1, p.p2 or "", p.answer_mid))
    return "cvt_" + hashlib.sha1(key.encode()).hexdigest()[:10]


def build(parses: list[Parse], names: dict[str, str]) -> list[tuple[str, str, str]]:
    """The graph's facts, deduplicated, in first-seen order."""
    seen: dict[tuple[str, str, str], None] = {}
    for p in parses:
        head, tail = names[p.topic_mid], names[p.answer_mid]
        if p.p2 is None:
            seen[(head, p.p1, tail)] = None
        else:
            cvt = cvt_name(p)
            seen[(head, p.p1, cvt)] = None
            seen[(cvt, p.p2, tail)] = None
    return list(seen)


def questions(parses: list[Parse], names: dict[str, str], prefix: str) -> list[dict]:
    """One record per distinct question text, answers the union of its parses'."""
    grouped: dict[str, list[Parse]] = {}
    for p in parses:
        grouped.setdefault(p.question, []).append(p)
    out = []
    for i, (text, ps) in enumerate(grouped.items()):
        answers = sorted({names[p.answer_mid] for p in ps})
        qtype = "1-hop" if any(p.p2 is None for p in ps) else "cvt"
        out.append({"id": f"{prefix}/{i}", "query": text, "answer_names": answers, "qtype": qtype})
    return out


def main(argv: list[str] | None = None) -> None:
    args = parse_args(
        __doc__, mirror=DEFAULT_MIRROR, commit=DEFAULT_COMMIT, out=DEFAULT_OUT, argv=argv
    )

    dev = parse_tab(read_text(args.source, args.commit, FILES[0]), FILES[0])
    evaluation = parse_tab(read_text(args.source, args.commit, FILES[1]), FILES[1])
    names = node_names(dev + evaluation)
    triples = build(dev + evaluation, names)
    records = questions(dev, names, "fbqa-dev")
    chosen = sample(random.Random(args.seed), records, min(args.n, len(records)))

    relations, nodes = relation_counts(triples)
    qtypes = Counter(r["qtype"] for r in chosen)
    readme = README.format(
        commit=args.commit,
        triples=len(triples),
        nodes=len(nodes),
        cvts=sum(1 for n in nodes if n.startswith("cvt_")),
        relations=len(relations),
        top=most_used(relations),
        all_dev=len(records),
        n=len(chosen),
        seed=args.seed,
        qtypes=", ".join(f"{k} {v}" for k, v in sorted(qtypes.items())),
    )
    write_set(args.out, triples, chosen, readme)


README = """# fbqa — FreebaseQA over the Freebase facts it was matched to

Made by `benchmarks/devsets/make_fbqa.py` (in the ARK repository); do not edit by hand.

Source: FreebaseQA (Kelvin Jiang, Dan Wu, Hui Jiang, "FreebaseQA: A New Factoid QA
Data Set Matching Trivia-Style Question-Answer Pairs with Freebase", NAACL 2019),
https://github.com/kelvin-jiang/FreebaseQA, files `FreebaseQA-dev.tab` and
`FreebaseQA-eval.tab` at commit `{commit}`. Licence: CC-BY-4.0 (the repository's
LICENSE): research use allowed, credit the authors.

- `kb.tsv` — `head<TAB>relation<TAB>tail`, {triples} facts, {nodes} nodes ({cvts} of
  them unnamed mediator nodes `cvt_…`), {relations} relations named as Freebase
  names them (most used: {top}). Every matched parse of the dev and eval files is a
  fact, through a mediator node when the parse has a secondary predicate. Node names
  are the files' Freebase names (an answer never seen as a topic: its answer string),
  lower-cased; mids that share a name are one node (Freebase has a mid for a play,
  each of its films and each recording of a title). The graph holds only the
  facts the questions were matched to (the full Freebase extract is 2.2 GB): each
  question's topic node has its gold facts plus whatever other questions added.
- `dev.jsonl` — {n} of the dev file's {all_dev} questions (seeded sample, seed
  {seed}; {qtypes}), `answer_names` the answers of all its parses, for
  `ark eval --dataset jsonl:dev.jsonl`. The questions are trivia in their original
  wording; the topic is often named indirectly ("a famous 1939 film"), so finding the
  start node is part of the test.

A development set: tune on it freely.
"""


if __name__ == "__main__":
    main()
