"""Build the ``wdsq`` dev set: SimpleQuestions on Wikidata, over the facts its questions name.

    python benchmarks/devsets/make_wdsq.py [--source DIR_OR_GIT_DIR] [--commit SHA]
        [--labels DIR_OR_GIT_DIR] [--labels-commit SHA]
        [--out /work/devdata/wdsq] [--n 300] [--seed 0]

Why this set: its relations are Wikidata property labels, written the way Wikidata
writes them (``place of birth``, ``position played on team / speciality``,
``located in the administrative territorial entity``), its nodes Wikidata item labels
(``8596 Alchata``, ``United States of America``, ``film director``), and its questions
the crowd-written SimpleQuestions (Bordes et al., 2015) as people typed them: lower
case, typos kept ("who is the chid of fritz leiber?"), a fifth of them asking from the
object's side ("who was born in blackwater?"). MetaQA, WC2014, MLPQ and FreebaseQA
have none of these names, and none of this wording.

Sources:

- the questions and their facts: SimpleQuestionsWikidata (Diefenbach, Tanon, Singh,
  Maret, "Question Answering Benchmarks for Wikidata", ISWC 2017),
  https://github.com/askplatypus/wikidata-simplequestions, files
  ``annotated_wd_data_{train,valid,test}_answerable.txt`` (the questions whose fact is
  in Wikidata): ``subject<TAB>property<TAB>object<TAB>question`` with Wikidata ids, a
  property ``Rxxx`` being ``Pxxx`` read from its object (``Q880963 R19 Q270657``: Q270657
  was born in Q880963). ``--source`` is a folder holding those files or a git
  directory (the fetched mirror) read at ``--commit``.
- the labels: the English Wikidata labels of the same files' subject, property and
  object, one CSV row a question (``,e1,p,e2,q``), from
  https://github.com/amy-hyunji/wiki_samplequestion (``n_annotated_wd_data_*.csv``):
  ``--labels`` and ``--labels-commit``, read like ``--source``. A row is matched to
  its line by the question text (a text on several lines of a file is left out of the
  vote); an id is named by the label most of its matched rows give it.

What it writes under ``--out``:

- ``kb.tsv`` — ``head<TAB>relation<TAB>tail``: the fact of every labelled question of
  the three splits, the right way round (``Rxxx`` turned back into ``Pxxx``); ids
  with one label are one node.
- ``dev.jsonl`` — ``--n`` questions of the valid file (a seeded sample), for ``ark
  eval --dataset jsonl:...``; ``answer_names`` is every node the question's relation
  gives from its topic node in ``kb.tsv`` (from the object's side for ``Rxxx``), the
  file's own object among them; ``qtype`` is ``1-hop`` or ``1-hop reverse``.
- ``README.md`` — provenance, licence and counts.
"""

from __future__ import annotations

import csv
import io
import random
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import most_used, parse_args, read_source, relation_counts, sample, write_set

DEFAULT_MIRROR = Path("/work/.mirror/askplatypus+wikidata-simplequestions/repo")
DEFAULT_COMMIT = "df69267f1db4f85a71325e7e8c06e192bcaf0b0e"
DEFAULT_LABELS = Path("/work/.mirror/amy-hyunji+wiki_samplequestion/repo")
DEFAULT_LABELS_COMMIT = "c038bc243935a295eb8a83b07d7f317eb18cd430"
DEFAULT_OUT = Path("/work/devdata/wdsq")
SPLITS = ("train", "valid", "test")


@dataclass(frozen=True)
class Line:
    """One line of an ``annotated_wd_data_*`` file."""

    subject: str
    prop: str  # Pxxx, or Rxxx for Pxxx read from the object
    obj: str
    question: str

    @property
    def reverse(self) -> bool:
        return self.prop.startswith("R")

    @property
    def pid(self) -> str:
        """The Wikidata property, whichever way the question reads it."""
        return "P" + self.prop[1:]

    def fact(self) -> tuple[str, str, str]:
        """(head id, property, tail id) as Wikidata states it."""
        if self.reverse:
            return self.obj, self.pid, self.subject
        return self.subject, self.pid, self.obj


