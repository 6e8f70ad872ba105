"""Notifications from the real stream records, through the real consumer handler: every record
delivered twice and out of order across items; unread counts, read positions, a Redis flush,
system notifications and the hot-recipient cap."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

import pytest
from warble import keys, services
from warble.dal import redis as redis_dal
from warble.domain.timelines.service import entry
from warble.errors import Forbidden
from warble.events import TweetPosted
from warble.settings import get_settings

from tests.integration.test_sample_events import Context, _load_function
from tests.integration.test_stream_batches import counted
from tests.support.streams import StreamTap

pytestmark = pytest.mark.integration


@pytest.fixture
def tap(accounts, moto):
    s = get_settings()
    return StreamTap([s.graph_table, s.tweets_table, s.likes_table])


@pytest.fixture
def consumer():
    return _load_function("reactions").handler


def deliver_twice_shuffled(consumer, records: list[dict], seed: int = 7) -> None:
    """Each record twice, in an order shuffled across items, in batches of 5."""
    twice = records + records
    random.Random(seed).shuffle(twice)
    for start in range(0, len(twice), 5):
        answer = consumer({"Records": twice[start : start + 5]}, Context())
        assert answer == {"batchItemFailures": []}


def configure(monkeypatch, **env: str) -> None:
    """Settings for this test: a fresh container reads them."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    services.reset()


def user(accounts, name: str) -> int:
    return int(accounts.signup(name, f"{name}@example.com", "password1", None, "").user["id"])


def kinds(page) -> Counter:
    return Counter((n.type, n.actor.username if n.actor else None) for n in page.items)


def test_every_notification_once_and_counts_exact(tap, consumer, accounts, redis):
    alice, bob, carol = (user(accounts, n) for n in ("alice", "bob", "carol"))
    graph, tweets, likes = services.graph(), services.tweets(), services.likes()
    notifications = services.notifications()
    assert notifications.counts(alice).total == 0  # warm: built before anything happened

    graph.follow(bob, alice)
    graph.follow(carol, alice)
    original = int(tweets.post(alice, "hello @alice", None, []).id)  # self-mention: nothing
    likes.like(bob, original)
    likes.like(alice, original)  # own like: nothing
    reply = int(tweets.post(carol, "hi @Alice and @BOB and @nobody", original, []).id)
    tweets.retweet(bob, original)
    likes.unlike(bob, original)
    likes.like(bob, original)  # a re-like notifies nobody again
    records = tap.drain()
    assert len(records) > 10

    deliver_twice_shuffled(consumer, records)

    page = notifications.page(alice, [], 100, None)
    assert kinds(page) == Counter(
        {("follow", "bob"): 1, ("follow", "carol"): 1, ("like", "bob"): 1, ("reply", "carol"): 1,
         ("retweet", "bob"): 1}
    )  # fmt: skip
    ids = [int(n.id) for n in page.items]
    assert ids == sorted(ids, reverse=True) and not any(n.read for n in page.items)
    replied = next(n for n in page.items if n.type == "reply")
    assert replied.tweet_id == str(reply)  # the reply; no second "mention" for alice
    bob_page = notifications.page(bob, [], 100, None)
    assert kinds(bob_page) == Counter({("mention", "carol"): 1})
    counts = notifications.counts(alice)
    assert {k: getattr(counts, k) for k in ("follow", "like", "reply", "mention", "retweet")} == {
        "follow": 2, "like": 1, "reply": 1, "mention": 0, "retweet": 1,
    }  # fmt: skip
    assert counts.total == 5 + counts.home and counts.message == 0

    # Delivered a third time, after being read: nothing comes back unread.
    notifications.mark_read(alice, ["follow", "like"])
    deliver_twice_shuffled(consumer, records, seed=11)
    counts = notifications.counts(alice)
    assert (counts.follow, counts.like, counts.reply) == (0, 0, 1)
    read = {n.type: n.read for n in notifications.page(alice, [], 100, None).items}
    assert read == {"follow": True, "like": True, "reply": False, "retweet": False}

    # Filtered pages with a cursor.
    first = notifications.page(alice, ["follow", "reply"], 2, None)
    assert len(first.items) == 2 and first.next_cursor
    rest = notifications.page(alice, ["follow", "reply"], 2, first.next_cursor)
    both = first.items + rest.items
    assert sorted(n.type for n in both) == ["follow", "follow", "reply"]
    assert [n.id for n in both] == [
        n.id for n in page.items if n.type != "retweet" and n.type != "like"
    ]

    # A Redis flush: counts and read flags come back from the table and the durable positions.
    redis.flushdb()
    counts = notifications.counts(alice)
    assert (counts.follow, counts.like, counts.reply, counts.retweet) == (0, 0, 1, 1)
    assert notifications.counts(bob).mention == 1
    deliver_twice_shuffled(consumer, records, seed=13)  # and redelivery after it adds nothing
    assert notifications.counts(alice).retweet == 1

    # A deleted tweet: the notification stays, pointing at nothing.
    tweets.delete(carol, reply)
    replied = next(n for n in notifications.page(alice, ["reply"], 10, None).items)
    assert replied.tweet_id is None and replied.tweet_deleted is True


