"""A plain model of a changing graph, and the comparison of an updated index with an
index built from scratch on the model's final graph (shared by the update tests)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ark.graph import Graph
from ark.index import (
    BM25Params,
    Index,
    Removal,
    Tokenizer,
    TokenizerConfig,
    build_bm25,
    update_index,
)
from ark.probes import index_descriptors, write_index
from ark.tools import GraphTools, SearchResult

WORDS = "alpha beta gamma delta river stone paper light tom hanks city north".split()  # noqa: SIM905


@dataclass
class Model:
    """Live nodes in index order (as ``compact`` orders them) and edges by name."""

    nodes: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (type, text)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    type_names: list[str] = field(default_factory=list)
    relation_names: list[str] = field(default_factory=list)

    def graph(self) -> Graph:
        names = list(self.nodes)
        ids = {n: i for i, n in enumerate(names)}
        for t in (t for t, _ in self.nodes.values()):
            if t not in self.type_names:
                self.type_names.append(t)
        for r in (r for _, r, _ in self.edges):
            if r not in self.relation_names:
                self.relation_names.append(r)
        tid = {t: i for i, t in enumerate(self.type_names)}
        rid = {r: i for i, r in enumerate(self.relation_names)}
        return Graph.from_edges(
            names=names,
            node_type=np.asarray([tid[t] for t, _ in self.nodes.values()], np.int64),
            node_type_names=list(self.type_names),
            texts=[x for _, x in self.nodes.values()],
            src=np.asarray([ids[h] for h, _, _ in self.edges], np.int64),
            dst=np.asarray([ids[t] for _, _, t in self.edges], np.int64),
            rel=np.asarray([rid[r] for _, r, _ in self.edges], np.int64),
            relation_names=list(self.relation_names),
        )


def text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 6)))


def random_model(rng: random.Random, n: int) -> Model:
    m = Model(type_names=["person", "movie", "tag"], relation_names=["r1", "r2", "r3"])
    for i in range(n):
        m.nodes[f"n{i} {rng.choice(WORDS)}"] = (rng.choice(m.type_names), text(rng))
    names = list(m.nodes)
    for _ in range(rng.randint(n, 3 * n)):
        m.edges.append((rng.choice(names), rng.choice(m.relation_names), rng.choice(names)))
    return m


def write_model(m: Model, path: Path) -> Index:
    """An index of the model's graph, written as ``ark index build`` writes one."""
    g = m.graph()
    from ark.graph import DescribedSchema

    return write_index(
        g,
        DescribedSchema.from_names(g.schema, g),
        path,
        source_info={"path": "model", "format": "model", "sha256": "", "bytes": 0},
        tokenizer=TokenizerConfig(),
        params=BM25Params(),
    )


def scratch(m: Model) -> GraphTools:
    """The model's final graph indexed from scratch, in memory."""
    g = m.graph()
    tok = Tokenizer(TokenizerConfig())
    bm25 = build_bm25(index_descriptors(g), g.n_nodes, tok, BM25Params())
    return GraphTools(Index(Path("scratch"), g, bm25, {}))


def random_update(rng: random.Random, m: Model, path: Path, gen: int) -> None:
    """One random update applied to both the model and the index."""
    names = list(m.nodes)
    removal = Removal()
    doomed: set[str] = set()
    if names and rng.random() < 0.5:
        doomed = set(rng.sample(names, rng.randint(1, min(2, len(names)))))
        removal.nodes = [(n, None) for n in doomed]
    live_edges = [e for e in m.edges if e[0] not in doomed and e[2] not in doomed]
    gone: list[tuple[str, str, str]] = []
    if live_edges and rng.random() < 0.5:
        gone = rng.sample(live_edges, rng.randint(1, min(3, len(live_edges))))
        removal.edges = [(e, None) for e in gone]
    m.nodes = {k: v for k, v in m.nodes.items() if k not in doomed}
    m.edges = [e for e in m.edges if e[0] not in doomed and e[2] not in doomed and e not in gone]
    delta = None
    if rng.random() < 0.8:
        new = {
            f"a{gen}.{j} {rng.choice(WORDS)}": (
                rng.choice(["person", "movie", f"type{gen}"]),
                text(rng),
            )
            for j in range(rng.randint(0, 6))
        }
        pool = list(m.nodes) + list(new)
        added = [
            (rng.choice(pool), rng.choice(["r1", "r2", f"rel{gen}"]), rng.choice(pool))
            for _ in range(rng.randint(0, 8) if pool else 0)
        ]
        sub = Model(type_names=[], relation_names=[])
        for name in dict.fromkeys([*new, *(x for h, _, t in added for x in (h, t))]):
            sub.nodes[name] = new.get(name) or m.nodes[name]
        sub.edges = added
        if sub.nodes:
            delta = sub.graph()
            # The index appends a new node's type and a new relation when first seen.
            for t, _ in new.values():
                if t not in m.type_names:
                    m.type_names.append(t)
            for r in delta.relation_names:
                if r not in m.relation_names:
                    m.relation_names.append(r)
        m.nodes.update(new)
        m.edges.extend(added)
    update_index(path, add=delta, remove=removal, explicit_nodes=True)


