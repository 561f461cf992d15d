"""Fusion rules on the paper's definitions (§3.2, table 3)."""

import random

from ark.fusion import fuse_ordering, fuse_random, fuse_vote


def test_vote_ranks_by_number_of_lists_containing_the_node():
    lists = [[1, 2, 3], [3, 4], [5, 3, 4]]
    # 3: 3 votes; 4: 2 votes; 1, 2, 5: 1 vote each.
    assert [n for n, _ in fuse_vote(lists)][:2] == [3, 4]
    assert dict(fuse_vote(lists)) == {3: 3, 4: 2, 1: 1, 2: 1, 5: 1}


def test_vote_breaks_ties_by_earliest_position_in_any_list():
    # 7 is first in agent 2's list, 1 is first in agent 1's list; 2 is second.
    lists = [[1, 2], [7, 8], [9]]
    ranked = [n for n, _ in fuse_vote(lists)]
    # position 0: 1, 7, 9 (ordered by first appearance in the concatenation), then 2, 8.
    assert ranked == [1, 7, 9, 2, 8]


def test_vote_earliest_position_beats_agent_order():
    lists = [[5, 6, 7], [7]]  # 7 has 2 votes; among 1-vote nodes 5 (pos 0) before 6 (pos 1)
    assert [n for n, _ in fuse_vote(lists)] == [7, 5, 6]


def test_vote_counts_a_list_once_even_with_duplicates():
    assert dict(fuse_vote([[1, 1, 1], [2]])) == {1: 1, 2: 1}


def test_vote_keeps_top_k():
    lists = [list(range(30))]
    assert len(fuse_vote(lists, top_k=20)) == 20
    assert [n for n, _ in fuse_vote(lists, top_k=3)] == [0, 1, 2]


def test_ordering_keeps_first_appearance_in_agent_order():
    lists = [[4, 2], [2, 9, 4], [1]]
    assert [n for n, _ in fuse_ordering(lists)] == [4, 2, 9, 1]
    assert dict(fuse_ordering(lists)) == {4: 2, 2: 2, 9: 1, 1: 1}


def test_random_is_a_seeded_shuffle_of_the_union():
    lists = [[1, 2, 3], [3, 4, 5, 6, 7, 8]]
    a = [n for n, _ in fuse_random(lists, 20, random.Random(1))]
    b = [n for n, _ in fuse_random(lists, 20, random.Random(1))]
    assert a == b
    assert sorted(a) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert a != [n for n, _ in fuse_vote(lists)]


def test_empty_lists():
    assert fuse_vote([]) == []
    assert fuse_vote([[], []]) == []
    assert fuse_ordering([[]]) == []
    assert fuse_random([[]]) == []


def test_late_vote_refuses_batches_of_other_agents():
    import pytest

    from ark.fusion import fuse_vote_late

    assert fuse_vote_late([[1, 2], [2]], batches=[[[1], [2]], [[2]]]) == [(2, 2), (1, 1)]
    with pytest.raises(ValueError, match="2 lists but 3 agents' batches"):
        fuse_vote_late([[1], [2]], batches=[[[1]], [], [[2]]])
