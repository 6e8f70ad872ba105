"""Engagement: the like counter consumer's throughput and aggregation, and a page with counts.

Counter consumer: likes are written through ``LikeStore.like`` (5 tweets x 100 synthetic likers
= 500 likes; the liker ids need no account) and their records read back from the likes table's
real moto stream with tests.support.streams.StreamTap, in Lambda's record shape. Only the like
*edge* records are kept (each like also writes two list items whose records count nothing and
are skipped without a claim), so a batch of 100 records is 100 likes. The real consumer
(``services.container().count_batch``: the stores' decoding, DynamoCounterStore, the counter
rules, the cache invalidation) is timed over batches of 100; each call gets a FRESH batch,
copies of the records with a new eventID and SequenceNumber, since a record already claimed is
dropped (CLAIM#<eventID>) and would measure the dedupe path instead. Copying 100 shallow dicts
costs a few µs per call, nothing against the transactions. Its baseline is the naive design: one
raw UpdateItem (ADD like_count 1) per like, 100 in sequence; the breakdown has the raw
TransactWriteItems of the same shape the consumer writes (claims + one update per counter item,
in chunks of <= 100 actions) and the cache invalidation (DEL).

Hot tweet: 100 likes of ONE tweet in a batch, through the consumer once: how many
TransactWriteItems and counter-item writes it takes against 100 UpdateItems (a note row).

Page: ``GET /v1/users/{id}/tweets?limit=20`` through the real TweetsFunction handler (event from
events/graph/followers.json, route changed, a real session's token), warm caches:
the viewer likes half of the author's tweets, the counters were applied by the consumer, and the
page was read once. Baseline: the raw batch reads the page needs (Query of 20 tweets, then one
pipeline: MGET of the 20 cached tweets, rendered once when they were cached (issue 45), MGET of
the profiles, MGET of the 20 cached counters, the viewer's recent likes and retweets); the
breakdown adds every other round trip the handler makes (session check, profile GET), and the
check compares them with a trace.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from bench import stack
from bench.accounts import expect
from bench.harness import Benchmark, Item, Op, Precomputed, Result, Run, fmt_rate, group

PASSWORD = "correct horse battery staple"
TWEETS = 5  # tweets liked in the consumer benchmark
LIKERS = 100  # synthetic likers, each liking every one of those tweets
BATCH = 100  # records per consumer batch (Lambda's default BatchSize for a DynamoDB stream)
PAGE = 20
MAX_ACTIONS = 100  # TransactWriteItems' limit


def fresh(records: Sequence[dict[str, Any]], counter: Iterator[int]) -> list[dict[str, Any]]:
    """Copies of the records with new eventIDs and SequenceNumbers (so no claim exists yet)."""
    out = []
    for record in records:
        n = next(counter)
        copied = dict(record)
        copied["eventID"] = f"bench-{n:012d}"
        copied["dynamodb"] = {**record["dynamodb"], "SequenceNumber": f"{n:021d}"}
        out.append(copied)
    return out


def chunked(records: Sequence[dict[str, Any]]) -> list[tuple[list[str], set[str]]]:
    """(claims, counter items) per transaction, cut as StreamCounterProcessor cuts a batch."""
    chunks: list[tuple[list[str], set[str]]] = []
    for record in records:
        item = f"T#{int(record['dynamodb']['Keys']['sk']['S'][2:])}"
        if chunks:
            claims, items = chunks[-1]
            if len(claims) + 1 + len(items | {item}) <= MAX_ACTIONS:
                claims.append(record["eventID"])
                items.add(item)
                continue
        chunks.append(([record["eventID"]], {item}))
    return chunks


def user_tweets_event(issued: Any, user_id: int) -> dict[str, Any]:
    """GET /v1/users/{user_id}/tweets?limit=20 as ``issued``, from another route's sample."""
    evt = copy.deepcopy(stack.event("graph/followers.json"))
    evt = stack.with_path_id(evt, "user_id", user_id)
    evt["routeKey"] = evt["requestContext"]["routeKey"] = "GET /v1/users/{user_id}/tweets"
    path = f"/v1/users/{user_id}/tweets"
    evt["rawPath"] = evt["requestContext"]["http"]["path"] = path
    evt["rawQueryString"] = f"limit={PAGE}"
    evt["queryStringParameters"] = {"limit": str(PAGE)}
    return stack.as_session(evt, issued)


def likes_per_second(result: Result) -> list[str]:
    rows = [result.path, *result.baselines]
    return [
        "likes/s (100 likes per call, one caller): "
        + "; ".join(
            f"{row.label}: {fmt_rate(BATCH * 1e9 / row.stats.median_ns)}"
            for row in rows
            if "DEL" not in row.label
        )
    ]