# -- comparing results ----------------------------------------------------------------


def rows(result: object) -> list[tuple[tuple[str, str, str], float, tuple[str, ...]]]:
    """Each hit as ((name, type, snippet), score, relations): what an observation shows
    of it, read from the updated graph's base and added chunks alike."""
    assert isinstance(result, SearchResult), result
    return [
        (
            (h.name, h.type, h.snippet),
            float(h.score),
            tuple(f"{r.type}:{r.direction}" for r in h.relations),
        )
        for h in result.hits
    ]


def same_ranking(got: list, want: list, what: str) -> None:
    """Equal results up to float32 summation order: the same scores (relative 1e-5),
    the same names, where near-equal scores may come in either order and, at the cut,
    a near tie may pick another of the tied nodes."""
    assert len(got) == len(want), (what, got, want)
    for (_, gs, _), (_, ws, _) in zip(got, want, strict=True):
        assert abs(gs - ws) <= 1e-5 * max(1.0, abs(ws)), (what, got, want)

    def blocks(rs: list) -> list[set]:
        out: list[list] = []
        for r in rs:
            if out and abs(out[-1][-1][1] - r[1]) <= 1e-5 * max(1.0, abs(r[1])):
                out[-1].append(r)
            else:
                out.append([r])
        return [{(n, rel) for n, _, rel in b} for b in out]

    gb, wb = blocks(got), blocks(want)
    assert len(gb) == len(wb), (what, got, want)
    for i, (g, w) in enumerate(zip(gb, wb, strict=True)):
        if i < len(gb) - 1:
            assert g == w, (what, got, want)
        else:  # the block at the cut: same size, members may be other tied nodes
            assert len(g) == len(w), (what, got, want)


def assert_same_answers(
    tools: GraphTools,
    ref: GraphTools,
    m: Model,
    rng: random.Random,
    *,
    nodes: list[str] | None = None,
    extra_queries: list[str] = (),  # type: ignore[assignment]
) -> None:
    """Every kind of query answered alike by the updated index and the rebuild (the
    neighborhoods of ``nodes``, default all)."""
    g, rg = tools.graph, ref.graph
    assert g.schema.to_dict() == rg.schema.to_dict()
    queries = [*WORDS, *(n.split()[0] for n in list(m.nodes)[:5]), "person", "movie"]
    queries += [" ".join(rng.sample(WORDS, 3)) for _ in range(10)] + list(extra_queries)
    for q in queries:
        for k in (1, 3, 10):
            got, want = tools.search_in_graph(q, k=k), ref.search_in_graph(q, k=k)
            if not isinstance(want, SearchResult):
                assert not isinstance(got, SearchResult), (q, got)
                assert got.code == want.code  # type: ignore[union-attr]
                continue
            same_ranking(rows(got), rows(want), f"search {q!r} k={k}")
    ids = {n: i for i, n in enumerate(g.names.to_pylist()) if not _removed(g, i)}
    ref_ids = {n: i for i, n in enumerate(rg.names.to_pylist())}
    assert set(ids) == set(ref_ids) == set(m.nodes)
    for name in m.nodes if nodes is None else nodes:
        for query, ntype, etype in (
            (None, None, None),
            (rng.choice(WORDS), None, None),
            (None, rng.choice(g.node_type_names), None),
            (rng.choice(WORDS), None, rng.choice(g.relation_names)),
        ):
            got = tools.search_in_neighborhood(ids[name], query, ntype, etype, k=100)
            want = ref.search_in_neighborhood(ref_ids[name], query, ntype, etype, k=100)
            assert got.total == want.total, (name, got, want)  # type: ignore[union-attr]
            same_ranking(rows(got), rows(want), f"neighbors of {name!r} q={query!r}")


def _removed(g: object, i: int) -> bool:
    is_removed = getattr(g, "is_removed", None)
    return bool(is_removed is not None and is_removed(i))
