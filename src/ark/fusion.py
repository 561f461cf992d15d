"""Fusing the answer lists of parallel agents (paper §3.2, table 3).

Pure functions over lists of node indices; each returns ``(node, votes)`` pairs in
final rank order, where ``votes`` is the number of agent lists containing the node.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

Ranking = list[tuple[int, int]]


def _votes(lists: Sequence[Sequence[int]]) -> dict[int, int]:
    votes: dict[int, int] = {}
    for answer in lists:
        for node in dict.fromkeys(answer):  # a list votes once per node
            votes[node] = votes.get(node, 0) + 1
    return votes


def fuse_vote(lists: Sequence[Sequence[int]], top_k: int = 20) -> Ranking:
    """Rank by the number of lists containing a node; ties by the earliest position at
    which the node appears in any list, then by first appearance in the concatenation
    of the lists in agent order."""
    votes = _votes(lists)
    best_position: dict[int, int] = {}
    first_seen: dict[int, int] = {}
    offset = 0
    for answer in lists:
        for position, node in enumerate(dict.fromkeys(answer)):
            best_position[node] = min(best_position.get(node, position), position)
            first_seen.setdefault(node, offset + position)
        offset += len(answer)
    order = sorted(votes, key=lambda n: (-votes[n], best_position[n], first_seen[n]))
    return [(n, votes[n]) for n in order[:top_k]]


def fuse_ordering(lists: Sequence[Sequence[int]], top_k: int = 20) -> Ranking:
    """Concatenate the lists in agent order and keep each node's first appearance."""
    votes = _votes(lists)
    order = list(dict.fromkeys(node for answer in lists for node in answer))
    return [(n, votes[n]) for n in order[:top_k]]


def fuse_random(
    lists: Sequence[Sequence[int]], top_k: int = 20, rng: random.Random | None = None
) -> Ranking:
    """Shuffle the union of the lists (the ablation that ignores rank and votes)."""
    votes = _votes(lists)
    union = sorted(votes)
    (rng or random.Random(0)).shuffle(union)
    return [(n, votes[n]) for n in union[:top_k]]


def latest_first(batches: Sequence[Sequence[int]]) -> list[int]:
    """One agent's answer with the nodes of its last ``add_to_answer`` call first.

    ``batches`` are the nodes each successful add call appended, in call order. A small
    model that adds the bridge (or the entity it started from) and then goes one more
    hop adds the real answer last; read latest-first, its list puts the last hop on top.
    """
    out: list[int] = []
    for batch in reversed(batches):
        out += [n for n in batch if n not in out]
    return out


def fuse_vote_late(
    lists: Sequence[Sequence[int]],
    top_k: int = 20,
    batches: Sequence[Sequence[Sequence[int]]] | None = None,
) -> Ranking:
    """Vote over the lists read latest-first (:func:`latest_first`): the number of lists
    containing a node, ties by the earliest position in any list so read. Label-free;
    ``batches[i]`` are agent ``i``'s add calls (without them: plain vote)."""
    if batches is None:
        return fuse_vote(lists, top_k)
    if len(batches) != len(lists):
        raise ValueError(
            f"fuse_vote_late got {len(lists)} lists but {len(batches)} agents' batches; "
            "pass the batches of the same agents as the lists"
        )
    reordered = [latest_first(b) if b else list(a) for a, b in zip(lists, batches, strict=True)]
    return fuse_vote(reordered, top_k)


FUSIONS: dict[str, Callable[[Sequence[Sequence[int]], int], Ranking]] = {
    "vote": fuse_vote,
    "ordering": fuse_ordering,
    "random": fuse_random,
    "late": fuse_vote_late,
}
