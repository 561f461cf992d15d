"""Property: after random sequences of adds and removes, every query an updated index
answers equals the answer of an index built from scratch on the final graph (and so
does the compacted index, index for index)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from _updates_model import (
    assert_same_answers,
    random_model,
    random_update,
    scratch,
    write_model,
)
from ark.index import compact_index, open_index, read_remap, verify_index
from ark.tools import GraphTools

N_SEQUENCES = 200


@pytest.mark.parametrize("seed", range(N_SEQUENCES))
def test_random_updates_answer_as_a_rebuild(tmp_path, seed):
    rng = random.Random(seed)
    model = random_model(rng, rng.randint(3, 25))
    path = tmp_path / "idx"
    write_model(model, path)
    for gen in range(1, rng.randint(2, 5)):
        random_update(rng, model, path, gen)
    index = open_index(path)
    ref = scratch(model)
    assert_same_answers(GraphTools(index), ref, model, rng)
    if seed % 10 == 0:  # compact some: then node indices equal the rebuild's too
        assert verify_index(path)["ok"]
        old_names = index.graph.names.to_pylist()
        compact_index(path)
        remap = read_remap(path)
        compacted = open_index(path)
        assert compacted.graph.names.to_pylist() == ref.graph.names.to_pylist()
        assert [compacted.graph.name(int(remap[i])) for i in np.flatnonzero(remap >= 0)] == [
            old_names[i] for i in np.flatnonzero(remap >= 0)
        ]
        tools = GraphTools(compacted)
        for q in ("alpha beta", "tom", "river stone city", "person"):
            got, want = tools.search_in_graph(q, k=10), ref.search_in_graph(q, k=10)
            assert got.to_dict() == want.to_dict()
        for node in range(min(5, compacted.graph.n_nodes)):
            got = tools.search_in_neighborhood(node, "alpha", k=50)
            assert got.to_dict() == ref.search_in_neighborhood(node, "alpha", k=50).to_dict()
        assert verify_index(path)["ok"]
