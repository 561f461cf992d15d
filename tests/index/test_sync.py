"""``sync``: an index brought in step with its changed source answers as a rebuild from
the source; an unchanged source commits nothing; a sync killed at any step leaves the
index as it was, and running it again completes it."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from _helpers import REPO
from _postgres import fresh_database
from _updates_model import (
    WORDS,
    Model,
    assert_same_answers,
    random_model,
    scratch,
    text,
    write_model,
)
from ark.index import (
    build_index,
    live_edges,
    open_index,
    sync_index,
    update_index,
    verify_index,
)
from ark.probes import plan_difference
from ark.tools import GraphTools


def _mutate(rng: random.Random, m: Model, gen: int) -> None:
    """Remove, change and add nodes and edges of the model, as a database's users do."""
    names = list(m.nodes)
    for name in rng.sample(names, min(len(names), rng.randint(0, 3))):
        del m.nodes[name]
    for name in rng.sample(list(m.nodes), min(len(m.nodes), rng.randint(0, 3))):
        kind, old = m.nodes[name]
        if rng.random() < 0.5:
            m.nodes[name] = (kind, old + " " + rng.choice(WORDS))  # text changed
        else:
            m.nodes[name] = (rng.choice(["person", "movie", "tag", f"t{gen}"]), old)
    for j in range(rng.randint(0, 4)):
        m.nodes[f"s{gen}.{j} {rng.choice(WORDS)}"] = (rng.choice(["person", "movie"]), text(rng))
    m.edges = [e for e in m.edges if e[0] in m.nodes and e[2] in m.nodes]
    for e in rng.sample(m.edges, min(len(m.edges), rng.randint(0, 3))):
        m.edges.remove(e)
    pool = list(m.nodes)
    for _ in range(rng.randint(0, 6)):
        edge = (rng.choice(pool), rng.choice(["r1", "r2", f"rel{gen}"]), rng.choice(pool))
        m.edges.extend([edge] * rng.randint(1, 2))  # a repeated edge is two edges
    if m.edges and rng.random() < 0.3:
        m.edges.append(rng.choice(m.edges))


def _in_index_order(m: Model, index_dir: Path) -> None:
    """Order the model's type and relation names as the index appended them (a
    rebuild names them in first-seen order; the answers are the same)."""
    g = open_index(index_dir).graph
    m.type_names = [*g.node_type_names, *(t for t in m.type_names if t not in g.node_type_names)]
    m.relation_names = [
        *g.relation_names,
        *(r for r in m.relation_names if r not in g.relation_names),
    ]


@pytest.mark.parametrize("seed", range(12))
def test_the_difference_turns_the_index_into_its_source(tmp_path, seed):
    rng = random.Random(seed)
    m = random_model(rng, 12)
    path = tmp_path / "idx"
    write_model(m, path)
    for gen in range(1, 4):
        _mutate(rng, m, gen)
        report = update_index(path, change=lambda plan: plan_difference(plan, m.graph()))
        _in_index_order(m, path)
        assert_same_answers(GraphTools(open_index(path)), scratch(m), m, rng)
    verify_index(path)
    again = update_index(path, change=lambda plan: plan_difference(plan, m.graph()))
    assert again["unchanged"] and again["generation"] == report["generation"]


def test_a_changed_text_replaces_the_node_and_keeps_its_edges(tmp_path):
    m = Model(type_names=["person", "movie"], relation_names=["acted_in"])
    m.nodes = {"Ann": ("person", "born 1970"), "Heat": ("movie", ""), "Bo": ("person", "")}
    m.edges = [("Ann", "acted_in", "Heat"), ("Bo", "acted_in", "Heat")]
    write_model(m, tmp_path / "idx")
    m.nodes["Ann"] = ("person", "born 1971")
    report = update_index(tmp_path / "idx", change=lambda p: plan_difference(p, m.graph()))
    assert report["removed_nodes"] == 1 and report["added_nodes"] == 1
    assert report["added_edges"] == 1  # Ann's one edge, to her new node; Bo's stays
    tools = GraphTools(open_index(tmp_path / "idx"))
    assert "1971" in tools.search_in_graph("Ann", k=1).hits[0].snippet
    assert_same_answers(tools, scratch(m), m, random.Random(0))


# -- from a PostgreSQL database ----------------------------------------------------------


def _db(pg: str, name: str) -> str:
    psycopg = pytest.importorskip("psycopg")
    uri = fresh_database(pg, name, properties="jsonb")
    with psycopg.connect(uri, autocommit=True) as conn:
        for i in range(30):
            conn.execute(
                "INSERT INTO nodes VALUES (%s, %s, %s, %s)",
                (i, f"Movie {i}", "movie", json.dumps({"year": 1990 + i})),
            )
            conn.execute(
                "INSERT INTO nodes VALUES (%s, %s, %s, NULL)", (100 + i, f"Person {i}", "person")
            )
            conn.execute("INSERT INTO edges VALUES (%s, %s, 'directed_by')", (i, 100 + (i % 7)))
            conn.execute("INSERT INTO edges VALUES (%s, %s, 'starred')", (i, 100 + (i * 3) % 30))
    return uri


