"""The chain search: its weights are one object, and a schema of a hundred relations
reads as fast as one of ten (a beam, not every path of three hops)."""

import time

import numpy as np
import pytest

from ark.index import build_index
from ark.reading import DEFAULT_WEIGHTS, FEATURES, ChainWeights, read_chain, read_question

WORDS = ("place", "birth", "death", "cause", "spouse", "child", "parent", "team", "club")

FILMS = """\
Forrest Gump|directed_by|Robert Zemeckis
Forrest Gump|starred_actors|Tom Hanks
Cast Away|directed_by|Robert Zemeckis
Cast Away|starred_actors|Tom Hanks
Big|starred_actors|Tom Hanks
Big|directed_by|Penny Marshall
"""


@pytest.fixture(scope="module")
def movie_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("films")
    (root / "kb.txt").write_text(FILMS, encoding="utf-8")
    return build_index(root / "kb.txt", root / "idx")


def test_weights_are_one_object_with_a_field_per_feature():
    assert ChainWeights() == DEFAULT_WEIGHTS
    cheaper = DEFAULT_WEIGHTS.replace(hops=-0.05)
    assert cheaper.hops == -0.05 and cheaper.silent == DEFAULT_WEIGHTS.silent
    with pytest.raises(ValueError, match="no chain weight named hopp"):
        DEFAULT_WEIGHTS.replace(hopp=1.0)
    assert len(DEFAULT_WEIGHTS.vector()) == len(FEATURES)
    # The thresholds are no feature weights.
    assert DEFAULT_WEIGHTS.replace(names=0.9).vector().tolist() == DEFAULT_WEIGHTS.vector().tolist()


@pytest.mark.slow
def test_the_reading_uses_the_weights_it_is_given(movie_index):
    question = "who directed the films that Tom Hanks starred in"
    reading = read_question(movie_index, question)
    two = read_chain(movie_index, reading, question)
    assert [r for r, _ in two.steps] == ["starred_actors", "directed_by"]
    # Hops dearer than any word is worth: the one-hop path wins.
    one = read_chain(movie_index, reading, question, DEFAULT_WEIGHTS.replace(hops=-5.0))
    assert len(one.steps) == 1
    # The chain's score is its features weighted.
    assert two.facts is not None
    assert two.score == pytest.approx(DEFAULT_WEIGHTS.score(two.facts))


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    """A graph of 100 relations named the way dumps name them, each node with 12
    edges among 500 nodes: every relation follows every other."""
    rng = np.random.default_rng(0)
    names: list[str] = []
    while len(names) < 100:
        a, b = rng.choice(WORDS, size=2, replace=False)
        name = f"{a}_of_{b}_{len(names)}"
        names.append(name)
    lines = [
        f"node_{n}\t{names[r]}\tnode_{int(rng.integers(0, 500))}"
        for n in range(500)
        for r in rng.integers(0, 100, size=12)
    ]
    root = tmp_path_factory.mktemp("wide")
    (root / "kb.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return build_index(root / "kb.tsv", root / "idx")


@pytest.mark.slow
def test_a_hundred_relations_read_in_well_under_a_second(wide):
    index = wide
    question = "what is the place of death of the spouse of node_7 ?"
    read_chain(index, read_question(index, question, encoder="off"), question)  # tables
    started = time.perf_counter()
    for n in range(5):
        q = f"what is the cause of birth of the team of node_{n} ?"
        read_chain(index, read_question(index, q, encoder="off"), q)
    # Every path of three hops (the search before the beam) took minutes here.
    assert (time.perf_counter() - started) / 5 < 1.0


SHIPS = """\
ShipA|namesake|PersonB
PersonB|type|Saint
PersonB|seat_type|Cathedral
PersonB|parts_type|Relics
CityC|subdivision_type|Commune
"""


def test_a_word_that_is_a_whole_label_extends_the_chain(tmp_path):
    # "type" is one relation's whole label and three others' half: read as naming
    # that one, the chain goes on from the namesake to its type.
    (tmp_path / "kb.txt").write_text(SHIPS, encoding="utf-8")
    index = build_index(tmp_path / "kb.txt", tmp_path / "idx")
    question = "what is the type of the namesake of ShipA"
    chain = read_chain(index, read_question(index, question, "off"), question, encoder="off")
    assert chain is not None
    assert chain.steps == (("namesake", "out"), ("type", "out"))
