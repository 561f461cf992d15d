"""A sample of MuSiQue small enough to extract with the local model: k questions and
their own paragraphs.

    python benchmarks/devsets/make_musique_sample.py [--k 5] [--sample-seed 0]
        [--questions ../shared/data/musique/musique_dev_questions.json]
        [--out /work/devdata/mq-sample]

Why: a model extraction of the whole MuSiQue corpus (1,890 passages) takes about a day
with the local 1.5B here (``journal/results-diary.md``, ``ark ingest``), so issue 40's
"each graph measured the same way" needs a sample; the corpus's first 20 passages hold
no supporting passage of any dev question, so a sample of passages alone measures
nothing. A MuSiQue record carries its own 20 paragraphs — its supporting paragraphs
and the distractors the dataset's authors chose for it — so the paragraphs of k
questions are a corpus those k questions can be asked over, chosen by the dataset, not
by us. The same sample is then built three ways (the model's extraction, the fast
one, and HippoRAG's OpenIE of the same passages via the store) and each measured by
``bench_documents.py`` on the same k questions.

The k questions are those ``ark eval --limit k --sample-seed S`` picks
(``ark.datasets.sample``, in the file's order). What it writes under ``--out``:

- ``corpus.json`` — ``[{"title", "text"}]``: every paragraph of the k questions, once
  per distinct (title, text), in question order (the input of ``ark ingest``);
- ``questions.json`` — the k records, unchanged (``--dataset musique:FILE``);
- with ``--openie FILE`` (HippoRAG's OpenIE JSON of the whole corpus), ``store/``: the
  corpus again and that file's entries for these paragraphs alone — the gpt-3.5
  extraction of the very passages the sample holds, for ``ark index build OUT/store
  --format hipporag``. A paragraph the file has no entry for is named, and the folder
  is not written.

Reads the question file only; nothing is fetched.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ark.datasets import sample

DEFAULT_QUESTIONS = (
    Path(__file__).resolve().parents[3] / "shared/data/musique/musique_dev_questions.json"
)


def corpus_of(records: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The records' paragraphs as a corpus, each distinct (title, text) once."""
    seen: set[tuple[str, str]] = set()
    out = []
    for r in records:
        for p in r["paragraphs"]:
            key = (p["title"], p["paragraph_text"])
            if key not in seen:
                seen.add(key)
                out.append({"title": p["title"], "text": p["paragraph_text"]})
    return out


def store_of(corpus: list[dict[str, str]], openie: Path) -> dict[str, Any]:
    """``openie`` (a HippoRAG OpenIE JSON) cut to the paragraphs of ``corpus``, in the
    file's order; every other key of the file kept."""
    try:
        data = json.loads(openie.read_text(encoding="utf-8"))
        docs = {(d["title"], d["text"]): d for d in data["docs"]}
        keep = {(p["title"], p["text"]) for p in corpus}
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        sys.exit(f"make_musique_sample: {openie} is not a HippoRAG OpenIE JSON: {exc}")
    missing = [p["title"] for p in corpus if (p["title"], p["text"]) not in docs]
    if missing:
        sys.exit(
            f"make_musique_sample: {openie} has no entry for {len(missing)} paragraph(s) "
            f"of the sample, e.g. {missing[0]!r}"
        )
    return {**data, "docs": [d for key, d in docs.items() if key in keep]}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    p.add_argument("--k", type=int, default=5, help="questions in the sample")
    p.add_argument("--sample-seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path("/work/devdata/mq-sample"))
    p.add_argument(
        "--openie",
        type=Path,
        default=None,
        help="HippoRAG's OpenIE JSON of the corpus: also write OUT/store/ (see above)",
    )
    args = p.parse_args(argv)
    try:
        records = json.loads(args.questions.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        sys.exit(f"make_musique_sample: cannot read {args.questions}: {exc}")
    if not isinstance(records, list) or not all("paragraphs" in r for r in records):
        sys.exit(f"make_musique_sample: {args.questions} is not a MuSiQue question file")
    chosen = sample(records, args.k, args.sample_seed)
    try:
        corpus = corpus_of(chosen)
        supporting = sum(bool(p["is_supporting"]) for r in chosen for p in r["paragraphs"])
    except (KeyError, TypeError) as exc:
        sys.exit(f"make_musique_sample: {args.questions}: a paragraph lacks {exc}")
    store = store_of(corpus, args.openie) if args.openie is not None else None
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "corpus.json").write_text(json.dumps(corpus, ensure_ascii=False, indent=1))
    (args.out / "questions.json").write_text(json.dumps(chosen, ensure_ascii=False, indent=1))
    if store is not None:
        (args.out / "store").mkdir(exist_ok=True)
        (args.out / "store" / "corpus.json").write_text(json.dumps(corpus, ensure_ascii=False))
        (args.out / "store" / "openie.json").write_text(json.dumps(store, ensure_ascii=False))
        print(f"{len(store['docs'])} OpenIE entries -> {args.out}/store/")
    print(
        f"{len(chosen)} questions, {len(corpus)} paragraphs ({supporting} supporting) "
        f"-> {args.out}/corpus.json, {args.out}/questions.json"
    )


if __name__ == "__main__":
    main()
