"""How often the hints read a question's relation chain right, without running a model.

    python benchmarks/bench_linking.py [--sets metaqa-1 ... wc-conj] [--limit 30]
        [--sample-seed 0] [--reader linker|paths] [--show wrong|all|none]
        [--weight NAME=VALUE ...]
    python benchmarks/bench_linking.py --speed [--relations 10 20 50 100 200 500]
        [--phrases 5000] [--dense auto|off]

The agent's quality on the generality sets costs 15–60 min of CPU a set; most of what
the hints of ``ark-guided`` add is decided before the model acts, by reading the
question: which relations its chain uses (and how many times) and which nodes it
starts from. This benchmark scores that reading alone, in seconds, on the same fixed
samples as ``bench_quality.py``:

- **gold chain**, from the graph and the gold answers only: the relation paths of one
  to three hops (a relation and its stored reverse count as one, in a direction) from a
  node the question names whose end set is closest to the gold answers (F1; ties are
  all gold), and for a question naming two nodes, the pair of one-hop relations whose
  intersection is closest;
- **read**: the relations the hints act on, each with its number of uses;
- **chain right**: the read relations, with their uses, equal a gold chain's;
  **anchor found**: a gold chain starts from a node the spotter found;
- **named node found** (the entity-finding step alone): of the questions that name a
  node — a node whose whole name, or its name without a trailing parenthesis or
  year, stands in the question word for word (case and accents folded, ``_``, ``-``
  and ``'`` as spaces)
  and that reaches a gold answer within the set's hops (3 for a set not listed) —
  how many the reading spots one of; **guessed (right)**: chains no word of the
  question names while words of it stay unexplained, from a node whose relations
  offer a choice (``ChainHints.guess``: the hints state no path for them and hand the
  node's relations to the model), and how many of those are right all the same; and
  the CPU seconds a reading takes
  (spotting, linking, the chain search), median and 95th percentile, the first one
  aside.

``--weight NAME=VALUE`` reads with other chain weights (:class:`ark.reading.ChainWeights`'s
fields: one per feature of :data:`ark.reading.FEATURES` (``explained``, ``hops``,
``missing_uses``, ``out_of_order``, ``silent``, ``types_missed``,
``not_asked_first``, ``unread``; a cost is a negative weight) and the thresholds
``names`` and ``function_word``), to sweep them.

``--speed`` times one reading (spotting, linking, the chain search) per question on
synthetic graphs of 10 to 500 relations named the way dumps name them
(``place_of_death``), and of 5,000 relations named by free-text phrases (what a graph
extracted from documents has): the chain search keeps a beam of
:data:`ark.reading.BEAM` partial paths a depth, so its cost grows with the number of
relations a node has, not with the cube of the schema's.

A gold chain's F1 is shown too (below 1: no path of the graph gives exactly the
answer set from the spotted nodes). This is a proxy: the model may still take a right
reading the wrong way, or recover from a wrong one; ``bench_quality.py`` is the judge.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
import unicodedata
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import reduce
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ark.datasets import load_dataset, sample
from ark.index import shared_encoder
from ark.probes import MAX_HOPS, RelationStep, chain_question, named_relations, step_table
from ark.reading import (
    BEAM,
    DEFAULT_WEIGHTS,
    ChainWeights,
    linker_for,
    mediators,
    onward_relation,
    path_words,
    ranked_chains,
    read_question,
)
from ark.strategies.guided.hints import ChainHints
from ark.words import STOPWORDS, tokens
from bench_quality import SETS, default_data_dir, index_for, parse_set

Step = tuple[str, str]  # (forward relation, "out" | "in")


class Hopper:
    """One-hop expansion of node sets by forward relation and direction (a stored
    reverse copy ``r_inverse`` read as ``r`` the other way, as the chain reader reads
    it: its step table's step of every adjacency code)."""

    def __init__(self, index) -> None:  # type: ignore[no-untyped-def]
        self.g = index.graph
        self.steps: list[Step] = step_table(index, linker_for(index, "off")).code_step

    def expand(self, nodes: np.ndarray) -> dict[Step, np.ndarray]:
        g = self.g
        starts, ends = g.indptr[nodes], g.indptr[nodes + 1]
        if not len(nodes):
            return {}
        idx = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends, strict=True)])
        if not len(idx):
            return {}
        others, codes = np.asarray(g.adj_node[idx]), np.asarray(g.adj_code[idx])
        out: dict[Step, list[np.ndarray]] = {}
        for code in np.unique(codes).tolist():
            out.setdefault(self.steps[code], []).append(others[codes == code])
        return {s: np.unique(np.concatenate(parts)) for s, parts in out.items()}