def parse_lines(text: str, where: str) -> list[Line]:
    """The lines of an ``annotated_wd_data_*`` file (the question keeps its wording; only
    the spaces around it go)."""
    out = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        parts = raw.split("\t")
        if len(parts) != 4 or parts[1][:1] not in "PR":
            raise SystemExit(f"{where}:{lineno}: expected SUBJECT<TAB>P|Rxxx<TAB>OBJECT<TAB>Q")
        out.append(Line(parts[0], parts[1], parts[2], parts[3].strip()))
    return out


def label_votes(
    lines: Iterable[Line], rows: Iterable[list[str]]
) -> tuple[dict[str, Counter[str]], dict[str, Counter[str]]]:
    """The labels each entity id and each property is given by the CSV rows (``,e1,p,e2,q``)
    matched to lines by their question text; a text on several lines (or rows) is
    ambiguous and gives no vote."""
    by_text: dict[str, list[list[str]]] = defaultdict(list)
    for row in rows:
        if len(row) == 5:
            by_text[row[4].strip()].append(row)
    lines = list(lines)
    seen = Counter(line.question for line in lines)
    entity: dict[str, Counter[str]] = defaultdict(Counter)
    prop: dict[str, Counter[str]] = defaultdict(Counter)
    for line in lines:
        matched = by_text.get(line.question, [])
        if seen[line.question] != 1 or len(matched) != 1:
            continue
        _, e1, p, e2, _ = matched[0]
        entity[line.subject][e1] += 1
        entity[line.obj][e2] += 1
        prop[line.pid][p] += 1
    return entity, prop


def majority(votes: dict[str, Counter[str]]) -> dict[str, str]:
    """Each id's most given label (ties: the first in sorted order)."""
    return {k: min(c, key=lambda n: (-c[n], n)) for k, c in votes.items()}


def main(argv: list[str] | None = None) -> None:
    args = parse_args(
        __doc__,
        mirror=DEFAULT_MIRROR,
        commit=DEFAULT_COMMIT,
        out=DEFAULT_OUT,
        argv=argv,
        extra=[
            ("--labels", DEFAULT_LABELS, "folder or git directory of the labels' CSV files"),
            ("--labels-commit", DEFAULT_LABELS_COMMIT, "commit of --labels to read"),
        ],
    )

    lines: dict[str, list[Line]] = {}
    rows: list[list[str]] = []
    for split in SPLITS:
        name = f"annotated_wd_data_{split}_answerable.txt"
        text = read_source(args.source, args.commit, name)
        if text is None:
            raise SystemExit(f"{name}: neither in the folder {args.source} nor at {args.commit}")
        lines[split] = parse_lines(text, name)
        csv_name = f"n_annotated_wd_data_{split}_answerable.csv"
        table = read_source(args.labels, args.labels_commit, csv_name)
        if table is None:
            raise SystemExit(f"{csv_name}: not in {args.labels} (at {args.labels_commit})")
        rows += list(csv.reader(io.StringIO(table)))[1:]

    every = [line for split in SPLITS for line in lines[split]]
    entity_votes, prop_votes = label_votes(every, rows)
    name, prop = majority(entity_votes), majority(prop_votes)

    def labelled(line: Line) -> tuple[str, str, str] | None:
        h, p, t = line.fact()
        if h in name and t in name and p in prop:
            return name[h], prop[p], name[t]
        return None

    triples: dict[tuple[str, str, str], None] = {}
    unlabelled = 0
    for line in every:
        fact = labelled(line)
        if fact is None:
            unlabelled += 1
        else:
            triples[fact] = None
    out_edges: dict[tuple[str, str], set[str]] = defaultdict(set)
    in_edges: dict[tuple[str, str], set[str]] = defaultdict(set)
    for h, r, t in triples:
        out_edges[(h, r)].add(t)
        in_edges[(t, r)].add(h)

    # one record per question text; the answers are what its relation gives from its
    # topic node, the way the question reads it
    grouped: dict[str, list[Line]] = {}
    dropped = 0
    for line in lines["valid"]:
        if labelled(line) is None:
            dropped += 1
        else:
            grouped.setdefault(line.question, []).append(line)
    records = []
    for text, group in grouped.items():
        gold: set[str] = set()
        for line in group:
            topic, relation = name[line.subject], prop[line.pid]
            edges = in_edges if line.reverse else out_edges
            gold |= edges[(topic, relation)]
        reverse = all(line.reverse for line in group)
        records.append(
            {
                "id": f"wdsq-valid/{len(records)}",
                "query": text,
                "answer_names": sorted(gold),
                "qtype": "1-hop reverse" if reverse else "1-hop",
            }
        )
    chosen = sample(random.Random(args.seed), records, min(args.n, len(records)))

    kb = list(triples)
    relations, nodes = relation_counts(kb)
    degree: dict[str, set[tuple[str, bool]]] = defaultdict(set)
    for h, r, t in kb:
        degree[h].add((r, True))
        degree[t].add((r, False))
    by_text = {line.question: line for line in lines["valid"]}
    lone = sum(1 for r in chosen if len(degree[name[by_text[r["query"]].subject]]) == 1)
    qtypes = Counter(r["qtype"] for r in chosen)
    sizes = Counter(min(len(r["answer_names"]), 5) for r in chosen)
    ids = {i for line in every for i in (line.subject, line.obj)}
    readme = README.format(
        commit=args.commit,
        labels_commit=args.labels_commit,
        lines=len(every),
        unlabelled=unlabelled,
        triples=len(kb),
        nodes=len(nodes),
        merged=len(ids & set(name)) - len(set(name[i] for i in ids & set(name))),
        relations=len(relations),
        top=most_used(relations),
        valid=len(lines["valid"]),
        dropped=dropped,
        kept=len(records),
        n=len(chosen),
        seed=args.seed,
        qtypes=", ".join(f"{k} {v}" for k, v in sorted(qtypes.items())),
        sizes=", ".join(f"{'5+' if k == 5 else k}: {v}" for k, v in sorted(sizes.items())),
        lone=lone,
    )
    write_set(args.out, kb, chosen, readme)


