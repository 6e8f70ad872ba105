"""The two stream readers do a batch's work in a constant number of store round trips, and
exactly once: the real handlers (functions/fanout, functions/reactions) on real stream records,
their calls counted at the clients' send paths."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import botocore.client
import pytest
import redis
import redis.client
from botocore.httpsession import URLLib3Session
from warble import keys, services
from warble.dal import redis as redis_dal
from warble.settings import get_settings

from tests.integration.test_sample_events import Context, _load_function
from tests.support.streams import StreamTap

pytestmark = pytest.mark.integration


@contextmanager
def counted() -> Iterator[Counter[str]]:
    """DynamoDB calls, Redis round trips (a pipeline is one) and @connections posts made by this
    thread and the consumers' own pools: not by a thread an earlier test of this worker left
    running (the patches are on the classes, so they would see its calls too)."""
    calls: Counter[str] = Counter()
    here = threading.get_ident()

    def ours() -> bool:
        thread = threading.current_thread()
        return thread.ident == here or thread.name.startswith(("push", "purge"))

    patched = [
        (botocore.client.BaseClient, "_make_api_call", "dynamodb"),
        (redis.Redis, "execute_command", "redis"),
        # a script a node had lost (a fresh or failed-over server): loaded, then its calls sent
        # again together: two round trips more for the batch, counted apart
        (redis.commands.core.ScriptCommands, "script_load", "script_loads"),
        (redis.client.Pipeline, "execute", "redis"),
        (URLLib3Session, "send", "posts"),
    ]
    originals = [(owner, name, owner.__dict__[name]) for owner, name, _ in patched]

    def wrap(original: Any, kind: str) -> Any:
        def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
            if ours() and (kind != "posts" or "/@connections/" in str(getattr(args[0], "url", ""))):
                calls[kind] += 1
            return original(self, *args, **kwargs)

        return wrapped

    for (owner, name, kind), (_, _, original) in zip(patched, originals, strict=True):
        setattr(owner, name, wrap(original, kind))
    send = redis_dal.send_pipelined

    def sent(*args: Any, **kwargs: Any) -> Any:
        calls["redis"] += ours()
        return send(*args, **kwargs)

    redis_dal.send_pipelined = sent
    try:
        yield calls
    finally:
        redis_dal.send_pipelined = send
        for owner, name, original in originals:
            setattr(owner, name, original)


def user(accounts, name: str) -> int:
    return int(accounts.signup(name, f"{name}@example.com", "password1", None, "").user["id"])


def test_reactions_notify_a_batch_in_constant_round_trips_and_once(accounts, moto, redis):
    # given three authors with an open connection each, and 30 likes of their tweets
    authors = [user(accounts, f"author{i}") for i in range(3)]
    fans = [user(accounts, f"fan{i}") for i in range(10)]
    notifications, tweets, likes = services.notifications(), services.tweets(), services.likes()
    for author in authors:
        services.container().connections.add(author, f"conn-{author}", 0, 3600)
        notifications.counts(author)  # active users: their counts are in memory
    posted = [int(tweets.post(a, "like me", None, []).id) for a in authors]
    tap = StreamTap([get_settings().likes_table])
    for fan in fans:
        for tweet in posted:
            likes.like(fan, tweet)
    batch = {"Records": [r for r in tap.drain() if r["dynamodb"]["Keys"]["sk"]["S"][:2] == "T#"]}
    assert len(batch["Records"]) == 30
    reactions = _load_function("reactions").handler

    # when the reactions reader gets them as one batch
    with counted() as calls:
        assert reactions(batch, Context()) == {"batchItemFailures": []}

    # then: one transaction holds the 30 notifications and their dedupe items, and the
    # recipients' connections are one read; three Redis round trips; every notification is
    # pushed to its recipient's connection (API.md), ten each
    assert calls["dynamodb"] <= 3, calls
    assert calls["redis"] - 2 * calls["script_loads"] <= 3, calls
    assert calls["posts"] == 30
    for author in authors:
        assert notifications.counts(author).like == 10
        assert len(notifications.page(author, ["like"], 50, None).items) == 10

    # and delivered again, it makes, counts and pushes nothing more
    with counted() as again:
        assert reactions(batch, Context()) == {"batchItemFailures": []}
    assert again["posts"] == 0 and again["redis"] <= 3, again
    assert [notifications.counts(a).like for a in authors] == [10, 10, 10]
    assert all(len(notifications.page(a, ["like"], 50, None).items) == 10 for a in authors)


def test_fanout_applies_a_batch_in_constant_round_trips(accounts, moto, redis):
    # given five authors followed by four readers whose timelines are built
    authors = [user(accounts, f"writer{i}") for i in range(5)]
    readers = [user(accounts, f"reader{i}") for i in range(4)]
    graph, tweets, timelines = services.graph(), services.tweets(), services.timelines()
    for reader in readers:
        for author in authors:
            graph.follow(reader, author)
        timelines.rebuild(reader)
    tap = StreamTap([get_settings().tweets_table])
    fanout = _load_function("fanout").handler
    tweets.post(authors[0], "warm", None, [])
    for author in authors[1:]:
        tweets.post(author, "warm", None, [])
    fanout({"Records": tap.drain()}, Context())  # the authors' followers hashes are loaded
    posted = [int(tweets.post(authors[i % 5], f"t{i}", None, []).id) for i in range(20)]
    batch = {"Records": tap.drain()}

    # when the fan-out reader gets 20 new tweets as one batch
    with counted() as calls:
        assert fanout(batch, Context()) == {"batchItemFailures": []}

    # then: the reads in one round trip, the writes in one, the counters' cache in one, the
    # counters' marks for reconciliation in one; the counters in one transaction (and the
    # counts they replace, read once)
    assert calls["redis"] - 2 * calls["script_loads"] <= 4, calls
    assert calls["dynamodb"] <= 4, calls
    for reader in readers:
        home = redis.zrange(keys.home_timeline(reader), 0, -1)
        assert all(any(m.startswith(f"{t:019d}:") for m in home) for t in posted)


def test_the_registry_keeps_each_users_connections_for_a_batch_lookup(moto):
    registry = services.container().connections
    registry.add(7, "a", 0, 3600)
    registry.add(7, "b", 0, 3600)
    registry.add(8, "c", 0, 0)  # expired at once: its $disconnect never came
    registry.remove("a")
    assert registry.for_users([7, 8, 9]) == {7: ["b"], 8: [], 9: []}
    assert registry.for_user(7) == ["b"]