def f1(found: Iterable[int], gold: frozenset[int]) -> float:
    found = set(found)
    hit = len(found & gold)
    return 0.0 if not hit else 2 * hit / (len(found) + len(gold))


def gold_chains(
    hopper: Hopper, anchors: Sequence[int], gold: frozenset[int], max_hops: int, cap: int = 20000
) -> tuple[float, list[tuple[int, tuple[Step, ...]]]]:
    """The best F1 over relation paths from each anchor, and the paths reaching it."""
    best, paths = 0.0, []
    for a in anchors:
        frontier = [((), np.array([a], dtype=np.int64))]
        for _ in range(max_hops):
            nxt = []
            for path, nodes in frontier:
                for step, reached in hopper.expand(nodes).items():
                    if len(reached) > cap:
                        continue
                    p = (*path, step)
                    score = f1(set(reached.tolist()) - {a}, gold)
                    if score > best + 1e-9:
                        best, paths = score, [(a, p)]
                    elif score > 0 and abs(score - best) < 1e-9:
                        paths.append((a, p))
                    nxt.append((p, reached))
            frontier = nxt
    return best, paths


def gold_pairs(
    hopper: Hopper, anchors: Sequence[int], gold: frozenset[int]
) -> tuple[float, list[tuple[int, tuple[Step, ...]]]]:
    """For two or more anchors: one-hop relations of two of them whose intersection
    is closest to the gold set."""
    best, paths = 0.0, []
    sets = {a: hopper.expand(np.array([a], dtype=np.int64)) for a in anchors}
    for i, a in enumerate(anchors):
        for b in anchors[i + 1 :]:
            for sa, na in sets[a].items():
                for sb, nb in sets[b].items():
                    score = f1(np.intersect1d(na, nb).tolist(), gold)
                    if score > best + 1e-9:
                        best, paths = score, [(a, (sa, sb))]
                    elif score > 0 and abs(score - best) < 1e-9:
                        paths.append((a, (sa, sb)))
    return best, paths


class PathWords:
    """How close a question comes to a relation path put in words: the path phrased
    :data:`PHRASINGS` times as ``ark distill synthesize`` phrases a walk (the described
    schema's words, the node called X), and the question with its node's name replaced
    by X, both encoded by the linking encoder (all-MiniLM-L6-v2); the best cosine.
    Phrasings are drawn with a seed of the path's own, so a reading is the same every
    run, and encoded once per path. With ``words="described"`` a path is instead its
    relations' labels and descriptions joined (:meth:`described`), one encoding."""

    PHRASINGS = 4

    def __init__(self, index, hopper: Hopper, words: str = "phrased") -> None:  # type: ignore[no-untyped-def]
        self.index, self.hopper, self.words = index, hopper, words
        self.encoder = shared_encoder()
        self.types = np.asarray(index.graph.node_type)
        self._vectors: dict[tuple, np.ndarray] = {}  # type: ignore[type-arg]
        self._typed: dict[tuple, tuple[tuple[str, str, str], ...]] = {}  # type: ignore[type-arg]

    def typed(self, anchor: int, steps: Sequence[Step]) -> tuple[tuple[str, str, str], ...]:
        """``steps`` with the node type most of each hop's nodes have (the node sets
        expanded once per anchor and path)."""
        key = (anchor, tuple(map(tuple, steps)))
        if key not in self._typed:
            out, nodes = [], np.array([anchor], dtype=np.int64)
            names = self.index.graph.node_type_names
            for step in key[1]:
                nodes = self.hopper.expand(nodes).get(step, np.array([], np.int64))
                kinds = self.types[nodes] if len(nodes) else np.zeros(1, np.int64)
                out.append((step[0], step[1], names[int(np.bincount(kinds).argmax())]))
            self._typed[key] = tuple(out)
        return self._typed[key]

    def vectors(self, anchor_type: str, typed: tuple[tuple[str, str, str], ...]) -> np.ndarray:
        key = (anchor_type, typed)
        if key not in self._vectors and self.words == "described":
            self._vectors[key] = self.encoder.encode([self.described(typed)])
        if key not in self._vectors:
            rng = random.Random(zlib.crc32(repr(key).encode()))
            hops = [RelationStep(r, d, t) for r, d, t in typed]
            texts = [
                chain_question("X", anchor_type, hops, rng, {}, self.index.described)
                for _ in range(self.PHRASINGS)
            ]
            self._vectors[key] = self.encoder.encode(texts)
        return self._vectors[key]

    def described(self, typed: tuple[tuple[str, str, str], ...]) -> str:
        """The path in the described schema's own words, as the library's reading
        puts it (:func:`ark.reading.path_words`)."""
        return path_words(self.index.described, [relation for relation, _, _ in typed])

    def question(self, question: str, start: int, end: int) -> np.ndarray:
        words = tokens(question)
        return self.encoder.encode([" ".join([*words[:start], "X", *words[end:]])])[0]

    def similarity(self, q: np.ndarray, anchor: int, steps: Sequence[Step]) -> float:
        g = self.index.graph
        return float((self.vectors(g.type_name(anchor), self.typed(anchor, steps)) @ q).max())

    def paths(self, anchor: int, max_hops: int, cap: int = 20000) -> list[tuple[Step, ...]]:
        """Every relation path of 1..``max_hops`` hops the graph has from ``anchor``."""
        out: list[tuple[Step, ...]] = []
        frontier = [((), np.array([anchor], dtype=np.int64))]
        for _ in range(max_hops):
            nxt = []
            for path, nodes in frontier:
                for step, reached in self.hopper.expand(nodes).items():
                    if len(reached) <= cap:
                        out.append((*path, step))
                        nxt.append(((*path, step), reached))
            frontier = nxt
        return out