def test_unread_counts_take_two_redis_round_trips_when_warm(accounts, moto, redis):
    me = user(accounts, "reader")
    authors = [user(accounts, f"author{i}") for i in range(5)]
    for author in authors:
        services.graph().follow(me, author)
    notifications = services.notifications()
    notifications.counts(me)  # warms everything up
    redis.hset(keys.dm_unread(me), mapping={"built": 0, "c1": 2, "c2": 3})

    calls = []
    client = services.container().redis
    original, original_send = client.pipeline, redis_dal.send_pipelined

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    def sent(*args, **kwargs):  # a ReadBatch's round trip on a single node
        calls.append(1)
        return original_send(*args, **kwargs)

    client.pipeline = counted  # type: ignore[method-assign]
    redis_dal.send_pipelined = sent
    try:
        counts = notifications.counts(me)
    finally:
        client.pipeline = original  # type: ignore[method-assign]
        redis_dal.send_pipelined = original_send
    assert len(calls) == 2
    assert counts.message == 5 and counts.total == 5


def test_home_counts_followees_posts_since_read_celebrities_included(
    accounts, moto, redis, monkeypatch, tap
):
    # More than one follower makes a celebrity: never fanned out, merged at read time.
    configure(monkeypatch, CELEBRITY_FOLLOWERS="1")
    me, friend, celebrity, other = (
        user(services.accounts(), n) for n in ("me", "friend", "celeb", "other")
    )
    graph = services.graph()
    graph.follow(me, friend)
    graph.follow(me, celebrity)
    graph.follow(other, celebrity)
    # followers_count comes from the graph stream, through the counter consumer.
    services.container().count_batch({"Records": tap.drain()})
    notifications, timelines = services.notifications(), services.timelines()
    tweets = services.tweets()
    timelines.rebuild(me)
    assert notifications.counts(me).home == 0
    posted = [int(tweets.post(a, "news", None, []).id) for a in (friend, celebrity, me)]
    timelines.tweet_created(friend, posted[0])
    timelines.tweet_created(celebrity, posted[1])
    timelines.tweet_created(me, posted[2])
    redis.delete(keys.home_celebrities(me))
    assert notifications.counts(me).home == 2  # not my own
    notifications.mark_read(me, ["home"])
    assert notifications.counts(me).home == 0


def test_the_home_count_is_pushed_to_the_fan_outs_followers_but_not_a_big_accounts(
    accounts, moto, redis, tap, monkeypatch
):
    # given an author with one follower and one with three (issue 34: the home count is pushed
    # after a fan-out; a big account must not mean a push to each follower)
    configure(monkeypatch, CELEBRITY_FOLLOWERS="2")
    small, big, a, b, c = (user(services.accounts(), n) for n in ("small", "big", "fa", "fb", "fc"))
    graph = services.graph()
    graph.follow(a, small)
    for follower in (a, b, c):
        graph.follow(follower, big)
    services.container().count_batch({"Records": tap.drain()})
    timelines = services.timelines()
    posts = [
        TweetPosted(int(services.tweets().post(u, "hi", None, []).id), u) for u in (small, big)
    ]
    # then the fan-out reports the followers it reached, a celebrity's nobody (merged on read)
    writes = services.container().write_batch()
    assert timelines.apply_stream([*posts, posts[0]], writes) == {small: [a]}
    writes.run()
    # and each follower with a connection gets one frame for the batch, but an author with
    # more followers than home_push_most is not announced
    registry = services.container().connections
    for follower in (a, b, c):
        registry.add(follower, f"conn-{follower}", 0, 3600)
    notifications = services.notifications()
    with counted() as calls:
        notifications.home_posted({small: [a], big: [a, b, c]})
    assert calls["posts"] == 3
    monkeypatch.setattr(
        notifications, "_policy", dataclasses.replace(notifications._policy, home_push_most=2)
    )
    with counted() as calls:
        notifications.home_posted({small: [a], big: [a, b, c]})
    assert calls["posts"] == 1


