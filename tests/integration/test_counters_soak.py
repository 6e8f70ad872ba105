"""Soak: 4,000 random engagement operations, then every counter equals the ground truth.

Many users like, unlike, retweet, unretweet, reply and delete at random, from several threads.
The records of the tables' real streams are delivered to the real counter consumer in random
batches, each batch twice, shuffled across items (each item's own records stay in order, as a
stream shard keeps them), through a store that fails at random, before its transaction and
after it committed (the caller never learns the write landed). Failed records come again, as
Lambda retries them. Deleted tweets are cleaned up by the real cleanup as records arrive.
Once everything has settled, the counters are compared with a recount made here, from full
scans of the tables, independently of the reconciliation code.
"""

from __future__ import annotations

import random
import threading
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
import pytest
from warble import services
from warble.dal import counters as dal_counters
from warble.domain.counters.ports import TransactionRetry
from warble.domain.counters.service import StreamCounterProcessor
from warble.errors import NotFound
from warble.settings import get_settings

from tests.support.streams import StreamTap, decoded

pytestmark = pytest.mark.integration

# 1,500 keeps the whole suite under ten minutes on 2 cores: 2,500 took 91 s of one worker, the
# most of any test, in moto's answers (10,000 took 5.5 minutes). Each run injects failures
# before and after commit dozens of times, and every kind of operation races the others.
OPERATIONS = 1_500
USERS = 40
THREADS = 4


class FlakyStore:
    """The real counter store, failing at random before or after its transaction commits."""

    def __init__(self, inner: Any, rng: random.Random, rate: float) -> None:
        self.inner, self.rng, self.rate = inner, rng, rate
        self.lock = threading.Lock()
        self.injected = Counter[str]()

    def _roll(self, where: str) -> None:
        with self.lock:
            hit = self.rng.random() < self.rate
            if hit:
                self.injected[where] += 1
        if hit:
            raise TransactionRetry(f"injected {where}")

    def apply(self, claims: list[str], deltas: dict[tuple[str, str], int]) -> None:
        self._roll("before")
        self.inner.apply(claims, deltas)
        self._roll("after commit")


def _item_key(record: dict[str, Any]) -> str:
    return record["eventSourceARN"] + repr(sorted(record["dynamodb"]["Keys"].items()))


def _shuffle_across_items(records: list[dict[str, Any]], rng: random.Random) -> list[dict]:
    """A random interleaving of the items' records that keeps each item's own order."""
    queues: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        queues[_item_key(record)].append(record)
    pending = [q[::-1] for q in queues.values()]
    out = []
    while pending:
        queue = rng.choice(pending)
        out.append(queue.pop())
        if not queue:
            pending.remove(queue)
    return out


def _scan(table: str) -> list[dict[str, Any]]:
    resource = boto3.resource("dynamodb").Table(table)
    items, start = [], None
    while True:
        page = resource.scan(**({"ExclusiveStartKey": start} if start else {}))
        items += page["Items"]
        start = page.get("LastEvaluatedKey")
        if not start:
            return items


@pytest.fixture
def soak_world(accounts, moto):
    return accounts


