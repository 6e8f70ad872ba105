"""The unit tier's World is the production wiring on in-memory stores: the same builders
(``warble.services.<feature>``) through one seam (``MemoryStores``), so what follows a change of
counters in a unit test is what follows it in production (issue 43: the hand-wired World
dropped the cached counts through its own path and never copied followers_count to search)."""

from __future__ import annotations

from tests.unit.fakes import World


def test_the_world_is_a_container_on_memory_stores_only(world: World):
    # given: a follow, a post, a like, a read of each feature the world holds
    alice, bob = world.user(), world.user()
    world.follow(bob, alice)
    tweet = int(world.tweets.post(alice, "hello", None, []).id)
    world.likes.like(bob, tweet)
    world.timelines.home(bob, 20, None)
    # then: every service is the container's, and no production client was ever built
    c = world.container
    assert (world.graph, world.tweets, world.likes, world.timelines, world.media) == (
        c.graph, c.tweets, c.likes, c.timelines, c.media,
    )  # fmt: skip
    assert not {"redis", "database", "connections", "pusher"} & set(vars(c))


def test_a_counted_follow_drops_the_cached_counts_and_copies_followers_to_search(world: World):
    # given: alice's counts read (and cached) before bob follows her
    alice, bob = world.user(), world.user()
    assert world.graph.counts([alice])[alice]["followers_count"] == 0
    # when: the follow, and the counter consumer's batch
    world.follow(bob, alice)
    # then: the next read sees it (the listener dropped the cached copy) and search has it
    assert world.graph.counts([alice])[alice]["followers_count"] == 1
    assert world.people.followers[alice] == 1
