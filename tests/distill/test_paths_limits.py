"""The path sampler on graphs past its old packing (``code * 4096 + type``)."""

import random
from pathlib import Path

import numpy as np

from ark.graph import Graph
from ark.index import Index
from ark.probes import PathSampler


def test_steps_read_types_past_4096_exactly():
    n = 5000
    node_type = np.arange(n)
    node_type[[1, 4097]] = [4097, 1]  # node 0's neighbor has type 4097 = 1 * 4096 + 1
    graph = Graph.from_edges(
        names=[f"n{i}" for i in range(n)],
        node_type=node_type,
        node_type_names=[f"t{i}" for i in range(n)],
        texts=[""] * n,
        src=np.array([0, 2]),
        dst=np.array([1, 3]),
        rel=np.array([0, 1]),
        relation_names=["r0", "r1"],
    )
    index = Index(Path("unused"), graph, None, {})  # type: ignore[arg-type]
    sampler = PathSampler(index, random.Random(0))
    # (adjacency code of r0 out, neighbor type 4097); the old packing read (1, 1): r0
    # inward to a t1 node, a step the schema does not have, so none was offered.
    assert sampler._steps(0) == [(0, 4097)]
    assert sampler._steps(1) == [(1, 0)]  # r0 inward, back to the t0 hub