def test_thousands_of_random_operations_settle_to_exact_counters(soak_world):
    rng = random.Random(20261123)
    settings = get_settings()
    tap = StreamTap([settings.tweets_table, settings.likes_table])
    tweets, likes = services.tweets(), services.likes()
    users = [
        int(soak_world.signup(f"soak{i}", f"soak{i}@example.com", "password1", None, "").user["id"])
        for i in range(USERS)
    ]
    live: list[tuple[int, int]] = []  # (author, tweet id) believed to exist
    lock = threading.Lock()
    for user in users:
        for n in range(3):
            live.append((user, int(tweets.post(user, f"seed {n}", None, []).id)))

    def pick() -> tuple[int, int]:
        with lock:
            return live[rng.randrange(len(live))]

    def operate(n: int) -> str:
        user = users[n % USERS]
        roll = rng.random()
        author, tweet = pick()
        try:
            if roll < 0.40:
                likes.like(user, tweet)
                return "like"
            if roll < 0.60:
                likes.unlike(user, tweet)
                return "unlike"
            if roll < 0.75:
                retweet, _ = tweets.retweet(user, tweet)
                with lock:
                    live.append((user, int(retweet.id)))
                return "retweet"
            if roll < 0.83:
                tweets.unretweet(user, tweet)
                return "unretweet"
            if roll < 0.95:
                reply = tweets.post(user, f"re {n}", tweet, [])
                with lock:
                    live.append((user, int(reply.id)))
                return "reply"
            tweets.delete(author, tweet)
            with lock:
                if (author, tweet) in live:
                    live.remove((author, tweet))
            return "delete"
        except NotFound:
            return "not_found"  # raced a delete: the request failed and counts nothing

    store = FlakyStore(dal_counters.DynamoCounterStore(3600), rng, rate=0.15)
    processor = StreamCounterProcessor(
        store,
        services.container().counter_rules,
        attempts=2,
        backoff_seconds=0,
        on_applied=services.container().counters_changed,
    )
    deliveries = Counter[str]()

    def deliver(records: list[dict[str, Any]]) -> None:
        """Random batches, each twice, shuffled across items; failures come again."""
        for record in records:
            if (
                record["eventName"] == "REMOVE"
                and ":table/" + settings.tweets_table + "/" in (record["eventSourceARN"])
            ):
                tweets.purge(int(record["dynamodb"]["Keys"]["tweet_id"]["N"]))
        pending = _shuffle_across_items(records, rng)
        while pending:
            size = rng.randint(1, 100)
            batch, pending = pending[:size], pending[size:]
            for _ in range(2):
                deliveries["batches"] += 1
                outcome = processor.process(decoded(batch))
                retry = [r for r in batch if r["dynamodb"]["SequenceNumber"] in outcome.failures]
                while retry:
                    deliveries["retries"] += 1
                    failed = set(processor.process(decoded(retry)).failures)
                    retry = [r for r in retry if r["dynamodb"]["SequenceNumber"] in failed]

    done = Counter[str]()
    with ThreadPoolExecutor(THREADS) as pool:
        for start in range(0, OPERATIONS, 500):
            for outcome in pool.map(operate, range(start, min(start + 500, OPERATIONS))):
                done[outcome] += 1
            deliver(tap.drain())  # the consumer runs while operations go on
    while records := tap.drain():  # settle: cleanup makes records of its own
        deliver(records)

    assert sum(done.values()) == OPERATIONS
    assert min(done["like"], done["unlike"], done["retweet"], done["reply"], done["delete"]) > 0
    assert store.injected["before"] > 5 and store.injected["after commit"] > 5

    # Ground truth, recounted here from full scans of the tables.
    mine = set(users)
    truth: Counter[tuple[str, str]] = Counter()
    existing: set[int] = set()
    for item in _scan(settings.tweets_table):
        if int(item["author_id"]) not in mine:
            continue
        existing.add(int(item["tweet_id"]))
        truth[(f"U#{int(item['author_id'])}", "tweet_count")] += 1
        if item.get("reply_to") is not None:
            truth[(f"T#{int(item['reply_to'])}", "reply_count")] += 1
        if item.get("retweet_of") is not None:
            truth[(f"T#{int(item['retweet_of'])}", "retweet_count")] += 1
    for item in _scan(settings.likes_table):
        edge = item["pk"].startswith("U#") and item["sk"].startswith("T#")
        if edge and int(item["pk"][2:]) in mine:
            truth[(f"T#{int(item['sk'][2:])}", "like_count")] += 1
    # A hot counter's value is its item plus its sub-items (<key>#<k>: warble.dal.counters).
    stored: dict[str, Counter[str]] = defaultdict(Counter)
    for item in _scan(settings.counters_table):
        for name, value in item.items():
            if name.endswith("_count"):
                stored[dal_counters.main_key(item["pk"])][name] += int(value)

    wrong = []
    for key in [f"U#{u}" for u in users] + [f"T#{t}" for t in existing]:
        fields = ("tweet_count",) if key.startswith("U#") else (
            "like_count", "retweet_count", "reply_count")  # fmt: skip
        for field in fields:
            expected = truth[(key, field)]
            actual = int(stored.get(key, {}).get(field, 0))
            if actual != expected:
                wrong.append((key, field, expected, actual))
    assert wrong == [], f"{len(wrong)} counters off (key, field, truth, counter): {wrong[:10]}"
    assert sum(truth.values()) > 1000  # the soak counted real work
    # And the API shows the same numbers.
    sample = rng.sample(sorted(existing), 20)
    shown = tweets.counts(sample)
    for tweet in sample:
        assert shown[tweet]["like_count"] == truth[(f"T#{tweet}", "like_count")]
