"""Hot keys held in the function (warble.dal.hot, HOT_KEY_CACHE_MS): the system list and a
celebrity's recent tweets are read once per window by a container however often its readers
poll, and the counts and pages are those read without it."""

from __future__ import annotations

from collections import Counter

import pytest
from warble import keys, services
from warble.dal import redis as redis_dal
from warble.settings import get_settings

from tests.integration.test_notifications import configure, user
from tests.support.streams import StreamTap

pytestmark = [pytest.mark.integration, pytest.mark.redis]


@pytest.fixture
def tap(accounts, moto):
    s = get_settings()
    return StreamTap([s.graph_table, s.tweets_table, s.likes_table])


def _reads(client, calls: Counter, *others):
    """Count each key the container's pipelines and batches name (single node and cluster), on
    ``client`` and on ``others`` (the held keys' reader of the shards' replicas)."""
    originals = [(c, c.pipeline) for c in (client, *others)]
    original_send = redis_dal.send_pipelined

    def counting(original):
        def pipeline(*args, **kwargs):
            pipe = original(*args, **kwargs)
            execute = pipe.execute

            def counted(*a, **k):
                # a cluster pipeline (redis-py 8) queues PipelineCommands in its strategy
                strategy = getattr(pipe, "_execution_strategy", None)
                for command in pipe.command_stack or getattr(strategy, "command_queue", []):
                    args = command.args if hasattr(command, "args") else command[0]
                    calls[str(args[1])] += 1
                return execute(*a, **k)

            pipe.execute = counted
            return pipe

        return pipeline

    def sent(target, commands):
        for command in commands:
            calls[str(command[1])] += 1
        return original_send(target, commands)

    for c, original in originals:
        c.pipeline = counting(original)
    redis_dal.send_pipelined = sent

    def restore() -> None:
        for c, original in originals:
            c.pipeline = original
        redis_dal.send_pipelined = original_send

    return restore


def test_hot_keys_are_read_once_a_window_and_answer_the_same(
    accounts, moto, redis, monkeypatch, tap
):
    # A window longer than the test: every read after the first is the container's copy.
    configure(monkeypatch, CELEBRITY_FOLLOWERS="1", HOT_KEY_CACHE_MS="600000",
              ADMIN_USERNAMES="warble_admin")  # fmt: skip
    me, friend, celebrity, other = (
        user(services.accounts(), n) for n in ("me", "friend", "celeb", "other")
    )
    admin, _ = services.accounts().create_admin("warble_admin", "admin@example.com", "password1")
    graph, tweets = services.graph(), services.tweets()
    graph.follow(me, friend)
    graph.follow(me, celebrity)
    graph.follow(other, celebrity)
    services.container().count_batch({"Records": tap.drain()})
    notifications, timelines = services.notifications(), services.timelines()
    timelines.rebuild(me)
    notifications.counts(me)
    posted = [int(tweets.post(a, "news", None, []).id) for a in (friend, celebrity)]
    timelines.tweet_created(friend, posted[0])
    timelines.tweet_created(celebrity, posted[1])
    notifications.post_system(admin, "Hello", "Welcome")

    calls: Counter = Counter()
    container = services.container()
    held_reader = [container.hot.reader] if container.hot and container.hot.reader else []
    restore = _reads(container.redis, calls, *held_reader)
    try:
        for _ in range(20):
            counts = notifications.counts(me)
            page = timelines.home(me, 20, None)
    finally:
        restore()
    assert (counts.home, counts.system) == (2, 1)
    assert [int(t.id) for t in page.items] == posted[::-1]
    hot = [keys.system_notifications(), keys.celebrity_recent(celebrity)]
    assert [calls[key] for key in hot] == [1, 1], calls  # 20 polls and 20 pages: one read each

    # This container's own writes drop its copies: a new tweet and notification count at once.
    newer = int(tweets.post(celebrity, "more news", None, []).id)
    timelines.tweet_created(celebrity, newer)
    notifications.post_system(admin, "Again", "A second one")
    counts = notifications.counts(me)
    assert (counts.home, counts.system) == (3, 2)
    assert int(timelines.home(me, 20, None).items[0].id) == newer


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_held_celebrity_sets_follow_the_log_and_cost_one_pipeline_a_window(redis):
    """Two containers' stores over one Redis: what one writes to a celebrity's set, the other
    sees once its window has passed, from the log (one pipeline of three reads), without
    reading the set again; a set filled afresh is read again; a gap drops every held set."""
    from warble.dal.hot import HotCache
    from warble.dal.timelines import TimelineStore

    clock = Clock()
    writer = TimelineStore(redis, cap=800, recent_cap=2, ttl_seconds=60)
    reader = TimelineStore(redis, cap=800, recent_cap=2, ttl_seconds=60,
                           hot=HotCache(1.0, clock))  # fmt: skip
    quiet, loud = 9_000_001, 9_000_002

    def at(author: int, n: int) -> str:
        return f"{author * 10 + n:019d}:{author}"

    for author in (quiet, loud):
        writer.fill_recent(author, [at(author, 0), at(author, 1)], celebrity=True)
    first = reader.recent_pages([quiet, loud], None, 10, celebrity=True)
    assert first == {a: [at(a, 1), at(a, 0)] for a in (quiet, loud)}

    writer.remember_recent(loud, at(loud, 2), celebrity=True)  # the cap of 2 drops at(loud, 0)
    writer.forget_recent(loud, at(loud, 1))
    calls: Counter = Counter()
    restore = _reads(redis, calls)
    try:
        assert reader.recent_pages([quiet, loud], None, 10, celebrity=True) == first
        assert not calls  # within the window: the held copies, no command
        clock.now += 1.0
        after = reader.recent_pages([quiet, loud], None, 10, celebrity=True)
    finally:
        restore()
    assert after == {quiet: first[quiet], loud: [at(loud, 2)]}
    assert after[loud] == writer.recent_pages([loud], None, 10, celebrity=True)[loud]
    # The log's pipeline only: neither set read again.
    assert calls[keys.celebrity_seq()] == 1 and calls[keys.celebrity_log()] == 2
    assert calls[keys.celebrity_recent(loud)] == calls[keys.celebrity_recent(quiet)] == 0

    # A set filled afresh (after its celebrity crossed the threshold): read again.
    writer.fill_recent(quiet, [at(quiet, 5)], celebrity=True)
    clock.now += 1.0
    assert reader.recent_pages([quiet], None, 10, celebrity=True)[quiet][0] == at(quiet, 5)

    # The log keeps no change longer than LOG_KEPT_MS, and goes with its last change's age.
    from warble.dal.hot import LOG_KEPT_MS

    assert 0 < redis.pttl(keys.celebrity_log()) <= LOG_KEPT_MS
    # Its changes expired unseen (a container idle past them): every held set is read again.
    redis.delete(keys.celebrity_log())
    redis.incrby(keys.celebrity_seq(), 1)
    redis.zadd(keys.celebrity_recent(quiet), {at(quiet, 7): 0})  # a change it did not see
    clock.now += 1.0
    assert reader.recent_pages([quiet], None, 10, celebrity=True)[quiet][0] == at(quiet, 7)

    # A gap (the log trimmed past this container's place) drops every held set.
    redis.delete(keys.celebrity_log())
    redis.incrby(keys.celebrity_seq(), 5)
    redis.zadd(keys.celebrity_log(), {"999999 drop x": 10**9})
    redis.zadd(keys.celebrity_recent(quiet), {at(quiet, 8): 0})  # a change the log lost
    clock.now += 1.0
    assert reader.recent_pages([quiet], None, 10, celebrity=True)[quiet][0] == at(quiet, 8)