#: A trailing parenthesis or year that qualifies a node's name (``Big (1988 film)``).
QUALIFIER = re.compile(r"\s*(\([^()]*\)|,?\s*\b1[5-9]\d\d\b|,?\s*\b20\d\d\b)\s*$")


def name_words(text: str) -> list[str]:
    """Words of a name or question for :class:`NamedNodes`, by this benchmark's own
    rule (letters of any script and digits, case and accents folded), so that the
    figure does not move with the tokenizer under test."""
    plain = unicodedata.normalize("NFKD", text.replace("_", " ").casefold())
    plain = "".join(c for c in plain if not unicodedata.combining(c))
    return re.findall(r"[^\W_]+", plain)


class NamedNodes:
    """The nodes a question names, from the graph and the gold answers only (not from
    the spotter): a node whose whole name, or its name without a trailing parenthesis
    or year, stands in the question word for word (case folded, ``_`` and ``-`` read
    as spaces) and that reaches a gold answer within the set's hops; of overlapping
    ones the longest. The entity-finding share is how often the reading spots one."""

    def __init__(self, index) -> None:  # type: ignore[no-untyped-def]
        self.g = index.graph
        self.by_words: dict[tuple[str, ...], list[int]] = {}
        self.longest = 1
        for i, name in enumerate(self.g.names):
            for form in {name, QUALIFIER.sub("", name)}:
                key = tuple(name_words(form))
                if key and len(key) <= 12:
                    self.by_words.setdefault(key, []).append(i)
                    self.longest = max(self.longest, len(key))

    def reach(self, node: int, hops: int, cap: int = 200000) -> set[int]:
        g, seen, frontier = self.g, {node}, np.array([node], dtype=np.int64)
        for _ in range(hops):
            starts, ends = g.indptr[frontier], g.indptr[frontier + 1]
            if not len(frontier) or int((ends - starts).sum()) > cap:
                break
            idx = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends, strict=True)])
            nxt = set(np.asarray(g.adj_node[idx]).tolist()) - seen
            seen |= nxt
            frontier = np.array(sorted(nxt), dtype=np.int64)
        return seen

    def __call__(self, question: str, gold: frozenset[int], hops: int) -> set[int]:
        words = name_words(question)
        spans: list[tuple[int, int, int]] = []
        for i in range(len(words)):
            for n in range(1, min(self.longest, len(words) - i) + 1):
                key = tuple(words[i : i + n])
                if all(w in STOPWORDS for w in key):
                    continue
                for node in self.by_words.get(key, ()):
                    if node not in gold and self.reach(node, hops) & gold:
                        spans.append((i, i + n, node))
        return {
            node
            for a, b, node in spans
            if not any(c <= a and b <= d and d - c > b - a for c, d, _ in spans)
        }


