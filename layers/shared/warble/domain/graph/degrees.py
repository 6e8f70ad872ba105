"""Second degrees on the friends graph, computed on demand (issue 46; docs/graph.md).

A user's second-degree set is the support of the count of paths to each user two friendships
away: ``common_friends(u)[w]`` is how many of u's friends are friends of w. A friendship that
ends takes one path from each pair it carried; w leaves u's set exactly when its last path goes
(and a friend or u itself is never in it). The set is computed when read, from the friends of
u's friends (each list cached), and kept in the cache until a friendship that can change it
begins or ends: that change names whose sets to drop (``whose_second_degree``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping

from warble.events import Followed, Unfollowed


def common_friends(
    user_id: int, friends: Collection[int], friends_of: Mapping[int, Iterable[int]]
) -> Counter[int]:
    """For each user two friendships from ``user_id`` (friends and the user left out): how many
    paths lead there, one per friend in common."""
    mine = set(friends)
    paths: Counter[int] = Counter()
    for friend in mine:
        paths.update(w for w in friends_of.get(friend, ()) if w != user_id and w not in mine)
    return paths


def second_degree(
    user_id: int, friends: Collection[int], friends_of: Mapping[int, Iterable[int]]
) -> frozenset[int]:
    """The second-degree set: every user with at least one path (``common_friends``)."""
    return frozenset(common_friends(user_id, friends, friends_of))


def friendships(changes: Iterable[Followed | Unfollowed]) -> set[tuple[int, int]]:
    """The friendships that began or ended among these follow changes (each pair once, low id
    first): a follow made when the other already followed, an unfollow of a friend."""
    return {(min(c.follower, c.followee), max(c.follower, c.followee)) for c in changes if c.friend}


def whose_second_degree(pair: tuple[int, int], friends_of: Mapping[int, Iterable[int]]) -> set[int]:
    """Whose second-degree sets a friendship between ``a`` and ``b`` adds a path to (or takes
    one from): both of theirs (each gains or loses the other's friends) and every friend of each
    (they gain or lose the other end). Nobody else's paths go through the pair."""
    a, b = pair
    return {a, b, *friends_of.get(a, ()), *friends_of.get(b, ())}