@dataclass
class EngagementBench:
    """What the engagement benchmarks share: the stack's settings, a bare client of each store
    for the raw operations, the services, the likes store and the container's consumer."""

    run: Run
    settings: Any
    raw: Any
    ddb: Any
    store: Any  # warble.dal.likes.LikeStore
    container: Any  # warble.services.Container


@group("engagement", "like counter consumer (per-batch aggregation) and a page with counts")
def engagement_group(run: Run) -> Iterator[Item]:
    from warble import services
    from warble.dal.likes import LikeStore
    from warble.settings import get_settings

    bench_stack = stack.shared(run)
    settings = get_settings()
    raw, ddb = stack.raw_clients(run, bench_stack)
    e = EngagementBench(run, settings, raw, ddb, LikeStore(), services.container())
    likes = LikeRecords(e)
    yield counter_consumer(e, likes)
    yield hot_tweet(e, likes)
    yield user_tweets_page(e, likes.author_id)


class LikeRecords:
    """500 likes (100 likers of 5 tweets) read back from the likes table's stream, counted once
    for real; the consumer's batches of them and the raw operations they compare with."""

    def __init__(self, e: EngagementBench) -> None:
        from warble import services

        from bench.timeline import make_user
        from tests.support.streams import StreamTap

        self._e = e
        tweets, ids, container = services.tweets(), services.ids(), e.container
        self.author_id = make_user("eng_author")
        tap = StreamTap([e.settings.likes_table])
        liked = [
            int(tweets.post(self.author_id, f"liked tweet {n}", None, []).id) for n in range(TWEETS)
        ]
        likers = [ids.next_id() for _ in range(LIKERS)]
        for liker in likers:
            for tid in liked:
                assert e.store.like(liker, tid, self.author_id, ids.next_id())
        edges: list[dict[str, Any]] = []
        while drained := tap.drain():
            edges += [r for r in drained if container.stream_decoder.decode(r).events]
        assert len(edges) == TWEETS * LIKERS, len(edges)
        assert container.count_batch({"Records": edges}).failures == []  # the real counts, once
        self.mixed = edges[:BATCH]  # stream order: 20 likes on each of the 5 tweets
        hot_tweet = liked[0]
        self.hot = [r for r in edges if self.liked_tweet(r) == hot_tweet][:BATCH]
        assert len(self.hot) == BATCH
        self.serial = itertools.count(1)

    def liked_tweet(self, record: dict[str, Any]) -> int:
        """The tweet of a like edge's record, as the stores decode it."""
        decoded = self._e.container.stream_decoder.decode(record)
        return int(decoded.events[0].tweet_id)

    def consume(self, records: Sequence[dict[str, Any]]) -> Callable[[], Any]:
        container, serial = self._e.container, self.serial

        def call() -> Any:
            outcome = container.count_batch({"Records": fresh(records, serial)})
            if outcome.failures:
                raise RuntimeError(f"consumer failed: {outcome.failures[:3]}")
            return outcome

        return call

    def raw_updates(self, records: Sequence[dict[str, Any]]) -> Callable[[], None]:
        ddb, counters_table = self._e.ddb, self._e.settings.counters_table
        targets = [{"pk": {"S": f"T#{int(r['dynamodb']['Keys']['sk']['S'][2:])}"}} for r in records]

        def call() -> None:
            for key in targets:
                ddb.update_item(
                    TableName=counters_table,
                    Key=key,
                    UpdateExpression="ADD #f :d",
                    ExpressionAttributeNames={"#f": "like_count"},
                    ExpressionAttributeValues={":d": {"N": "1"}},
                )

        return call

    def raw_transactions(self, records: Sequence[dict[str, Any]]) -> Callable[[], None]:
        ddb, counters_table, serial = self._e.ddb, self._e.settings.counters_table, self.serial

        def call() -> None:
            expires = "9999999999"
            for claims, items in chunked(fresh(records, serial)):
                actions: list[dict[str, Any]] = [
                    {
                        "Put": {
                            "TableName": counters_table,
                            "Item": {"pk": {"S": f"CLAIM#{c}"}, "expires_at": {"N": expires}},
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    }
                    for c in claims
                ]
                actions += [
                    {
                        "Update": {
                            "TableName": counters_table,
                            "Key": {"pk": {"S": item}},
                            "UpdateExpression": "ADD #f :d",
                            "ExpressionAttributeNames": {"#f": "like_count"},
                            "ExpressionAttributeValues": {":d": {"N": "1"}},
                        }
                    }
                    for item in sorted(items)
                ]
                ddb.transact_write_items(TransactItems=actions)

        return call

    def raw_invalidate(self, records: Sequence[dict[str, Any]]) -> Callable[[], None]:
        from warble import keys

        raw = self._e.raw
        tids = sorted({self.liked_tweet(r) for r in records})

        def call() -> None:
            pipe = raw.pipeline(transaction=False)  # as LeasedCache.invalidate_many sends them
            for tid in tids:
                key = keys.tweet_counts(tid)
                pipe.delete(key.value, key.lease)
            pipe.execute()

        return call

    def raw_consumer_sequence(self, records: Sequence[dict[str, Any]]) -> Callable[[], None]:
        tx, dels = self.raw_transactions(records), self.raw_invalidate(records)

        def call() -> None:
            tx()
            dels()

        return call


# ---- a batch of 100 likes on 5 tweets ----------------------------------------------------------


def counter_consumer(e: EngagementBench, likes: LikeRecords) -> Benchmark:
    mixed = likes.mixed
    consume_mixed = likes.consume(mixed)
    n_tx = len(chunked(mixed))
    floor = f"raw {n_tx} TransactWriteItems (claims + summed updates) + DELs, in sequence"
    return Benchmark(
        f"counter consumer: batch of {BATCH} likes on {TWEETS} tweets "
        "(StreamCounterProcessor.process)",
        consume_mixed,
        likes.raw_updates(mixed),
        path="consumer",
        baseline=f"raw {BATCH} UpdateItems, one ADD per like (naive), in sequence",
        floor=floor,
        breakdown=[
            (
                f"raw {n_tx} TransactWriteItems, same actions as the consumer",
                likes.raw_transactions(mixed),
            ),
            (f"raw pipelined DEL of {TWEETS} cached counters", likes.raw_invalidate(mixed)),
            (floor, likes.raw_consumer_sequence(mixed)),
        ],
        budget_s=10.0,
        warmup=3,
        min_iterations=10,
        max_iterations=300,
        check=lambda: stack.compare_traces(
            consume_mixed, likes.raw_consumer_sequence(mixed), "counter consumer"
        ),
        describe=lambda: [f"round trips of one batch: {stack.traced(consume_mixed)}"],
        summarize=[likes_per_second],
        notes=[
            "each call gets a fresh batch (the records copied with new eventID / "
            "SequenceNumber), so no claim exists yet; moto stands in for DynamoDB",
        ],
    )


# ---- hot tweet: 100 likes of one tweet in a batch ----------------------------------------------


def hot_tweet(e: EngagementBench, likes: LikeRecords) -> Precomputed:
    hot = likes.hot
    consume_hot = likes.consume(hot)
    hot_trace = stack.traced(consume_hot)
    outcome = consume_hot()
    writes = sum(1 for c in hot_trace.calls if c == "dynamodb TransactWriteItems")
    naive = stack.traced(likes.raw_updates(hot))
    naive_writes = sum(1 for c in naive.calls if c == "dynamodb UpdateItem")
    hot_op, naive_op = Op("hot", consume_hot), Op("naive", likes.raw_updates(hot))
    rounds = max(3, round(10 * min(1.0, e.run.scale)))
    hot_ns, naive_ns = [], []
    for _ in range(rounds):
        hot_ns.append(hot_op.sample())
        naive_ns.append(naive_op.sample())
    return Precomputed(
        f"hot tweet: batch of {BATCH} likes of ONE tweet (counter consumer)",
        ("consumer", hot_ns),
        [(f"raw {BATCH} UpdateItems of the one counter (naive)", naive_ns)],
        notes=[
            f"counter writes per batch: consumer {outcome.transactions} TransactWriteItems "
            f"(traced: {writes}), each with ONE update of the hot counter, so {writes} writes "
            f"of its item; naive: {naive_writes} UpdateItems of it. Aggregation factor "
            f"{naive_writes / max(1, writes):.0f}x fewer writes of the hot item",
            f"why {writes} and not 1: {BATCH} claims + 1 update is {BATCH + 1} actions, over "
            f"the {MAX_ACTIONS}-action limit, so the batch is cut into 99 + 1 claims",
        ],
        throughput=True,
    )


# ---- GET /v1/users/{id}/tweets?limit=20, warm caches -------------------------------------------


def user_tweets_page(e: EngagementBench, author_id: int) -> Benchmark:
    from warble import keys, services

    from bench.timeline import make_user
    from tests.support.streams import StreamTap

    raw, ddb, settings, container = e.raw, e.ddb, e.settings, e.container
    accounts, tweets, ids = services.accounts(), services.tweets(), services.ids()
    viewer_id = make_user("eng_viewer")
    viewer = accounts.login("eng_viewer", PASSWORD, "bench")
    tap = StreamTap([settings.likes_table])
    page_ids = [int(tweets.post(author_id, f"page tweet {n}", None, []).id) for n in range(25)]
    for tid in page_ids[::2]:
        assert e.store.like(viewer_id, tid, author_id, ids.next_id())
    while drained := tap.drain():
        assert container.count_batch({"Records": drained}).failures == []

    handler = stack.load_function("tweets").handler
    read_page = expect(handler, user_tweets_event(viewer, author_id), 200)
    read_page()  # fills the caches (tweets, counters, profiles)
    read_page()

    def raw_query() -> Any:
        return ddb.query(
            TableName=settings.tweets_table,
            KeyConditionExpression="author_id = :a",
            ExpressionAttributeValues={":a": {"N": str(author_id)}},
            ScanIndexForward=False,
            Limit=PAGE,
            ConsistentRead=True,
        )

    shown = [int(item["tweet_id"]["N"]) for item in raw_query()["Items"]]
    tweet_keys = [keys.tweet(t).value for t in shown]
    counts_keys = [keys.tweet_counts(t).value for t in shown]
    profile_key = keys.profile(author_id).value
    cached = raw.mget(tweet_keys + counts_keys + [profile_key])
    assert all(v is not None for v in cached), "not all cached"
    raw_session_check = stack.session_check(raw, viewer)

    def raw_profile_get() -> Any:
        return raw.get(profile_key)

    def raw_tweets_mget() -> Any:
        return raw.mget(tweet_keys)

    def raw_page_reads() -> Any:  # tweets, authors, counters and the viewer's flags: one pipeline
        pipe = raw.pipeline(transaction=False)
        pipe.mget(tweet_keys)
        pipe.mget([profile_key])
        pipe.mget(counts_keys)
        pipe.hmget(keys.memberships("liked", viewer_id).value, "*", *shown)
        pipe.hmget(keys.memberships("retweeted", viewer_id).value, "*", *shown)
        return pipe.execute()

    def raw_batch_reads() -> None:
        raw_query()
        raw_page_reads()

    steps: list[tuple[str, str, Callable[[], Any]]] = [
        ("session", stack.SESSION_CHECK, raw_session_check),
        ("GET", "raw GET author profile", raw_profile_get),
        ("Query", f"raw DynamoDB Query, {PAGE} tweets (moto)", raw_query),
        (
            "reads",
            f"raw pipeline (MGET {PAGE} tweets, MGET author profile, MGET {PAGE} counters, "
            "HMGET liked, HMGET retweeted)",
            raw_page_reads,
        ),
    ]

    def raw_sequence() -> None:
        for _, _, step in steps:
            step()

    def services_only() -> Any:
        me = accounts.require_token(viewer.token)
        return tweets.user_timeline(me.user_id, author_id, PAGE, None)

    total = "raw sum, in sequence: " + " + ".join(name for name, _, _ in steps)
    liked_shown = sum(1 for t in shown if t in set(page_ids[::2]))
    return Benchmark(
        f"GET /v1/users/{{id}}/tweets?limit={PAGE}, counts + liked_by_me, warm caches "
        "(TweetsFunction handler)",
        read_page,
        raw_batch_reads,
        path="handler",
        baseline="raw Query + pipeline (tweets, profiles, counters, flags), in sequence",
        floor=total,
        breakdown=[
            *((label, fn) for _, label, fn in steps),
            (total, raw_sequence),
            (f"raw MGET {PAGE} tweets (in the pipeline above)", raw_tweets_mget),
            ("services called directly (no HTTP layer)", services_only),
        ],
        budget_s=8.0,
        warmup=30,
        min_iterations=50,
        max_iterations=2000,
        check=lambda: stack.compare_traces(read_page, raw_sequence, "GET /v1/users/{id}/tweets"),
        describe=lambda: [f"round trips of one warm call: {stack.traced(read_page)}"],
        summarize=[
            Benchmark.difference("handler", total, "handler overhead over its store calls"),
        ],
        notes=[
            f"{liked_shown} of the {len(shown)} tweets shown are liked by the viewer",
            "the Query says which tweets (read-your-writes); the tweets, rendered once when "
            "cached, come from the cache in the page's one pipeline (issue 45: no longer "
            "rendered and re-primed, a pipeline of SET NX x20, on every read)",
        ],
    )