def read_chain(  # type: ignore[no-untyped-def]
    index,
    hopper: Hopper,
    question: str,
    reader: str,
    weights: ChainWeights = DEFAULT_WEIGHTS,
    words: PathWords | None = None,
    similarity: float = 0.0,
):
    """What the hints act on: each relation of the chain with its uses (for a question
    naming several nodes, each node's best-scored relation, as the intersection's
    filter), and the spotted nodes. ``reader``: ``paths`` reads as the session does
    now (:func:`ark.reading.read_chain` for a question naming one node); ``linker``
    counts the linker's confident relations by their mentions, as hints v5 did (run it
    with an older checkout's ``src`` on ``PYTHONPATH`` for that code's reading);
    ``encoder`` takes the path of one to three hops ``words`` finds closest to the
    question. ``similarity`` (with ``paths``): the reading's best :data:`RIVAL_DEPTH`
    chains re-ranked by score + ``similarity`` x their closeness (:class:`PathWords`)."""
    reading = read_question(index, question)
    anchors = [e.index for e in reading.entities]
    if len(anchors) > 1:
        chosen: Counter[str] = Counter()
        linking = reading.linking
        reached = []
        for a in anchors:
            hops = hopper.expand(np.array([a]))
            present = {s[0] for s in hops}
            scored = [(linking.score(r), r) for r in present if linking.score(r) > 0]
            if scored:
                best = max(scored)[1]
                chosen[best] = 1
                hops = {s: n for s, n in hops.items() if s[0] == best}
            reached.append(np.unique(np.concatenate([*hops.values(), np.array([], np.int64)])))
        # Meeting only at mediators, the hints send the hop on along the relation the
        # question names out of them (ark.reading.onward_relation), as this reads it.
        common = reduce(np.intersect1d, reached).tolist()
        found = mediators(index)
        if common and len(found) and all(i in found for i in common):
            onward = onward_relation(index, linking.score, common[:20], anchors)
            if onward is not None:
                chosen[onward] += 1
        return chosen, anchors, reading
    if reader == "encoder" and anchors and words is not None:
        e = reading.entities[0]
        q = words.question(question, e.start, e.end)
        paths = words.paths(e.index, MAX_HOPS)
        if paths:
            best = max(paths, key=lambda p: words.similarity(q, e.index, p))
            return Counter(r for r, _ in best), anchors, reading
    if reader == "paths" and similarity and anchors and words is not None:
        e = reading.entities[0]
        q = words.question(question, e.start, e.end)
        chains = ranked_chains(index, reading, question, weights)
        if chains:
            chain = max(
                chains, key=lambda c: c.score + similarity * words.similarity(q, e.index, c.steps)
            )
            return chain.uses, anchors, (reading, chain)
    if reader == "paths":
        from ark.reading import read_chain as chain_of

        chain = chain_of(index, reading, question, weights)
        if chain is not None:
            return chain.uses, anchors, (reading, chain)
    named = named_relations(reading.linking)
    return Counter({n.relation: n.uses for n in named}), anchors, reading


def extra(reading) -> str:  # type: ignore[no-untyped-def]
    if isinstance(reading, tuple):
        chain = reading[1]
        steps = " ".join(f"{r}({d})" for r, d in chain.steps)
        return f"chain: {steps} [{chain.score:.2f}] unexplained: {list(chain.unexplained)}"
    return f"unaccounted: {list(reading.linking.unaccounted)}"


