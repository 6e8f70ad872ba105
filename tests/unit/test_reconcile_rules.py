"""The Reconciler on in-memory stores: drift found and repaired, a change in flight left alone,
deleted tweets' counters left alone; only the counters touched since the last run and a page of
the rolling sweep are looked at, paced, within a time budget (issue 46)."""

from __future__ import annotations

import pytest
from warble.domain.counters.ports import TransactionRetry
from warble.domain.counters.reconcile import Pace, Reconciler, Repair, sampled
from warble.events import Change, Followed, Liked, TweetPosted

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
    # given: a follow whose record the counter consumer failed on every attempt (it went to the
    # on-failure queue): its counter was marked before the consumer tried to apply it
    world = World()
    alice, bob = world.user(), world.user()
    world.graph.follow(bob, alice)
    world.counters.failures = [TransactionRetry() for _ in range(4)]
    change = Change("ev-lost", "1", (Followed(follower=bob, followee=alice),))
    assert world.counter_processor().process([change]).failures == ["1"]
    assert world.counters.current(f"U#{alice}", "followers_count") is None
    # when
    repairs = world.reconciler.run()
    # then
    assert repairs == [Repair(f"U#{alice}", "followers_count", 0, 1)]
    assert world.counters.current(f"U#{alice}", "followers_count") == 1


def test_at_scale_a_sample_of_the_touched_counters_is_marked_and_every_failed_one():
    # given: a profile marking none of what is applied (share 0)
    world = World(mark_share=0.0, reconcile_sweep=0)
    alice, bob, _ = populated(world)
    assert world.marks.marked == set()
    # when: a batch fails every attempt
    world.graph.follow(alice, bob)
    world.counters.failures = [TransactionRetry() for _ in range(4)]
    change = Change("ev-failed", "9", (Followed(follower=alice, followee=bob),))
    assert world.counter_processor().process([change]).failures == ["9"]
    # then: its counters are marked all the same, and repaired by the next run
    assert world.marks.marked == {f"U#{bob}"}
    assert world.reconciler.run() == [Repair(f"U#{bob}", "followers_count", 0, 1)]


def test_the_sample_takes_each_counter_with_the_share():
    touched = {f"U#{n}" for n in range(10)}
    draws = iter([0.05, 0.5, 0.09, 0.99] + [0.2] * 6)
    assert sampled(touched, 1.0) == touched
    assert len(sampled(touched, 0.1, lambda: next(draws))) == 2
    assert sampled(touched, 0.0) == set()


def test_only_touched_counters_are_recounted_and_each_mark_once():
    world = World(reconcile_sweep=0)
    alice, bob, _ = populated(world)
    assert world.marks.marked == {f"U#{alice}", f"U#{bob}", f"T#{populated_tweet(world)}"}
    assert world.reconciler.run() == [] and world.reconciler.checked == 3
    assert world.marks.marked == set()
    world.counters.counters[f"U#{alice}"]["followers_count"] = 7  # drift nobody touches
    assert world.reconciler.run() == [] and world.reconciler.checked == 0


def test_drift_nobody_touches_is_found_by_the_rolling_sweep_a_page_a_run():
    # given: three counters, checked one a run by the sweep, and an edit of the last one
    world = World(reconcile_sweep=1)
    populated(world)
    world.reconciler.run()  # the marks of the batch: nothing to repair
    last = sorted(world.counters.counters)[-1]
    field = "followers_count" if last.startswith("U#") else "like_count"
    truth = world.counters.current(last, field) or 0
    world.counters.counters[last][field] = truth + 5
    # when: runs until the sweep reaches it
    found = [world.reconciler.run() for _ in range(len(world.counters.counters))]
    # then: found once, by a later run than the first (a page of one counter a run)
    assert [r for run in found for r in run] == [Repair(last, field, truth + 5, truth)]
    assert found[0] == []


def test_the_pause_after_a_page_keeps_the_run_to_its_duty():
    assert Pace(pause_seconds=0.05, duty=1.0).pause_after(2.0) == 0.05
    assert Pace(pause_seconds=0.05, duty=0.25).pause_after(2.0) == 6.0
    assert Pace(pause_seconds=0.05, duty=0.25).pause_after(0.001) == 0.05


def test_a_run_stops_at_its_budget_and_leaves_the_rest_marked():
    # given: 30 touched counters, a page of 10 a pause, and a clock where each pause takes 1 s
    world = World()
    users = [world.user() for _ in range(30)]
    world.marks.mark({f"U#{u}" for u in users})
    now = [0.0]
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        now[0] += 1.0

    reconciler = Reconciler(
        world.graph_store, world.tweet_store, world.like_store, world.counters, world.marks,
        settle_seconds=0, pace=Pace(page=10, pause_seconds=0.2, budget_seconds=1.5, sweep=0),
        sleep=pause, clock=lambda: now[0],
    )  # fmt: skip
    # when
    reconciler.run()
    # then: two pages checked (the budget ran out during the second pause), ten left
    assert reconciler.checked == 20 and pauses == [0.2, 0.2]
    assert len(world.marks.marked) == 10


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
    calls: list[tuple[str, str]] = []
    target = (f"U#{alice}", "followers_count")

    def recount_then_consumer_writes(key: str, field: str) -> int:
        true = real_recount(key, field)
        calls.append((key, field))
        if (key, field) == target and calls.count(target) == 2:
            world.counters.counters[key][field] += 1  # during the re-check, after its read
        return true

    world.reconciler.recount = recount_then_consumer_writes  # type: ignore[method-assign]
    # when
    repairs = world.reconciler.run()
    # then: the conditional write refused: the consumer's delta stands, and the counter is
    # marked for the next run
    assert repairs == [] and world.counters.current(f"U#{alice}", "followers_count") == 10
    assert f"U#{alice}" in world.marks.marked


def populated_tweet(world: World) -> int:
    return next(int(k[2:]) for k in world.counters.counters if k.startswith("T#"))


def test_counters_of_deleted_tweets_are_left_alone():
    world = World()
    alice, _, original = populated(world)
    world.tweets.delete(alice, original)  # its like and reply are being cleaned up meanwhile
    drift = world.reconciler.drift()
    assert all(key != f"T#{original}" for key, _ in drift)
    assert drift == {(f"U#{alice}", "tweet_count"): -1}  # the author's count is not left alone
