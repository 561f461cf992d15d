"""A synthetic graph shaped like STaRK-MAG, written as ARK's nodes/edges parquet tables.

scale = 1.0: 1.9M nodes of 4 types (author, paper, field_of_study, institution in
MAG's proportions), 40M typed edges whose endpoints follow power laws (a few
field_of_study and paper hubs reach ~100k), and ~110 Zipfian tokens of text per
node. Generation is vectorised (numpy + pyarrow compute), so it takes about a
minute at full scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

NODES = 1_900_000
EDGES = 40_000_000
TOKENS_PER_NODE = 110
VOCAB = 300_000
ZIPF = 1.1
#: (type, share of nodes)
TYPES = [("author", 0.58), ("paper", 0.38), ("field_of_study", 0.035), ("institution", 0.005)]
#: (relation, source type, target type, share of edges, target power-law exponent)
RELATIONS = [
    ("paper___cites___paper", "paper", "paper", 0.35, 0.9),
    ("paper___has_topic___field_of_study", "paper", "field_of_study", 0.30, 1.0),
    ("author___writes___paper", "author", "paper", 0.30, 0.6),
    ("author___affiliated_with___institution", "author", "institution", 0.05, 0.9),
]


@dataclass
class Synthetic:
    n_nodes: int
    n_edges: int
    vocab: np.ndarray  # word strings
    word_p: np.ndarray  # Zipf probabilities of the words


def zipf_p(n: int, s: float, offset: float = 1.0) -> np.ndarray:
    p = 1.0 / (np.arange(n) + offset) ** s
    return p / p.sum()


def make_vocab(n: int, rng: np.random.Generator) -> np.ndarray:
    """Pronounceable unique words of 2-4 syllables (e.g. 'kelomar')."""
    syllables = np.array([c + v for c in "bdfgklmnprstvz" for v in "aeiou"])
    words: dict[str, None] = {}
    while len(words) < n:
        k = rng.integers(2, 5, size=n)
        picks = rng.integers(0, len(syllables), size=(n, 4))
        for row, length in zip(picks, k, strict=True):
            words.setdefault("".join(syllables[row[:length]]), None)
            if len(words) == n:
                break
    return np.array(list(words))


def generate(out: Path, scale: float = 1.0, seed: int = 0) -> Synthetic:
    rng = np.random.default_rng(seed)
    out.mkdir(parents=True, exist_ok=True)
    n = max(int(NODES * scale), 1000)
    m = max(int(EDGES * scale), 5000)
    counts = [max(int(n * share), 10) for _, share in TYPES]
    counts[0] += n - sum(counts)
    type_of = np.repeat(np.arange(len(TYPES)), counts)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])

    vocab = make_vocab(VOCAB, rng)
    word_p = zipf_p(VOCAB, ZIPF)
    words = pa.array(vocab)

    # Text: TOKENS_PER_NODE Zipfian words per node, joined in C++ by pyarrow.
    lengths = rng.integers(TOKENS_PER_NODE - 30, TOKENS_PER_NODE + 31, size=n)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    token_ids = rng.choice(VOCAB, size=int(offsets[-1]), p=word_p).astype(np.int32)
    tokens = pc.take(words, pa.array(token_ids))
    text = pc.binary_join(pa.LargeListArray.from_arrays(pa.array(offsets), tokens), " ")
    del tokens, token_ids
    properties = pc.binary_join_element_wise('{"text": "', text, '"}', "")
    del text
    # Names: two capitalised mid-frequency words, like entity names.
    first = rng.integers(2_000, 60_000, size=n)
    last = rng.integers(2_000, 60_000, size=n)
    name = pc.binary_join_element_wise(
        pc.utf8_capitalize(pc.take(words, pa.array(first))),
        pc.utf8_capitalize(pc.take(words, pa.array(last))),
        " ",
    )
    type_names = pa.array([t for t, _ in TYPES])
    nodes = pa.table(
        {
            "id": pa.array(np.arange(n, dtype=np.int64)),
            "name": name,
            "type": pc.take(type_names, pa.array(type_of)),
            "properties": properties,
        }
    )
    pq.write_table(nodes, out / "nodes.parquet", row_group_size=200_000)
    del nodes, properties

    index_of = {t: i for i, (t, _) in enumerate(TYPES)}
    src_parts, dst_parts, rel_parts = [], [], []
    for r, (_, s_type, t_type, share, alpha) in enumerate(RELATIONS):
        k = int(m * share)
        s_i, t_i = index_of[s_type], index_of[t_type]
        src = starts[s_i] + rng.integers(0, counts[s_i], size=k)
        # Power-law targets: the first targets of each type become hubs.
        dst = starts[t_i] + rng.choice(counts[t_i], size=k, p=zipf_p(counts[t_i], alpha, 20.0))
        src_parts.append(src)
        dst_parts.append(dst)
        rel_parts.append(np.full(k, r, dtype=np.int8))
    rel_names = pa.array([r[0] for r in RELATIONS])
    edges = pa.table(
        {
            "from": pa.array(np.concatenate(src_parts).astype(np.int64)),
            "to": pa.array(np.concatenate(dst_parts).astype(np.int64)),
            "type": pc.take(rel_names, pa.array(np.concatenate(rel_parts))),
        }
    )
    pq.write_table(edges, out / "edges.parquet", row_group_size=2_000_000)
    return Synthetic(n, edges.num_rows, vocab, word_p)
