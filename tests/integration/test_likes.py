"""Likes and tweet counters against real moto, Redis and PostgreSQL.

Stream records are read from the tables' real streams and handed to the real counter consumer
and cleanup reader in this process, so each test decides when (and how often) they are
delivered.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from warble import services
from warble.dal import counters as dal_counters
from warble.dal import likes as dal_likes
from warble.dal import tweets as dal_tweets
from warble.dal.erasure import DynamoErasure
from warble.domain.counters.service import StreamCounterProcessor
from warble.domain.likes.ports import TweetMissing
from warble.entrypoints import streams
from warble.errors import NotFound
from warble.ids import compose
from warble.settings import get_settings

from tests.support.counters import mark as mark_counters
from tests.support.counters import reconciler as reconciler_now
from tests.support.streams import StreamTap, all_records, decoded

pytestmark = pytest.mark.integration


@pytest.fixture
def world(accounts, moto) -> Iterator[Any]:
    settings = services.container().settings
    tap = StreamTap([settings.tweets_table, settings.likes_table, settings.graph_table])
    cleanup = streams.Reader("Cleanup", streams.cleanup)  # the reactions reader's cleanup

    class World:
        tweets = services.tweets()
        likes = services.likes()
        store = dal_likes.LikeStore()

        def user(self, name: str) -> int:
            signed = accounts.signup(name, f"{name}@example.com", "password1", None, "")
            return int(signed.user["id"])

        def settle(self) -> None:
            """Deliver every pending record: cleanup first (it makes more), then counters,
            each batch twice."""
            while records := tap.drain():
                for _ in range(2):
                    assert cleanup.process(records)["batchItemFailures"] == []
                for _ in range(2):
                    counted = services.container().count_batch({"Records": records})
                    assert counted.failures == []

        def legacy_like(self, user_id: int, tweet_id: int, author_id: int, shards: int = 0) -> int:
            """A like as stored before the likers were sharded (its likers item under the
            tweet's own partition, no ``shards`` on its edge), or spread over an earlier count
            of ``shards``; its seq."""
            seq = services.container().ids.next_id()
            likers = dal_likes.likers_pk(tweet_id, seq, shards)
            for item in (
                dal_likes.LikeItem(f"U#{user_id}", f"T#{tweet_id}", seq=seq, author_id=author_id,
                                   shards=shards or None),
                dal_likes.LikeItem(f"U#{user_id}", f"LT#{seq:019d}", tid=tweet_id,
                                   author_id=author_id),
                dal_likes.LikeItem(likers, f"LU#{seq:019d}", uid=user_id),
            ):  # fmt: skip
                item.save()
            return seq

    yield World()


def _like_items(tweet_id: int) -> list[Any]:
    """The tweet's likers items wherever they are: its own partition and any ``T#<tweet>#...``
    (a scan, so an item in a partition the store does not read is found too)."""
    item = dal_likes.LikeItem
    own = (item.pk == f"T#{tweet_id}") | item.pk.startswith(f"T#{tweet_id}#")
    return list(item.scan(own, consistent_read=True))


def _user_items(user_id: int) -> list[Any]:
    return list(dal_likes.LikeItem.query(f"U#{user_id}", consistent_read=True))


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


def test_a_like_read_after_the_delete_is_refused_and_writes_nothing(world):
    """The like's read of the tweet's id item (strongly consistent) sees a delete that the
    cache has not seen yet."""
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


def test_a_like_committed_after_the_delete_and_its_purge_is_removed_by_the_cleanup(world):
    """The like reads the tweet, then the tweet is deleted and its deletion's cleanup runs
    (nothing to purge yet), then the like commits: the likes stream's cleanup finds its tweet
    gone and unlikes it, so no like outlives its tweet."""
    alice, bob = world.user("alice"), world.user("bob")
    tweet = int(world.tweets.post(alice, "going", None, []).id)
    world.settle()
    store = dal_likes.LikeStore()
    deleted: list[int] = []

    def delete_and_purge_first(**_: Any) -> None:
        if not deleted:  # the like's own transaction, once: the delete and its purge land first
            deleted.append(tweet)
            world.tweets.delete(alice, tweet)
            world.settle()

    store._connection.client.meta.events.register(
        "before-call.dynamodb.TransactWriteItems", delete_and_purge_first
    )
    assert store.like(bob, tweet, alice, services.container().ids.next_id()) is True
    assert deleted == [tweet] and world.tweets.load_one(tweet) is None
    assert len(_like_items(tweet)) == 1 and len(_user_items(bob)) == 2  # it did outlive it

    world.settle()  # the like's stream records, twice: the second finds nothing to do
    assert _like_items(tweet) == [] and _user_items(bob) == []
    counted = dal_counters.DynamoCounterStore(3600).read([f"T#{tweet}"])[f"T#{tweet}"]
    assert counted.get("like_count", 0) == 0  # counted on its insert, uncounted on its removal


def test_a_tweets_likers_spread_evenly_over_its_shards_not_on_one_partition(world):
    """Write units per like per partition: every like writes its likers item in a transaction
    (2 units) to one of eight partitions, and nothing of it to the tweet's own partition or to
    its id item; at 100M's viral 1,015 likes/s at the event the busiest partition must stay
    under 500."""
    alice = world.user("alice")
    tweet = int(world.tweets.post(alice, "viral", None, []).id)
    index = boto3.client("dynamodb")
    index_item = {"TableName": get_settings().tweet_index_table, "Key": {"pk": {"S": f"T#{tweet}"}}}
    before = index.get_item(**index_item)["Item"]
    fans = random.sample(range(1 << 40, 1 << 41), 400)
    for fan in fans:
        assert world.likes.like(fan, tweet) is True

    per_partition = Counter(item.pk for item in _like_items(tweet))
    assert set(per_partition) == {f"T#{tweet}#{k}" for k in range(8)}  # not T#<tweet> itself
    assert sum(per_partition.values()) == len(fans)
    busiest = max(per_partition.values()) / len(fans)  # the busiest partition's share
    assert busiest * 1015 * 2 < 500, per_partition
    assert index.get_item(**index_item)["Item"] == before  # read, never written by a like
    edges = [i for fan in fans[:20] for i in _user_items(fan) if i.sk.startswith("T#")]
    assert {int(edge.shards) for edge in edges} == {8}  # each edge says where its likers item is

    # A Snowflake's low bits count the ids of one millisecond and are mostly 0 at a container's
    # pace: the shard is a hash of the whole seq, so one-like-a-millisecond seqs spread too.
    quiet = Counter(
        dal_likes.likers_pk(tweet, compose(1_800_000_000_000 + ms, 7, 0), 8) for ms in range(4000)
    )
    assert len(quiet) == 8 and max(quiet.values()) / 4000 < 0.15


def test_likers_pages_merge_the_shards_and_the_old_partition_newest_first(world):
    """Likes stored before the shards (the tweet's own partition), spread over the earlier 4
    shards and over today's, interleaved in time: the pages are newest first across all of
    them, with the same cursors, and the count, an unlike and the deleted tweet's cleanup cover
    them all."""
    alice, bob, carol = world.user("alice"), world.user("bob"), world.user("carol")
    tweet = int(world.tweets.post(alice, "liked over a migration", None, []).id)
    fans = random.sample(range(1 << 40, 1 << 41), 60)
    seqs: dict[int, int] = {}
    for number, fan in enumerate(fans):
        if number % 3 == 0:
            seqs[fan] = world.legacy_like(fan, tweet, alice)
        elif number % 3 == 1:
            seqs[fan] = world.legacy_like(fan, tweet, alice, shards=4)
        else:
            world.likes.like(fan, tweet)
            seqs[fan] = int(world.store.edge(fan, tweet).seq)  # type: ignore[union-attr]
    newest_first = sorted(((seq, fan) for fan, seq in seqs.items()), reverse=True)
    assert Counter(i.pk == f"T#{tweet}" for i in _like_items(tweet)) == {True: 20, False: 40}
    assert (
        {i.pk for i in _like_items(tweet)} - {f"T#{tweet}#{k}" for k in range(4)} - {f"T#{tweet}"}
    )  # today's shards above the earlier four hold some

    pages, cursor = [], None
    while True:
        page = world.store.likers_page(tweet, cursor, 7)
        pages.append(page)
        if len(page) < 7:
            break
        cursor = page[-1][0]  # the service's cursor: the last seq shown
    assert [row for page in pages for row in page] == newest_first
    assert [len(page) for page in pages] == [7] * 8 + [4]
    assert world.store.count_likers(tweet) == 60

    # Through the service, with users a viewer sees: an old like and a new one, then another
    # old one, newest first, with the opaque cursor.
    world.legacy_like(bob, tweet, alice)
    world.likes.like(carol, tweet)
    first = world.likes.likers(alice, tweet, 1, None)
    rest = world.likes.likers(alice, tweet, 1, first.next_cursor)
    assert [u.id for u in first.items + rest.items] == [str(carol), str(bob)]
    world.settle()
    assert world.tweets.get(alice, tweet).like_count == 62

    # An unlike finds an old like's item where it is, and a new one's in its shard.
    assert world.likes.unlike(bob, tweet) is False and world.likes.unlike(carol, tweet) is False
    assert len(_like_items(tweet)) == 60 and world.store.count_likers(tweet) == 60
    # ... and a like spread over the earlier four shards in its shard of four.
    assert world.likes.unlike(fans[1], tweet) is False
    assert len(_like_items(tweet)) == 59 and world.store.count_likers(tweet) == 59
    assert _user_items(bob) == [] and _user_items(carol) == []

    # The deleted tweet's cleanup takes every partition's items and every liker's.
    world.tweets.delete(alice, tweet)
    world.settle()
    assert _like_items(tweet) == [] and world.store.count_likers(tweet) == 0
    assert all(_user_items(fan) == [] for fan in fans)


def test_an_erased_account_takes_its_likes_from_every_partition(world):
    """Account deletion: the likes of the account (old and new: the edge says where its likers
    item is) and the likers of its tweets (every partition, for their removal marks)."""
    alice, bob = world.user("alice"), world.user("bob")
    old, new = (int(world.tweets.post(alice, f"t{i}", None, []).id) for i in range(2))
    world.legacy_like(bob, old, alice)
    world.likes.like(bob, new)
    fans = random.sample(range(1 << 40, 1 << 41), 12)
    for number, fan in enumerate(fans):
        if number % 2:
            world.legacy_like(fan, new, alice)
        else:
            world.likes.like(fan, new)
    world.settle()
    erasure = DynamoErasure()

    assert set(erasure.reactors([old, new])) == {bob, *fans}
    assert sorted(erasure.likes(bob, 100)) == sorted([(old, alice), (new, alice)])
    assert _user_items(bob) == [] and _like_items(old) == []
    assert len(_like_items(new)) == 12 and world.store.count_likers(new) == 12


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
    reconciler = reconciler_now(sweep=0)  # the two counters are named to it, as a sweep would
    mark_counters(f"T#{tweet}", f"U#{alice}")

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

    mark_counters(f"T#{tweet}", f"U#{alice}")
    repairs = {(r.key, r.field): (r.was, r.now) for r in reconciler.run()}
    assert repairs[(f"T#{tweet}", "like_count")] == (7, 1)
    assert repairs[(f"U#{alice}", "tweet_count")] == (99, 1)
    assert world.tweets.get(bob, tweet).like_count == 1  # the cache was dropped too
    assert services.graph().counts([alice])[alice]["tweet_count"] == 1
    mark_counters(f"T#{tweet}", f"U#{alice}")
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
