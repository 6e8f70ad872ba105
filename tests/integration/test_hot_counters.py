"""A hot counter spread over sub-items (warble.dal.counters), against real moto and Redis.

A viral tweet's likes come from every shard of the likes stream, each shard's batch a counter
transaction on the tweet's one item. DynamoDB then cancels transactions that find the item held
by another (TransactionConflict); moto serves one request at a time and never does, so
``contended`` answers as DynamoDB does for the transactions that update the hot item. The rest is
the real consumer, store, reconciliation and deletion on moto's tables.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import botocore.client
import botocore.exceptions
import pytest
from warble import services
from warble.dal import counters as dal_counters
from warble.dal import likes as dal_likes
from warble.dal.erasure import DynamoErasure
from warble.domain.counters.service import StreamCounterProcessor
from warble.settings import get_settings

from tests.support.counters import mark
from tests.support.counters import reconciler as reconciler_now
from tests.support.streams import StreamTap, decoded

pytestmark = pytest.mark.integration


@contextmanager
def contended(key: str, times: int = 1) -> Iterator[list[str]]:
    """The next ``times`` transactions that update ``key``'s item are cancelled as DynamoDB
    cancels them when another transaction holds it: TransactionConflict on that update."""
    original = botocore.client.BaseClient.__dict__["_make_api_call"]
    cancelled: list[str] = []

    def call(self: Any, operation: str, params: dict[str, Any]) -> Any:
        if operation == "TransactWriteItems" and len(cancelled) < times:
            hits = [
                "Update" in action and action["Update"]["Key"]["pk"]["S"] == key
                for action in params["TransactItems"]
            ]
            if any(hits):
                cancelled.append(key)
                reasons = [
                    {
                        "Code": "TransactionConflict",
                        "Message": "Transaction is ongoing for the item",
                    }
                    if hit
                    else {"Code": "None"}
                    for hit in hits
                ]
                error = {
                    "Error": {
                        "Code": "TransactionCanceledException",
                        "Message": "Transaction cancelled, please refer cancellation reasons",
                    },
                    "CancellationReasons": reasons,
                }
                raise botocore.exceptions.ClientError(error, operation)  # type: ignore[arg-type]
        return original(self, operation, params)

    botocore.client.BaseClient._make_api_call = call  # type: ignore[method-assign]
    try:
        yield cancelled
    finally:
        botocore.client.BaseClient._make_api_call = original  # type: ignore[method-assign]


def _items(key: str) -> dict[str, dict[str, Any]]:
    """The counter's item and its sub-items, as stored (a full scan: the test's own view)."""
    table = boto3.resource("dynamodb").Table(get_settings().counters_table)
    found: dict[str, dict[str, Any]] = {}
    start = None
    while True:
        page = table.scan(**({"ExclusiveStartKey": start} if start else {}))
        for item in page["Items"]:
            if item["pk"] == key or item["pk"].startswith(key + "#"):
                found[item["pk"]] = item
        start = page.get("LastEvaluatedKey")
        if not start:
            return found


def _in_sub_items(key: str, field: str) -> int:
    return sum(int(i.get(field, 0)) for pk, i in _items(key).items() if pk != key)


@pytest.fixture
def world(accounts, moto) -> Iterator[Any]:
    settings = get_settings()
    tap = StreamTap([settings.likes_table])

    class World:
        tweets = services.tweets()
        likes = services.likes()
        rules = services.container().counter_rules

        def user(self, name: str) -> int:
            signed = accounts.signup(name, f"{name}@example.com", "password1", None, "")
            return int(signed.user["id"])

        def consumer(self, seed: int) -> tuple[dal_counters.DynamoCounterStore, Any]:
            """A counter consumer's container: its own store (what it learned is its own)."""
            store = dal_counters.DynamoCounterStore(3600, rng=random.Random(seed))
            processor = StreamCounterProcessor(
                store, self.rules, backoff_seconds=0,
                on_applied=services.container().counters_changed,
            )  # fmt: skip
            return store, processor

        def liked_by(self, fans: list[int], tweet: int) -> list[dict[str, Any]]:
            """The like edges' stream records of these new likes (one batch's worth)."""
            for fan in fans:
                self.likes.like(fan, tweet)
            return [r for r in tap.drain() if r["dynamodb"]["Keys"]["sk"]["S"] == f"T#{tweet}"]

        def unliked_by(self, fans: list[int], tweet: int) -> list[dict[str, Any]]:
            for fan in fans:
                self.likes.unlike(fan, tweet)
            return [r for r in tap.drain() if r["dynamodb"]["Keys"]["sk"]["S"] == f"T#{tweet}"]

    yield World()


