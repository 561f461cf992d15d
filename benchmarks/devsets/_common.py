"""What the dev-set scripts share: the command line, reading a source file from a folder
or a fetched git mirror, the seeded sample, and writing a set (``kb.tsv``,
``dev.jsonl``, ``README.md``) in the one layout ``ark index build`` and ``ark eval
--dataset jsonl:...`` read. Each script keeps what is its own: parsing its dataset's
files, building its graph, choosing its questions and its README's words."""

from __future__ import annotations

import argparse
import json
import random
import subprocess
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
Triple = tuple[str, str, str]  # (head, relation, tail), as kb.tsv writes it


def parse_args(
    doc: str | None,
    *,
    mirror: Path,
    commit: str,
    out: Path,
    argv: list[str] | None,
    extra: Sequence[tuple[str, Path | str, str]] = (),
) -> argparse.Namespace:
    """``--source`` (a folder or a git directory; default the fetched ``mirror``),
    ``--commit``, ``--out``, ``--n`` (questions, 300) and ``--seed`` (0); ``extra``
    adds options of a script whose set reads a second repository (``(flag, default,
    help)``, the option of the default's type)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--source", type=Path, default=mirror)
    ap.add_argument("--commit", default=commit)
    ap.add_argument("--out", type=Path, default=out)
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    for flag, default, text in extra:
        ap.add_argument(flag, type=type(default), default=default, help=text)
    return ap.parse_args(argv)


def read_source(source: Path, commit: str, name: str) -> str | None:
    """The file ``name`` (a path inside the repository) from the folder ``source`` (by
    its base name), or from the git directory ``source`` at ``commit``; None when it is
    in neither."""
    base = name.rsplit("/", 1)[-1]
    if source.is_dir() and (source / base).exists():
        return (source / base).read_text(encoding="utf-8")
    if not (source / "HEAD").exists():
        return None
    out = subprocess.run(
        ["git", f"--git-dir={source}", "show", f"{commit}:{name}"], capture_output=True
    )
    return out.stdout.decode("utf-8") if out.returncode == 0 else None


def sample(rng: random.Random, records: Sequence[T], k: int) -> list[T]:
    """``k`` of ``records`` drawn by ``rng``, in their own order (a set's questions keep
    the file's order, whatever the draw)."""
    return [records[j] for j in sorted(rng.sample(range(len(records)), k))]


def relation_counts(triples: Sequence[Triple]) -> tuple[Counter[str], set[str]]:
    """The facts per relation and the set of nodes, for a README's counts."""
    relations = Counter(r for _, r, _ in triples)
    nodes = {h for h, _, _ in triples} | {t for _, _, t in triples}
    return relations, nodes


def most_used(relations: Counter[str], n: int = 8) -> str:
    """The ``n`` most used relations, as a README lists them (in backticks)."""
    return ", ".join(f"`{r}`" for r, _ in relations.most_common(n))


def write_set(
    out: Path, triples: Sequence[Triple], records: Sequence[dict[str, Any]], readme: str
) -> None:
    """``kb.tsv``, ``dev.jsonl`` and ``README.md`` under ``out``, and a line saying what
    was written."""
    out.mkdir(parents=True, exist_ok=True)
    with (out / "kb.tsv").open("w", encoding="utf-8") as f:
        for h, r, t in triples:
            f.write(f"{h}\t{r}\t{t}\n")
    with (out / "dev.jsonl").open("w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    (out / "README.md").write_text(readme, encoding="utf-8")
    relations = len({r for _, r, _ in triples})
    print(f"{out}: {len(triples)} triples, {relations} relations, {len(records)} questions")
