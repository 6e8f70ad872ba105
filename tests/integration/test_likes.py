"""Likes and tweet counters against real moto, Redis and PostgreSQL.

Stream records are read from the tables' real streams and handed to the real counter consumer
and cleanup in this process, so each test decides when (and how often) they are delivered.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from warble import services
from warble.dal import counters as dal_counters
from warble.dal import likes as dal_likes
from warble.dal import tweets as dal_tweets
from warble.domain.counters.service import StreamCounterProcessor
from warble.domain.likes.ports import TweetMissing
from warble.errors import NotFound
from warble.settings import get_settings

from tests.support.counters import reconciler as reconciler_now
from tests.support.streams import StreamTap, all_records, decoded

pytestmark = pytest.mark.integration


@pytest.fixture
def world(accounts, moto) -> Iterator[Any]:
    settings = services.container().settings
    tap = StreamTap([settings.tweets_table, settings.likes_table, settings.graph_table])

    class World:
        tweets = services.tweets()
        likes = services.likes()

        def user(self, name: str) -> int:
            signed = accounts.signup(name, f"{name}@example.com", "password1", None, "")
            return int(signed.user["id"])

        def settle(self) -> None:
            """Deliver every pending record: cleanup first (it makes more), then counters,
            each batch twice."""
            while records := tap.drain():
                removed = [r for r in records if r["eventName"] == "REMOVE"]
                tweets_table = settings.tweets_table
                for record in removed:
                    if f":table/{tweets_table}/" in record["eventSourceARN"]:
                        self.tweets.purge(int(record["dynamodb"]["Keys"]["tweet_id"]["N"]))
                for _ in range(2):
                    counted = services.container().count_batch({"Records": records})
                    assert counted.failures == []

    yield World()


def _like_items(tweet_id: int) -> list[Any]:
    return list(dal_likes.LikeItem.query(f"T#{tweet_id}", consistent_read=True))


def test_like_and_unlike_are_idempotent_and_counted_once(world):
    alice, bob = world.user("alice"), world.user("bob")
    tweet = int(world.tweets.post(alice, "like me", None, []).id)

    assert world.likes.like(bob, tweet) is True
    assert world.likes.like(bob, tweet) is True  # idempotent: one like
    world.settle()
    seen_by_bob = world.tweets.get(bob, tweet)
    assert (seen_by_bob.like_count, seen_by_bob.liked_by_me) == (1, True)
    assert world.tweets.get(alice, tweet).liked_by_me is False
    assert len(_like_items(tweet)) == 1

    assert world.likes.unlike(bob, tweet) is False
    assert world.likes.unlike(bob, tweet) is False
    world.settle()
    seen_by_bob = world.tweets.get(bob, tweet)
    assert (seen_by_bob.like_count, seen_by_bob.liked_by_me) == (0, False)
    assert _like_items(tweet) == []


def test_unknown_and_deleted_tweets_cannot_be_liked_and_nothing_is_written(world):
    alice, bob = world.user("alice"), world.user("bob")
    with pytest.raises(NotFound):
        world.likes.like(bob, 123456789)
    tweet = int(world.tweets.post(alice, "short-lived", None, []).id)
    world.tweets.delete(alice, tweet)
    with pytest.raises(NotFound):
        world.likes.like(bob, tweet)
    with pytest.raises(NotFound):
        world.likes.unlike(bob, tweet)
    assert _like_items(tweet) == []
    assert world.likes.liked_tweets(bob, bob, 20, None).items == []


def test_a_like_racing_the_delete_leaves_nothing_behind(world):
    """The like's condition check on the tweet's id item, and the delete's cleanup: whichever
    lands first, no like item of the deleted tweet survives."""
    alice, bob = world.user("alice"), world.user("bob")
    tweet = int(world.tweets.post(alice, "going", None, []).id)
    stored = world.tweets.load_one(tweet)
    assert stored is not None
    dal_tweets.TweetStore().delete(stored)  # deleted under the like; the cache still has it
    with pytest.raises(TweetMissing):
        dal_likes.LikeStore().like(bob, tweet, alice, 42)
    with pytest.raises(NotFound):
        world.likes.like(bob, tweet)
    assert _like_items(tweet) == []


def test_flags_of_a_page_come_from_memory_without_a_table_read(world):
    alice, bob = world.user("alice"), world.user("bob")
    posted = [int(world.tweets.post(alice, f"t{i}", None, []).id) for i in range(30)]
    liked, retweeted = set(posted[::3]), set(posted[::5])
    for tweet in liked:
        world.likes.like(bob, tweet)
    for tweet in retweeted:
        world.tweets.retweet(bob, tweet)

    calls: list[int] = []
    client = world.tweets._likes._client
    client.meta.events.register(
        "before-call.dynamodb.BatchGetItem", lambda **kwargs: calls.append(1)
    )
    page = world.tweets.user_timeline(bob, alice, 30, None)
    # bob's recent likes and retweets are read into Redis (a Query each), and no tweet on the
    # page is older than the oldest of them: the flags need no BatchGetItem.
    assert calls == []
    assert {int(t.id) for t in page.items if t.liked_by_me} == liked
    assert {int(t.id) for t in page.items if t.retweeted_by_me} == retweeted

    # A retweet stands for its original: it carries the original's flags and counters.
    world.settle()
    mine = world.tweets.user_timeline(bob, bob, 30, None).items
    assert {int(t.retweet_of.id) for t in mine} == retweeted
    for rt in mine:
        assert rt.retweeted_by_me is True and rt.retweet_count == 1
        assert rt.liked_by_me == (int(rt.retweet_of.id) in liked)


def test_liked_tweets_and_likers_are_newest_first_with_cursors(world):
    alice, bob, carol = world.user("alice"), world.user("bob"), world.user("carol")
    posted = [int(world.tweets.post(alice, f"t{i}", None, []).id) for i in range(5)]
    order = [posted[3], posted[0], posted[4], posted[1]]
    for tweet in order:
        world.likes.like(bob, tweet)

    first = world.likes.liked_tweets(carol, bob, 3, None)
    rest = world.likes.liked_tweets(carol, bob, 3, first.next_cursor)
    assert [int(t.id) for t in first.items + rest.items] == order[::-1]
    assert rest.next_cursor is None

    world.likes.like(carol, posted[0])
    services.graph().follow(carol, bob)
    likers = world.likes.likers(carol, posted[0], 1, None)
    assert [u.id for u in likers.items] == [str(carol)]
    more = world.likes.likers(carol, posted[0], 5, likers.next_cursor)
    assert [u.id for u in more.items] == [str(bob)]
    assert more.items[0].relationship == "following"


@pytest.mark.redis  # also on the cluster
def test_counters_follow_likes_retweets_replies_and_a_deleted_tweet(world):
    alice, bob, carol = world.user("alice"), world.user("bob"), world.user("carol")
    tweet = int(world.tweets.post(alice, "popular", None, []).id)
    world.likes.like(bob, tweet)
    world.likes.like(carol, tweet)
    world.tweets.retweet(bob, tweet)
    world.tweets.post(carol, "a reply", tweet, [])
    world.settle()
    shown = world.tweets.get(alice, tweet)
    assert (shown.like_count, shown.retweet_count, shown.reply_count) == (2, 1, 1)
    counts = services.graph().counts([alice, bob, carol])
    assert [counts[u]["tweet_count"] for u in (alice, bob, carol)] == [1, 1, 1]

    # Deleted: its likes and retweets stop counting everywhere, and so does it.
    world.tweets.delete(alice, tweet)
    world.settle()
    counts = services.graph().counts([alice, bob, carol])
    assert [counts[u]["tweet_count"] for u in (alice, bob, carol)] == [0, 0, 1]
    assert _like_items(tweet) == []
    assert world.tweets.user_timeline(bob, bob, 20, None).items == []
    assert world.likes.liked_tweets(bob, bob, 20, None).items == []


def test_a_hot_tweet_takes_one_counter_write_per_transaction_not_per_like(world):
    alice = world.user("alice")
    tweet = int(world.tweets.post(alice, "viral", None, []).id)
    world.settle()
    fans = random.sample(range(1 << 40, 1 << 41), 150)
    for fan in fans:
        world.likes.like(fan, tweet)
    store = dal_counters.DynamoCounterStore(3600)
    processor = StreamCounterProcessor(store, services.container().counter_rules)
    settings = get_settings()
    tap_records = [r for r in all_records(settings.likes_table) if f"T#{tweet}" in str(r)]
    outcome = processor.process(decoded(tap_records))
    # 150 edge records (the list items count nothing): 99 claims + 1 counter update fill one
    # transaction, so two transactions, each ONE write of the tweet's counter.
    assert outcome.failures == [] and outcome.transactions == 2
    assert store.read([f"T#{tweet}"])[f"T#{tweet}"]["like_count"] == 150


def test_reconciliation_repairs_a_corrupted_counter_and_reports_it(world):
    alice, bob = world.user("alice"), world.user("bob")
    tweet = int(world.tweets.post(alice, "counted", None, []).id)
    world.likes.like(bob, tweet)
    world.settle()
    reconciler = reconciler_now()

    assert [r for r in reconciler.run() if r.key in (f"T#{tweet}", f"U#{alice}")] == []
    table = boto3.resource("dynamodb").Table(get_settings().counters_table)
    table.update_item(
        Key={"pk": f"T#{tweet}"},
        UpdateExpression="SET like_count = :v",
        ExpressionAttributeValues={":v": 7},
    )
    table.update_item(
        Key={"pk": f"U#{alice}"},
        UpdateExpression="SET tweet_count = :v",
        ExpressionAttributeValues={":v": 99},
    )
    assert world.tweets.get(bob, tweet).like_count in (1, 7)  # cached or not yet

    repairs = {(r.key, r.field): (r.was, r.now) for r in reconciler.run()}
    assert repairs[(f"T#{tweet}", "like_count")] == (7, 1)
    assert repairs[(f"U#{alice}", "tweet_count")] == (99, 1)
    assert world.tweets.get(bob, tweet).like_count == 1  # the cache was dropped too
    assert services.graph().counts([alice])[alice]["tweet_count"] == 1
    assert [r for r in reconciler.run() if r.key in (f"T#{tweet}", f"U#{alice}")] == []


def test_a_poison_record_is_reported_alone_and_holds_no_good_record_back(world):
    """An unreadable record in the middle of a batch: the others are applied once; only it is
    reported (Lambda restarts from it; the claims make the redelivered ones no-ops)."""
    alice = world.user("alice")
    tweet = int(world.tweets.post(alice, "counted around a poison", None, []).id)
    world.settle()
    settings = get_settings()
    tap = StreamTap([settings.likes_table])
    fans = random.sample(range(1 << 40, 1 << 41), 6)
    for fan in fans[:3]:
        world.likes.like(fan, tweet)
    boto3.client("dynamodb").put_item(
        TableName=settings.likes_table,
        Item={"pk": {"S": f"U#{fans[3]}"}, "sk": {"S": "T#not-a-tweet-id"}},
    )
    for fan in fans[4:]:
        world.likes.like(fan, tweet)
    records = [r for r in tap.drain() if r["dynamodb"]["Keys"]["sk"]["S"].startswith("T#")]
    poison = next(r for r in records if r["dynamodb"]["Keys"]["sk"]["S"] == "T#not-a-tweet-id")
    processor = StreamCounterProcessor(dal_counters.DynamoCounterStore(3600),
                                       services.container().counter_rules)  # fmt: skip
    for _ in range(2):  # the retry after the report: everything else is deduplicated
        outcome = processor.process(decoded(records))
        assert outcome.failures == [poison["dynamodb"]["SequenceNumber"]]
    counted = dal_counters.DynamoCounterStore(3600).read([f"T#{tweet}"])[f"T#{tweet}"]
    assert counted["like_count"] == 5