def _change(uri: str) -> None:
    """Inserts, updates and deletes, as a database's users make them."""
    psycopg = pytest.importorskip("psycopg")
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("INSERT INTO nodes VALUES (500, 'Heat', 'movie', '{\"year\": 1995}')")
        conn.execute("INSERT INTO nodes VALUES (501, 'Val Kilmer', 'actor', NULL)")
        conn.execute("INSERT INTO edges VALUES (500, 501, 'starred'), (500, 103, 'directed_by')")
        conn.execute("UPDATE nodes SET properties = '{\"year\": 2031}' WHERE id = 4")
        conn.execute("UPDATE nodes SET name = 'Person Six' WHERE id = 106")
        conn.execute('DELETE FROM edges WHERE "from" = 9 OR "to" = 109')
        conn.execute("DELETE FROM nodes WHERE id IN (9, 109)")
        conn.execute("DELETE FROM edges WHERE \"from\" = 1 AND type = 'starred'")


def _answers(index_dir: Path) -> dict[str, list]:
    tools = GraphTools(open_index(index_dir))
    out = {}
    for q in ("movie 4", "2031", "person six", "heat kilmer", "movie 9", "person 9", "1995"):
        hits = tools.search_in_graph(q, k=100)  # every hit: no tie cut at k
        out[q] = sorted(
            (h.name, h.type, h.snippet, round(h.score, 4)) for h in getattr(hits, "hits", ())
        )
    g = tools.graph
    live = [i for i in range(g.n_nodes) if not getattr(g, "is_removed", lambda _: False)(i)]
    out["nodes"] = sorted((g.names[i], g.type_name(i), g.text(i)) for i in live)
    src, rel, dst = live_edges(g)
    out["edges"] = sorted(
        (g.names[s], g.relation_names[r], g.names[d])
        for s, r, d in zip(src.tolist(), rel.tolist(), dst.tolist(), strict=True)
    )
    return out


def test_sync_after_inserts_updates_and_deletes_equals_a_rebuild(pg, tmp_path):
    uri = _db(pg, "sync")
    build_index(uri, tmp_path / "idx")
    _change(uri)
    report = sync_index(tmp_path / "idx", uri)
    assert report["added_nodes"] == 4 and report["removed_nodes"] == 4  # 2 new, 2 changed
    assert report["changed_nodes"] == 1  # Movie 4's text; Person 6 has a new name
    build_index(uri, tmp_path / "rebuilt")
    assert _answers(tmp_path / "idx") == _answers(tmp_path / "rebuilt")
    verify_index(tmp_path / "idx")
    again = sync_index(tmp_path / "idx", uri)
    assert again["unchanged"] and again["generation"] == report["generation"]


CHILD = """
import os, sys
from ark.probes import index_update as upd
from ark.index import sync_index
root, uri, at = sys.argv[1:4]
upd.CHECKPOINT = lambda step: os._exit(9) if step == at else None
sync_index(root, uri)
"""


@pytest.mark.parametrize("step", ["locked", "planned", "written", "renamed"])
def test_a_killed_sync_leaves_the_index_as_it_was_and_a_rerun_completes_it(pg, tmp_path, step):
    uri = _db(pg, f"kill_{step}")
    build_index(uri, tmp_path / "idx")
    before = _answers(tmp_path / "idx")
    _change(uri)
    run = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "idx"), uri, step],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 9, run.stderr
    assert _answers(tmp_path / "idx") == before
    verify_index(tmp_path / "idx")
    sync_index(tmp_path / "idx", uri)
    build_index(uri, tmp_path / "rebuilt")
    assert _answers(tmp_path / "idx") == _answers(tmp_path / "rebuilt")


def test_a_removed_passage_is_never_searched_or_listed_again(tmp_path):
    """A document graph's global search scores its passages apart (every passage by
    its postings): a passage an update removed must not be among them."""
    from ark.graph import passage_ids

    lines = [
        {"id": "p1", "title": "Engine", "text": "Babbage designed the Analytical Engine."},
        {"id": "p2", "title": "Notes", "text": "Lovelace wrote notes on the engine."},
    ]
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    build_index(tmp_path / "p.jsonl", tmp_path / "idx")
    (tmp_path / "gone.txt").write_text("Engine\n")
    from ark.index import remove_from_index

    remove_from_index(tmp_path / "idx", nodes_file=tmp_path / "gone.txt")
    index = open_index(tmp_path / "idx")
    assert [index.graph.names[i] for i in passage_ids(index.graph)] == ["Notes"]
    hits = GraphTools(index).search_in_graph("analytical engine", k=10).hits
    assert "Engine" not in [h.name for h in hits if h.type == "passage"]
