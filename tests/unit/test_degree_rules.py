"""The second-degree rules (warble.domain.graph.degrees): paths counted per pair, a user leaving
the set exactly with its last path, and whose sets a friendship's change reaches."""

from __future__ import annotations

import pytest
from warble.domain.graph.degrees import (
    common_friends,
    friendships,
    second_degree,
    whose_second_degree,
)
from warble.events import Followed, Unfollowed

pytestmark = pytest.mark.unit


def friends_of(*pairs: tuple[int, int]) -> dict[int, set[int]]:
    """Each user's friends, from friendships (a, b)."""
    found: dict[int, set[int]] = {}
    for a, b in pairs:
        found.setdefault(a, set()).add(b)
        found.setdefault(b, set()).add(a)
    return found


def test_each_friend_in_common_is_one_path_and_the_user_and_friends_are_never_counted():
    # 1 - 2 - 4, 1 - 3 - 4, 2 - 3 (friends of each other), 3 - 5
    graph = friends_of((1, 2), (1, 3), (2, 4), (3, 4), (2, 3), (3, 5))
    paths = common_friends(1, graph[1], graph)
    assert paths == {4: 2, 5: 1}  # 2 and 3 are friends of 1: first degree, not second
    assert second_degree(1, graph[1], graph) == {4, 5}


def test_an_ended_friendship_removes_a_second_degree_only_with_its_last_path():
    # given: two paths from 1 to 4 (through 2 and through 3)
    pairs = [(1, 2), (1, 3), (2, 4), (3, 4)]
    graph = friends_of(*pairs)
    assert common_friends(1, graph[1], graph)[4] == 2
    # when: 2 - 4 ends, one path is left: 4 stays
    graph = friends_of(*[p for p in pairs if p != (2, 4)])
    assert common_friends(1, graph[1], graph)[4] == 1
    assert 4 in second_degree(1, graph[1], graph)
    # when: 3 - 4 ends too, none is left: 4 goes
    graph = friends_of((1, 2), (1, 3))
    assert 4 not in second_degree(1, graph.get(1, set()), graph)
    assert second_degree(1, graph[1], graph) == frozenset()


def test_a_new_friend_of_a_second_degree_is_first_degree_not_second():
    graph = friends_of((1, 2), (2, 3), (1, 3))
    assert second_degree(1, graph[1], graph) == frozenset()


def test_only_follows_that_begin_or_end_a_friendship_count_each_pair_once():
    changes = [
        Followed(1, 2),  # 2 did not follow 1: no friendship
        Followed(3, 4, friend=True),
        Unfollowed(4, 3, friend=True),  # the same pair again (a block ends both directions)
        Unfollowed(6, 5, friend=True),
        Unfollowed(7, 8),
    ]
    assert friendships(changes) == {(3, 4), (5, 6)}


def test_a_friendship_reaches_both_ends_and_every_friend_of_each():
    # 1 - 2 changes; 1's friends are 3 and 4, 2's is 5; 6 is two friendships from 1 only
    now = {1: {3, 4}, 2: {5}}
    assert whose_second_degree((1, 2), now) == {1, 2, 3, 4, 5}
    assert whose_second_degree((1, 2), {}) == {1, 2}