def run_set(args: argparse.Namespace, spec: str) -> dict:  # type: ignore[type-arg]
    name, kb, dataset, split = parse_set(spec, args.data_dir)
    described = args.index_cache / f"{kb.parent.name}-{kb.stem}-described.idx"
    if (described / "meta.json").exists():  # bench_quality.py --describe made it
        from ark.index import open_index

        index = open_index(described)
    else:
        index, _ = index_for(kb, args.index_cache)
    if not any(s.startswith("model:") for s in index.described.sources):
        print(f"  note: {name}'s index is not described by a model", file=sys.stderr)
    queries = sample(
        load_dataset(dataset, index, split, kb.parent)[0], args.limit, args.sample_seed
    )
    hopper = Hopper(index)
    use = args.reader == "encoder" or args.similarity
    words = PathWords(index, hopper, args.path_words) if use else None
    hops = {"metaqa-1": 1, "metaqa-ntm": 1, "metaqa-2": 2, "metaqa-3": 3, "wc-2hop": 2}
    named_nodes = NamedNodes(index)
    right = anchored = exact = named = found = guessed = guessed_right = 0
    times = []
    for q in queries:
        # CPU seconds: on a shared machine the wall clock counts the others' load.
        t = time.process_time()
        read, anchors, reading = read_chain(
            index, hopper, q.text, args.reader, args.weights, words, args.similarity
        )
        times.append(time.process_time() - t)
        gold = frozenset(q.gold)
        names = named_nodes(q.text, gold, hops.get(name, 3))
        named += bool(names)
        found += bool(names & set(anchors))
        if name == "wc-conj" and len(anchors) > 1:
            score, paths = gold_pairs(hopper, anchors, gold)
        else:
            score, paths = gold_chains(hopper, anchors, gold, hops.get(name, 3))
        wanted = {frozenset(Counter(r for r, _ in p).items()) for _, p in paths}
        ok = frozenset(read.items()) in wanted
        right += ok
        anchored += bool(paths)
        exact += score == 1.0
        if ChainHints(index, q.text).guess is not None:
            guessed += 1
            guessed_right += ok
        if args.show == "all" or (args.show == "wrong" and not ok):
            gold_text = " | ".join(
                " ".join(f"{r}({d})" for r, d in p) for p in sorted({p for _, p in paths[:4]})
            )
            print(
                f"  {'ok ' if ok else 'NO '} {q.text}\n      read: {dict(read)}  "
                f"nodes: {[index.graph.name(a) for a in anchors]}\n      gold (F1 {score:.2f}): "
                f"{gold_text}  {extra(reading)}\n"
                f"      named: {[index.graph.name(a) for a in names]}"
            )
    n = len(queries)
    return {
        "set": name,
        "n": n,
        "right": right,
        "anchored": anchored,
        "exact": exact,
        "guessed": guessed,
        "guessed_right": guessed_right,
        "named": named,
        "found": found,
        "p50": float(np.percentile(times[1:] or times, 50)),
        "p95": float(np.percentile(times[1:] or times, 95)),
    }


#: Words the synthetic relations are named with (a dump's vocabulary of roles).
_NOUNS = [
    "place",
    "birth",
    "death",
    "cause",
    "spouse",
    "child",
    "parent",
    "sibling",
    "employer",
    "school",
    "team",
    "club",
    "country",
    "city",
    "language",
    "genre",
    "author",
    "director",
    "actor",
    "producer",
    "composer",
    "member",
    "founder",
    "owner",
    "capital",
    "currency",
    "religion",
    "party",
    "award",
    "position",
    "league",
    "sport",
    "instrument",
    "label",
    "publisher",
    "editor",
    "teacher",
    "student",
    "partner",
    "successor",
    "predecessor",
    "residence",
    "nationality",
    "ethnicity",
    "occupation",
    "title",
    "ancestor",
    "sponsor",
    "manufacturer",
    "developer",
    "designer",
    "architect",
    "venue",
    "river",
    "mountain",
    "region",
]
_LINKS = ("of", "in", "for", "by", "at", "from")


def synthetic_graph(n_relations: int, free_text: bool, seed: int = 0) -> str:
    """Triples of a graph of ``n_relations`` relations among 2,000 nodes, each node
    with 12 edges: relation names of two or three dump-style words
    (``cause_of_death``), or with ``free_text`` phrases of three to six words
    (``was the head coach of``)."""
    rng = np.random.default_rng(seed)
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < n_relations:
        if free_text:
            k = int(rng.integers(3, 7))
            words = [str(w) for w in rng.choice([*_NOUNS, *_LINKS], size=k)]
            name = " ".join(words)
        else:
            a, b = rng.choice(_NOUNS, size=2, replace=False)
            name = f"{a}_{rng.choice(_LINKS)}_{b}" if rng.random() < 0.5 else f"{a}_{b}"
        if name not in seen:
            seen.add(name)
            names.append(name)
    n_nodes = 2000
    lines = []
    for node in range(n_nodes):
        for r in rng.integers(0, n_relations, size=12):
            other = int(rng.integers(0, n_nodes))
            lines.append(f"node_{node}\t{names[r]}\tnode_{other}")
    return "\n".join(lines) + "\n"