def _fans(n: int) -> list[int]:
    return random.sample(range(1 << 40, 1 << 41), n)


def test_a_hot_tweets_likes_land_in_sub_items_and_a_read_sums_them_exactly(world):
    # given a tweet with 10 likes counted on its item
    alice = world.user("alice")
    tweet = int(world.tweets.post(alice, "going viral", None, []).id)
    key = f"T#{tweet}"
    store, processor = world.consumer(seed=29)
    assert processor.process(decoded(world.liked_by(_fans(10), tweet))).failures == []
    assert world.tweets.get(alice, tweet).like_count == 10  # now in the counts cache

    # when its item is contended: the batch's transaction is cancelled on the counter's update
    with contended(key) as cancelled:
        outcome = processor.process(decoded(world.liked_by(_fans(20), tweet)))
    assert cancelled == [key] and outcome.failures == []
    # then the counter is hot: its item names its sub-items, and the retry wrote one of them
    items = _items(key)
    assert int(items[key]["sub_items"]) == get_settings().counter_hot_sub_items == 8
    assert int(items[key]["like_count"]) == 10
    assert _in_sub_items(key, "like_count") == 20

    # and the batches after it write sub-items only, drawn per transaction
    for _ in range(5):
        assert processor.process(decoded(world.liked_by(_fans(14), tweet))).failures == []
    items = _items(key)
    assert int(items[key]["like_count"]) == 10
    assert _in_sub_items(key, "like_count") == 90
    assert len(items) - 1 > 1, "six transactions all drew the same sub-item"
    assert all(pk.rpartition("#")[2] in {str(k) for k in range(8)} for pk in items if pk != key)

    # a read sums the item and its sub-items, whoever reads (another container, the API)
    assert store.read([key])[key]["like_count"] == 100
    other = dal_counters.DynamoCounterStore(3600)
    read = other.read([key, f"T#{tweet + 1}"])
    assert read[key]["like_count"] == 100 and read[key]["retweet_count"] == 0
    assert read[f"T#{tweet + 1}"] == {}
    assert world.tweets.get(alice, tweet).like_count == 100  # the cache was dropped, then read

    # a container that does not know it is hot writes the item itself, which still counts
    _, fresh = world.consumer(seed=30)
    assert fresh.process(decoded(world.liked_by(_fans(5), tweet))).failures == []
    assert int(_items(key)[key]["like_count"]) == 15
    assert other.read([key])[key]["like_count"] == 105
    assert world.tweets.get(alice, tweet).like_count == 105


def test_a_batch_written_to_a_sub_item_counts_nothing_twice_when_delivered_again(world):
    alice = world.user("alice")
    tweet = int(world.tweets.post(alice, "counted once", None, []).id)
    key = f"T#{tweet}"
    store, processor = world.consumer(seed=7)
    with contended(key):
        assert processor.process(decoded(world.liked_by(_fans(3), tweet))).failures == []
    assert _in_sub_items(key, "like_count") == 3

    # a batch of 40 likes and 10 unlikes, applied to a sub-item
    fans = _fans(40)
    records = world.liked_by(fans, tweet) + world.unliked_by(fans[:10], tweet)
    batch = decoded(records)
    assert processor.process(batch).failures == []
    assert store.read([key])[key]["like_count"] == 33

    # delivered again: whole (its claims cancel it, whatever sub-item it drew), in bisected
    # halves, and again while the item is contended (the claims still win)
    assert processor.process(batch).failures == []
    half = len(records) // 2
    assert processor.process(decoded(records[:half])).failures == []
    assert processor.process(decoded(records[half:])).failures == []
    with contended(key):
        assert processor.process(batch).failures == []
    # and by a container that does not know the counter is hot (it would write the item)
    _, fresh = world.consumer(seed=8)
    assert fresh.process(batch).failures == []

    assert store.read([key])[key]["like_count"] == 33
    items = _items(key)
    assert int(items[key].get("like_count", 0)) == 0
    assert _in_sub_items(key, "like_count") == 33
    assert dal_likes.LikeStore().count_likers(tweet) == 33  # the truth, recounted