def test_system_notifications_one_write_and_positions_start_at_signup(
    accounts, moto, redis, monkeypatch
):
    configure(monkeypatch, ADMIN_USERNAMES="someone, Warble_Admin")
    early = user(services.accounts(), "early")
    admin, _ = services.accounts().create_admin("warble_admin", "ops@example.com", "password1")
    notifications = services.notifications()
    with pytest.raises(Forbidden):
        notifications.post_system(early, "t", "b")
    first = notifications.post_system(admin, "Hello", "Welcome to Warble")
    late = user(services.accounts(), "late")  # signed up after the first
    notifications.post_system(admin, "Again", "A second one")
    assert notifications.counts(early).system == 2
    assert notifications.counts(late).system == 1
    listed = notifications.page(late, ["system"], 10, None).items
    assert [n.title for n in listed] == ["Again"] and listed[0].actor is None
    notifications.mark_read(early, ["system"])
    assert notifications.counts(early).system == 0
    assert first.type == "system" and first.read is False
    redis.flushdb()  # the shared list and the positions come back from the table
    assert notifications.counts(early).system == 0
    assert notifications.counts(late).system == 1


def test_a_hot_recipient_is_capped_per_window(tap, consumer, accounts, redis, monkeypatch):
    # A window of an hour: the test never straddles two.
    configure(monkeypatch, NOTIFICATION_RECIPIENT_CAP="5", NOTIFICATION_CAP_WINDOW_SECONDS="3600")
    celebrity = user(services.accounts(), "celebrity")
    fans = [user(services.accounts(), f"fan{i}") for i in range(8)]
    tweet = int(services.tweets().post(celebrity, "viral", None, []).id)
    tap.drain()
    for fan in fans:
        services.likes().like(fan, tweet)
    deliver_twice_shuffled(consumer, tap.drain())
    stored = services.notifications().page(celebrity, ["like"], 100, None).items
    assert len(stored) == 5  # the rest of this window's were dropped
    assert services.notifications().counts(celebrity).like == 5


def test_a_followee_crossing_the_threshold_drops_the_followers_celebrity_lists(
    accounts, moto, redis, tap, monkeypatch
):
    # given an author with two followers at a threshold of 2 (fanned out), whose first tweet
    # marks it; the reader has read his home (his celebrity list is kept a day)
    configure(monkeypatch, CELEBRITY_FOLLOWERS="2")
    author, reader, other = (user(services.accounts(), n) for n in ("crosser", "rd", "ot"))
    graph = services.graph()
    for follower in (reader, other):
        graph.follow(follower, author)
    services.container().count_batch({"Records": tap.drain()})
    timelines = services.timelines()
    timelines.home(reader, 20, None)
    assert redis.get(keys.home_celebrities(reader)) == ""
    assert 3600 < redis.ttl(keys.home_celebrities(reader)) <= 86_400

    def post(text: str) -> int:
        tweet_id = int(services.tweets().post(author, text, None, []).id)
        writes = services.container().write_batch()
        timelines.apply_stream([TweetPosted(tweet_id, author)], writes)
        writes.run()
        return tweet_id

    first = post("first")
    assert redis.get(keys.celebrity_mark(author)) == "0"
    assert redis.get(keys.home_celebrities(reader)) == ""  # first mark: nothing crossed
    # when a third follower makes it a celebrity and it tweets
    graph.follow(user(services.accounts(), "third"), author)
    services.container().count_batch({"Records": tap.drain()})
    second = post("second")
    # then the reader's list is gone, the tweet not pushed, and his next read merges it
    assert redis.get(keys.celebrity_mark(author)) == "1"
    assert redis.exists(keys.home_celebrities(reader)) == 0
    assert redis.zscore(keys.home_timeline(reader), entry(author, second)) is None
    assert [int(t.id) for t in timelines.home(reader, 20, None).items] == [second, first]
    assert redis.get(keys.home_celebrities(reader)) == str(author)


def test_a_notification_whose_id_runs_behind_the_recipients_signup_still_counts(
    tap, consumer, accounts, redis
):
    """Ids of two containers need not agree: after Redis lost the worker leases, a claim starts
    its ids up to a second ahead (docs/reliability.md), so a signup's id can be above that of a
    notification made just after it elsewhere. Unread counts must not take it for read."""
    from warble.dal.accounts import UserRepository
    from warble.ids import compose, decompose

    alice = user(accounts, "alice")
    ahead = compose(decompose(services.ids().next_id())[0] + 10_000, 1, 0)
    UserRepository(services.container().database).insert(
        ahead, "ahead", "ahead@example.com", "x", "ahead"
    )
    services.graph().follow(alice, ahead)
    deliver_twice_shuffled(consumer, tap.drain())
    notifications = services.notifications()
    assert notifications.counts(ahead).follow == 1
    redis.flushdb()  # rebuilt from the table above the durable positions: still unread
    assert notifications.counts(ahead).follow == 1
    notifications.mark_read(ahead, ["follow"])
    assert notifications.counts(ahead).follow == 0