def speed(args: argparse.Namespace) -> None:
    """Seconds per reading against the number of relations (see the module's text)."""
    import tempfile

    from ark.index import build_index, linking_encoder
    from ark.reading import read_chain as chain_of

    cases = [(n, False) for n in args.relations] + [(n, True) for n in args.phrases]
    encoder = linking_encoder(args.dense) or "none (labels and aliases only)"
    print(f"\nencoder: {encoder}; beam {BEAM}")
    print("\n| relations | named | first reading (s) | reading p50 (s) | p95 (s) |")
    print("|---:|---|---:|---:|---:|")
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as tmp:
        for n, free in cases:
            kb = Path(tmp) / f"kb-{n}-{int(free)}.tsv"
            kb.write_text(synthetic_graph(n, free), encoding="utf-8")
            index = build_index(kb, Path(tmp) / f"idx-{n}-{int(free)}")
            labels = [r.label for r in index.described.relations if not r.inverse_of]
            questions = []
            for _ in range(args.questions):
                a, b = rng.choice(len(labels), size=2)
                node = int(rng.integers(0, 2000))
                questions.append(f"what is the {labels[a]} of the {labels[b]} of node_{node} ?")
            times = []
            for q in questions:
                t = time.perf_counter()
                chain_of(index, read_question(index, q, args.dense), q, encoder=args.dense)
                times.append(time.perf_counter() - t)
            first, rest = times[0], np.array(times[1:])
            print(
                f"| {n} | {'free text' if free else 'dump-style'} | {first:.2f} | "
                f"{np.percentile(rest, 50):.3f} | {np.percentile(rest, 95):.3f} |"
            )


def parse_weights(pairs: Sequence[str]) -> ChainWeights:
    """``NAME=VALUE`` pairs as chain weights (the defaults for the rest)."""
    changes = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"--weight {pair!r}: write NAME=VALUE")
        changes[name] = float(value)
    try:
        return DEFAULT_WEIGHTS.replace(**changes)
    except ValueError as exc:
        raise SystemExit(f"--weight: {exc}") from None


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sets", nargs="+", default=list(SETS))
    p.add_argument("--limit", type=int, default=30)
    p.add_argument("--sample-seed", type=int, default=0)
    p.add_argument("--data-dir", type=Path, default=default_data_dir())
    p.add_argument("--index-cache", type=Path, default=Path(".bench"))
    p.add_argument("--reader", choices=["linker", "paths", "encoder"], default="paths")
    p.add_argument(
        "--similarity",
        type=float,
        default=0.0,
        metavar="W",
        help="re-rank the reading's best chains by score + W x the encoder's similarity",
    )
    p.add_argument(
        "--path-words",
        choices=["phrased", "described"],
        default="phrased",
        help="a path as synthetic questions phrase it, or its labels and descriptions",
    )
    p.add_argument("--show", choices=["wrong", "all", "none"], default="none")
    p.add_argument("--weight", nargs="+", default=[], metavar="NAME=VALUE")
    p.add_argument("--speed", action="store_true", help="time readings by schema size")
    p.add_argument("--relations", nargs="+", type=int, default=[10, 20, 50, 100, 200, 500])
    p.add_argument("--phrases", nargs="*", type=int, default=[5000])
    p.add_argument("--questions", type=int, default=21)
    p.add_argument("--dense", choices=["auto", "on", "off"], default="auto")
    args = p.parse_args(argv)
    if args.speed:
        speed(args)
        return
    args.weights = parse_weights(args.weight)
    if args.similarity or args.reader == "encoder":
        # The probes score paths with their own phrasing: the library's similarity
        # (ChainWeights.similarity) would count the encoder twice.
        args.weights = args.weights.replace(similarity=0.0)
    started = time.perf_counter()
    rows = []
    for spec in args.sets:
        print(f"{spec} ...", file=sys.stderr)
        rows.append(run_set(args, spec))
    print(
        "\n| set | n | chain right | anchor found | a gold chain with F1 = 1 "
        "| named node found | guessed (right) | reading p50 (CPU s) | p95 (CPU s) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        n = r["n"]
        print(
            f"| {r['set']} | {n} | {r['right']} ({100 * r['right'] / n:.1f}) | "
            f"{r['anchored']} | {r['exact']} | {r['found']} of {r['named']} | "
            f"{r['guessed']} ({r['guessed_right']}) | {r['p50']:.3f} | {r['p95']:.3f} |"
        )
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
