"""Relationships and the viewer's flags from memory, against real Redis (single node and
cluster), moto and PostgreSQL.

Each answer read from the membership hashes is compared with the tables' own answer
(``GraphStore.statuses``, ``LikeStore.viewer_flags``) after every follow, unfollow, like,
unlike, retweet and unretweet, after the hashes are dropped, and after the streams deliver
their copies of the changes again, twice and in reverse order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from redis.cluster import RedisCluster
from warble import keys, services
from warble.dal.graph import DynamoGraphStore
from warble.dal.likes import LikeStore
from warble.dal.memberships import MembershipSets
from warble.dal.redis import ReadBatch
from warble.domain.accounts.answers import RelatedUser
from warble.domain.graph.service import status_of
from warble.entrypoints.streams import timeline
from warble.services import Container

from tests.support.streams import StreamTap, decoded

pytestmark = [pytest.mark.integration, pytest.mark.redis]

PASSWORD = "password1"


def _drop_memory(redis: Any) -> None:
    """A Redis flush: everything in memory is gone (the tables are not)."""
    if isinstance(redis, RedisCluster):
        redis.flushall(target_nodes=RedisCluster.PRIMARIES)
    else:
        redis.flushdb()


class World:
    def __init__(self) -> None:
        settings = services.container().settings
        self.tap = StreamTap([settings.graph_table, settings.likes_table, settings.tweets_table])
        self.graph_store = DynamoGraphStore(settings)
        self.like_store = LikeStore(settings)

    def user(self, name: str) -> int:
        signed = services.accounts().signup(name, f"{name}@example.com", PASSWORD, None, "")
        return int(signed.user["id"])

    def relationship(self, viewer: int, other: int) -> str:
        seen = services.graph().user(viewer, other)
        assert isinstance(seen, RelatedUser)
        return seen.relationship

    def truth(self, viewer: int, others: list[int]) -> list[tuple[int, str]]:
        found = self.graph_store.statuses(viewer, others)
        return [(uid, status_of(*found[uid])) for uid in others]

    def flags(self, viewer: int, tweet_ids: list[int]) -> dict[int, tuple[bool, bool]]:
        batch = ReadBatch(services.container().redis)
        later = services.tweets().flags.later(batch, viewer, tweet_ids)
        batch.run()
        liked, retweeted = later()
        return {t: (t in liked, t in retweeted) for t in tweet_ids}

    def flags_truth(self, viewer: int, tweet_ids: list[int]) -> dict[int, tuple[bool, bool]]:
        liked, retweeted = self.like_store.viewer_flags(viewer, tweet_ids)
        return {t: (t in liked, t in retweeted) for t in tweet_ids}

    def redeliver(self) -> None:
        """The streams' copies of every change so far, through the FanoutConsumerFunction's
        subscribers: twice, then again in reverse order (a late duplicate)."""
        events = [event for change in decoded(self.tap.drain()) for event in change.events]
        for event in events + events + events[::-1]:
            timeline.deliver(event)


@pytest.fixture
def world(accounts, moto) -> Iterator[World]:
    yield World()


def test_relationships_stay_exact_through_follows_unfollows_and_a_flush(world, redis):
    alice, bob, carol = world.user("alice"), world.user("bob"), world.user("carol")
    graph = services.graph()
    steps = [
        (graph.follow, alice, bob, "following"),
        (graph.follow, bob, alice, "friends"),
        (graph.unfollow, alice, bob, "followed_by"),
        (graph.follow, alice, bob, "friends"),
        (graph.unfollow, bob, alice, "following"),
    ]
    for action, who, whom, expected in steps:
        action(who, whom)
        assert world.relationship(alice, bob) == expected
        assert graph.relationships(alice, [bob, carol]) == world.truth(alice, [bob, carol])
        assert graph.relationships(bob, [alice]) == world.truth(bob, [alice])
    world.redeliver()
    assert world.relationship(alice, bob) == "following"
    _drop_memory(redis)
    assert world.relationship(alice, bob) == "following"
    assert world.relationship(bob, alice) == "followed_by"
    assert graph.relationships(carol, [alice, bob]) == world.truth(carol, [alice, bob])


def test_a_warm_relationship_read_makes_no_dynamodb_call(world):
    alice, bob = world.user("alice"), world.user("bob")
    graph = services.graph()
    graph.follow(alice, bob)
    world.relationship(alice, bob)  # rebuilds both following sets, caches bob's counts
    world.relationship(bob, alice)  # caches alice's counts
    store = graph._store  # the container's graph store counts its calls
    before = store.reads
    assert world.relationship(alice, bob) == "following"
    assert world.relationship(bob, alice) == "followed_by"
    assert store.reads == before


def test_relationships_of_a_long_list_read_cold_sets_from_the_table(world, redis):
    viewer = world.user("viewer")
    people = [world.user(f"p{i}") for i in range(8)]
    graph = services.graph()
    for uid in people[::2]:
        graph.follow(viewer, uid)
    for uid in people[:3]:
        graph.follow(uid, viewer)
    _drop_memory(redis)
    # Cold: the viewer's set is rebuilt; the others are asked of the viewer's edges.
    assert graph.relationships(viewer, people) == world.truth(viewer, people)
    rebuilt = [
        uid for uid in [viewer, *people] if redis.exists(keys.memberships("following", uid).value)
    ]
    assert rebuilt == [viewer]
    # One user's read (a profile) rebuilds that user's set too.
    assert world.relationship(viewer, people[0]) == "friends"
    assert redis.exists(keys.memberships("following", people[0]).value)
    assert graph.relationships(viewer, people) == world.truth(viewer, people)


def test_a_rebuild_that_read_before_a_follow_cannot_store_what_it_read(world, redis):
    alice, bob = world.user("alice"), world.user("bob")
    graph = services.graph()
    sets = MembershipSets(services.container().redis, "following", 3600)

    def load_then_follow() -> tuple[dict[int, int], int]:
        read = world.graph_store.following_seqs(alice)  # before the follow: empty
        graph.follow(alice, bob)  # commits, and voids the rebuild's lease
        return read, 0

    held = sets.rebuild(alice, load_then_follow)
    assert bob not in held.present  # the rebuild answers what it read...
    assert world.relationship(alice, bob) == "following"  # ...but did not store it


def test_viewer_flags_stay_exact_through_likes_retweets_and_a_flush(world, redis):
    author, viewer = world.user("author"), world.user("viewer")
    tweets, likes = services.tweets(), services.likes()
    ids = [int(tweets.post(author, f"tweet {i}", None, []).id) for i in range(4)]

    def check() -> None:
        assert world.flags(viewer, ids) == world.flags_truth(viewer, ids)

    check()
    likes.like(viewer, ids[0])
    assert world.flags(viewer, ids)[ids[0]] == (True, False)
    check()
    retweet = tweets.retweet(viewer, ids[1])[0]
    assert world.flags(viewer, ids)[ids[1]] == (False, True)
    likes.like(viewer, int(retweet.id))  # a like of a retweet likes its original
    tweets.retweet(viewer, int(retweet.id))  # and a retweet of it is the same retweet
    assert world.flags(viewer, ids)[ids[1]] == (True, True)
    check()
    likes.unlike(viewer, ids[0])
    tweets.unretweet(viewer, ids[1])
    likes.like(viewer, ids[0])  # liked again: a newer like
    check()
    world.redeliver()
    check()
    _drop_memory(redis)
    check()
    likes.unlike(viewer, ids[0])
    check()
    # The page the viewer reads carries the same flags.
    page = {t.id: (t.liked_by_me, t.retweeted_by_me) for t in tweets_of(author, viewer)}
    assert page == {str(t): flags for t, flags in world.flags_truth(viewer, ids).items()}


def tweets_of(author: int, viewer: int) -> list[dict[str, Any]]:
    return services.tweets().user_timeline(viewer, author, 20, None).items


def test_a_change_the_write_path_lost_comes_back_from_the_stream(world):
    author, viewer = world.user("author"), world.user("viewer")
    tweet = int(services.tweets().post(author, "hello", None, []).id)
    assert world.flags(viewer, [tweet])[tweet] == (False, False)  # the hash is loaded
    # The like is committed but its container dies before telling Redis.
    world.like_store.like(viewer, tweet, author, services.ids().next_id())
    assert world.flags(viewer, [tweet])[tweet] == (False, False)
    world.redeliver()
    assert world.flags(viewer, [tweet])[tweet] == (True, False)


def test_likes_older_than_the_recent_ones_are_read_from_the_table(world, redis):
    settings = dataclasses.replace(services.container().settings, recent_actions=3)
    services.use(Container(settings))
    author, viewer = world.user("author"), world.user("viewer")
    tweets, likes = services.tweets(), services.likes()
    ids = [int(tweets.post(author, f"t{i}", None, []).id) for i in range(6)]
    for tid in ids[:5]:  # likes in tweet order: the oldest tweets have the oldest likes
        likes.like(viewer, tid)
    _drop_memory(redis)
    assert world.flags(viewer, ids) == world.flags_truth(viewer, ids)
    held = redis.hgetall(keys.memberships("liked", viewer).value)
    assert len(held) == 1 + 3  # the floor and the three newest likes
    assert world.flags(viewer, ids) == world.flags_truth(viewer, ids)