def test_reconciliation_counts_a_hot_counter_once_and_repairs_it_across_its_sub_items(world):
    alice, bob = world.user("alice"), world.user("bob")
    tweet = int(world.tweets.post(alice, "reconciled", None, []).id)
    key = f"T#{tweet}"
    _, processor = world.consumer(seed=3)
    assert processor.process(decoded(world.liked_by([bob], tweet))).failures == []
    with contended(key):
        assert processor.process(decoded(world.liked_by(_fans(12), tweet))).failures == []
    for _ in range(3):
        assert processor.process(decoded(world.liked_by(_fans(5), tweet))).failures == []
    assert _in_sub_items(key, "like_count") == 27
    # the run is named this counter, as the consumer's batch names it: no sweep of the session's
    # every counter (a COUNT query a field), which took two minutes of the suite
    reconciler = reconciler_now(sweep=0)

    def run() -> list:
        mark(key)
        return reconciler.run()

    # a hot counter that is right is seen as right: its item and sub-items summed once
    assert [r for r in run() if r.key == key] == []
    assert reconciler.checked >= 1
    assert dict(dal_counters.DynamoCounterStore(3600).scan())[key]["like_count"] == 28
    assert world.tweets.get(alice, tweet).like_count == 28

    # a sub-item that drifted (+5) is repaired: the item takes the difference
    table = boto3.resource("dynamodb").Table(get_settings().counters_table)
    drifted = next(pk for pk, item in _items(key).items() if pk != key and item.get("like_count"))
    table.update_item(
        Key={"pk": drifted},
        UpdateExpression="ADD like_count :v",
        ExpressionAttributeValues={":v": 5},
    )
    repairs = {(r.key, r.field): (r.was, r.now) for r in run()}
    assert repairs[(key, "like_count")] == (33, 28)
    assert not any(k.startswith(key + "#") for k, _ in repairs)  # sub-items are not counters
    assert world.tweets.get(alice, tweet).like_count == 28  # the cache was dropped too
    assert int(_items(key)[key]["like_count"]) + _in_sub_items(key, "like_count") == 28
    assert [r for r in run() if r.key == key] == []

    # the consumer keeps counting on top of the repair, exactly
    assert processor.process(decoded(world.liked_by(_fans(4), tweet))).failures == []
    assert [r for r in run() if r.key == key] == []
    assert world.tweets.get(alice, tweet).like_count == 32


def test_deletion_leaves_no_sub_item_of_a_hot_counter(world):
    alice = world.user("alice")
    settled = int(world.tweets.post(alice, "liked, then unliked", None, []).id)
    moving = int(world.tweets.post(alice, "still liked", None, []).id)
    store, processor = world.consumer(seed=11)
    fans = _fans(30)
    for tweet in (settled, moving):
        with contended(f"T#{tweet}"):
            assert processor.process(decoded(world.liked_by(fans[:6], tweet))).failures == []
        for start in range(6, 30, 8):
            batch = decoded(world.liked_by(fans[start : start + 8], tweet))
            assert processor.process(batch).failures == []
        assert _in_sub_items(f"T#{tweet}", "like_count") == 30
        assert "like_count" not in _items(f"T#{tweet}")[f"T#{tweet}"]
    erasure = DynamoErasure()

    # the deletion sees a hot tweet's likes (its item alone says none) and waits for them
    assert set(erasure.reactors([settled, moving])) == set(fans)
    assert sorted(erasure.settle_counters(None, [settled, moving])) == sorted([settled, moving])
    assert len(_items(f"T#{settled}")) > 2

    # once the streams brought a tweet's counts to 0 (spread over sub-items, each not 0), its
    # item goes with every sub-item
    for start in range(0, 30, 10):
        batch = decoded(world.unliked_by(fans[start : start + 10], settled))
        assert processor.process(batch).failures == []
    assert store.read([f"T#{settled}"])[f"T#{settled}"]["like_count"] == 0
    assert erasure.settle_counters(None, [settled, moving]) == [moving]
    assert _items(f"T#{settled}") == {}
    assert len(_items(f"T#{moving}")) > 2

    # and a counter deleted whatever it says (the workflow's last resort) goes whole too
    erasure.drop_counters(None, [moving])
    assert _items(f"T#{moving}") == {}
    assert dict(dal_counters.DynamoCounterStore(3600).scan()).get(f"T#{moving}") is None