README = """# wdsq — SimpleQuestions on Wikidata, over the facts its questions name

Made by `benchmarks/devsets/make_wdsq.py` (in the ARK repository); do not edit by hand.

Sources:

- SimpleQuestionsWikidata (Dennis Diefenbach, Thomas Pellissier Tanon, Kamal Deep
  Singh, Pierre Maret, "Question Answering Benchmarks for Wikidata", ISWC 2017
  posters), https://github.com/askplatypus/wikidata-simplequestions at commit
  `{commit}`, files `annotated_wd_data_{{train,valid,test}}_answerable.txt`: the
  SimpleQuestions questions (Bordes, Usunier, Chopra, Weston 2015) whose Freebase fact
  was mapped to a Wikidata fact. Licence: CC BY 3.0 (the repository's LICENSE.txt,
  SimpleQuestions' own): research use allowed, credit the authors.
- the English labels of those ids: https://github.com/amy-hyunji/wiki_samplequestion
  at commit `{labels_commit}` (`n_annotated_wd_data_*_answerable.csv`, labels read
  from Wikidata's pages). No licence is stated there; the labels are Wikidata's
  (CC0).

- `kb.tsv` — `head<TAB>relation<TAB>tail`, {triples} facts over {nodes} nodes and
  {relations} relations named by their Wikidata labels (most used: {top}): the fact
  of each of the {lines} questions of the three splits, the way Wikidata states it
  ({unlabelled} left out: an id the label files do not name). Ids with the same label
  are one node ({merged} ids merged so). The graph holds only the questions' own
  facts: most topic nodes have only their question's relation ({lone} of the {n}
  sampled questions' topic nodes have no other), so finding the node is most of the
  test and choosing its relation little of it.
- `dev.jsonl` — {n} of the {kept} question texts of the valid file (seeded sample,
  seed {seed}; {qtypes}) for `ark eval --dataset jsonl:dev.jsonl`; {dropped} of its
  {valid} lines were left out, their fact having an id the label files do not name.
  Gold answers: every node the question's relation gives from its topic node in
  `kb.tsv`, from the object's side for a reversed property (answers per question:
  {sizes}). The wording is the crowd's, lower case and typos kept; "reverse"
  questions ask from the object ("who was born in blackwater?").

A development set: tune on it freely.
"""


if __name__ == "__main__":
    main()
