"""The Reconciler on in-memory stores: drift found and repaired, a change in flight left alone,
deleted tweets' counters left alone."""

from __future__ import annotations

import pytest
from warble.domain.counters.reconcile import Repair
from warble.events import Followed, Liked, TweetPosted

from tests.unit.fakes import World

pytestmark = pytest.mark.unit


def populated(world: World) -> tuple[int, int, int]:
    """alice (2 followers, 1 tweet), bob's reply to it, carol's like of it; every counter
    applied by the counter consumer. Returns (alice, bob, alice's tweet)."""
    alice, bob, carol = world.user(), world.user(), world.user()
    world.follow(bob, alice)
    world.follow(carol, alice)
    original = int(world.tweets.post(alice, "hi", None, []).id)
    reply = int(world.tweets.post(bob, "hello", original, []).id)
    world.likes.like(carol, original)
    world.deliver(
        TweetPosted(original, alice),
        TweetPosted(reply, bob, reply_to=original, reply_to_author=alice),
        Liked(carol, original, alice),
    )
    return alice, bob, original


def test_nothing_to_repair_when_the_counters_are_exact():
    world = World()
    populated(world)
    assert world.reconciler.drift() == {}
    assert world.reconciler.run() == [] and world.sleeps == []


def test_drift_is_found_and_repaired_after_the_settle_wait():
    # given: a manual edit, and a like whose stream record was lost
    world = World(settle_seconds=30)
    alice, bob, original = populated(world)
    world.counters.counters[f"U#{alice}"]["followers_count"] = 7
    world.likes.like(bob, original)  # never counted
    # when
    repairs = world.reconciler.run()
    # then
    assert world.sleeps == [30]
    assert sorted(repairs, key=lambda r: r.key) == sorted(
        [
            Repair(f"U#{alice}", "followers_count", 7, 2),
            Repair(f"T#{original}", "like_count", 1, 2),
        ],
        key=lambda r: r.key,
    )
    assert world.counters.current(f"U#{alice}", "followers_count") == 2
    assert world.counters.current(f"T#{original}", "like_count") == 2
    assert world.repaired == [{f"U#{alice}", f"T#{original}"}]
    assert world.reconciler.drift() == {}


def test_a_counter_never_written_is_repaired_from_absent():
    world = World()
    alice, bob = world.user(), world.user()
    world.graph.follow(bob, alice)  # the follow's record never reached the consumer
    assert world.reconciler.run() == [Repair(f"U#{alice}", "followers_count", 0, 1)]
    assert world.counters.current(f"U#{alice}", "followers_count") == 1


def test_a_change_in_flight_is_not_repaired():
    # given: a follow is written, its record not yet counted when the reconciler looks
    world = World()
    alice, _, _ = populated(world)
    dave = world.user()
    world.graph.follow(dave, alice)
    # while the reconciler waits, the consumer applies the record
    world.on_sleep = lambda: world.deliver(Followed(dave, alice))
    # when
    repairs = world.reconciler.run()
    # then: the difference closed by itself, nothing overwritten
    assert repairs == [] and world.sleeps == [world.settle_seconds]
    assert world.counters.current(f"U#{alice}", "followers_count") == 3


def test_a_difference_that_moves_during_the_wait_is_left_for_the_next_run():
    # given: a lost follow; during the wait another follow is written, its record in flight
    world = World()
    alice, _, _ = populated(world)
    lost, late = world.user(), world.user()
    world.graph.follow(lost, alice)
    world.on_sleep = lambda: world.graph.follow(late, alice)
    # when
    first = world.reconciler.run()
    world.on_sleep = None
    world.deliver(Followed(late, alice))  # the record in flight arrives
    second = world.reconciler.run()
    # then: the first run saw the difference move (1 -> 2) and left it; the next one, seeing
    # the same difference before and after its wait, repairs the lost follow only
    assert first == []
    assert second == [Repair(f"U#{alice}", "followers_count", 3, 4)]


def test_a_repair_racing_a_consumer_write_does_not_overwrite_it():
    # given: drift, and the consumer writes between the reconciler's read and its repair
    world = World()
    alice, _, _ = populated(world)
    world.counters.counters[f"U#{alice}"]["followers_count"] = 9
    real_recount = world.reconciler.recount

    def recount_then_consumer_writes(key: str, field: str) -> int:
        true = real_recount(key, field)
        world.counters.counters[key][field] += 1
        return true

    world.reconciler.recount = recount_then_consumer_writes  # type: ignore[method-assign]
    # when
    repairs = world.reconciler.run()
    # then: the conditional write refused: the consumer's delta stands
    assert repairs == [] and world.counters.current(f"U#{alice}", "followers_count") == 10


def test_counters_of_deleted_tweets_are_left_alone():
    world = World()
    alice, _, original = populated(world)
    world.tweets.delete(alice, original)  # its like and reply are being cleaned up meanwhile
    drift = world.reconciler.drift()
    assert all(key != f"T#{original}" for key, _ in drift)
    assert drift == {(f"U#{alice}", "tweet_count"): -1}  # the author's count is not left alone
