"""Hashtag timelines (DynamoDB on moto) and trends (Redis, also on the 3-node cluster): exact
counts, the window, hot-tag shards, and the real ReactionsConsumerFunction under a poller that
crashes and redelivers."""

from __future__ import annotations

import uuid

import pytest
from warble import clock, services
from warble.dal.hashtags import RedisTrends
from warble.domain.hashtags.ports import TagUse
from warble.domain.hashtags.service import SPLIT_PER_MINUTE, WINDOW_MS
from warble.events import TweetDeleted, TweetPosted

from tests.support.streams import reader_pollers

pytestmark = [pytest.mark.integration, pytest.mark.redis]

NOW = 1_800_000_000_000


@pytest.fixture
def reactions(moto, accounts, redis_backend):
    """The real ReactionsConsumerFunction (its hashtags group), every batch delivered twice."""
    with reader_pollers(moto, "ReactionsConsumerFunction") as pollers:
        yield pollers


def use(tag: str, tweet: int, author: int) -> TagUse:
    return TagUse(tag, tweet, author)


def test_trends_count_authors_and_uses_exactly_and_forget_what_leaves(redis):
    trends = RedisTrends(services.container().redis, WINDOW_MS)
    t0 = NOW - 1000
    added = [(use("wide", 1, 10), t0), (use("wide", 2, 11), t0), (use("wide", 3, 11), t0),
             (use("solo", 4, 12), t0), (use("solo", 5, 12), t0), (use("solo", 6, 12), t0),
             (use("pair", 7, 13), t0), (use("pair", 8, 14), t0)]  # fmt: skip
    trends.apply(added, [], NOW)
    trends.apply(added, [], NOW)  # a redelivered batch counts nothing twice
    # one author repeating a tag never trends; by authors, then uses
    assert trends.top(NOW, 10) == [("wide", 3, 2), ("pair", 2, 2)]
    trends.apply([], [use("wide", 2, 11), use("wide", 99, 11)], NOW)  # 99: never counted
    assert trends.top(NOW, 10) == [("wide", 2, 2), ("pair", 2, 2)]
    trends.apply([], [use("wide", 3, 11)], NOW)  # author 11's last use of it: one author left
    assert trends.top(NOW, 10) == [("pair", 2, 2)]
    assert trends.forget_author(14, NOW) == 1
    assert trends.top(NOW, 10) == []


def test_trends_keep_the_last_hour_only(redis):
    trends = RedisTrends(services.container().redis, WINDOW_MS)
    old, new = NOW - WINDOW_MS - 1, NOW - 10
    trends.apply([(use("late", 1, 1), old), (use("late", 2, 2), old)], [], NOW)
    assert trends.top(NOW, 10) == []  # older than the window when they arrive: not counted
    trends.apply([(use("hour", 3, 1), new), (use("hour", 4, 2), new)], [], NOW)
    assert trends.top(NOW, 10) == [("hour", 2, 2)]
    assert trends.top(new + WINDOW_MS + 1, 10) == []  # an hour on, they expired
    assert redis.hlen("{trends}:uses") == 0 and redis.zcard("{trends}:window") == 0


def _posted(tweet: int, author: int, *tags: str) -> TweetPosted:
    return TweetPosted(tweet_id=tweet, author_id=author, hashtags=tags)


def _tag(prefix: str) -> str:
    # moto's tables outlive a test (and each test runs on one node and on the cluster)
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def test_a_hot_tag_splits_its_writes_and_a_page_merges_them(moto, accounts, redis):
    hot = _tag("hot")
    service = services.hashtags()
    index = services.container().hashtags._index
    author = accounts.signup("hot", "hot@example.com", "password1", None, "").user["id"]
    first = [int(services.tweets().post(author, f"#{hot} {n}", None, []).id) for n in range(3)]
    service.tweets_changed([_posted(t, author, hot) for t in first])
    assert index.route({hot: 0}, clock.epoch_ms())[hot][0] == 1
    # A minute with more uses than two shards take: the next batch writes over four.
    index.route({hot: 2 * SPLIT_PER_MINUTE}, clock.epoch_ms())
    later = [int(services.tweets().post(author, f"#{hot} {n}", None, []).id) for n in range(12)]
    service.tweets_changed([_posted(t, author, hot) for t in later])
    assert index.route({hot: 0}, clock.epoch_ms())[hot][0] == 4
    page = service.timeline(author, hot.upper(), 100, None)
    assert [int(t.id) for t in page.items] == sorted(first + later, reverse=True)
    # Deletes find each entry, written before or after the split.
    gone = first[:2] + later[:5]
    service.tweets_changed(
        [TweetDeleted(tweet_id=t, author_id=author, hashtags=(hot,)) for t in gone]
    )
    left = [e[1] for e in index.page(hot, 4, None, 100)]
    assert left == sorted(set(first + later) - set(gone), reverse=True)
    # Paging across shards: no repeat, no gap.
    seen, cursor = [], None
    while True:
        page = service.timeline(author, hot, 3, cursor)
        seen += [int(t.id) for t in page.items]
        if not (cursor := page.next_cursor):
            break
    assert seen == left


def test_a_batch_posted_then_deleted_writes_only_the_delete(moto, accounts, redis):
    fold = _tag("fold")
    service = services.hashtags()
    author = accounts.signup("fold", "fold@example.com", "password1", None, "").user["id"]
    tweet = int(services.tweets().post(author, f"#{fold}", None, []).id)
    deleted = TweetDeleted(tweet_id=tweet, author_id=author, hashtags=(fold,))
    assert service.tweets_changed([_posted(tweet, author, fold), deleted]) == 1  # the delete
    assert service.timeline(author, fold, 10, None).items == []


def test_crashes_and_redelivery_leave_timelines_and_trends_exact(reactions, accounts, redis):
    redo = _tag("redo")
    authors = [
        accounts.signup(f"ht{n}", f"ht{n}@example.com", "password1", None, "").user["id"]
        for n in range(3)
    ]
    reactions.inject_crash("ReactionsConsumerFunction", times=4)
    posted = [
        int(services.tweets().post(authors[n % 3], f"#{redo.upper()} {n} #other{n}", None, []).id)
        for n in range(21)
    ]
    assert reactions.wait_idle(30)
    trends = services.hashtags().trends().items
    assert [(t.tag, t.tweet_count, t.author_count) for t in trends] == [(redo, 21, 3)]
    page = services.hashtags().timeline(authors[0], redo, 100, None)
    assert [int(t.id) for t in page.items] == sorted(posted, reverse=True)

    reactions.inject_crash("ReactionsConsumerFunction", times=2)
    for n, tweet in enumerate(posted[:7]):
        services.tweets().delete(authors[n % 3], tweet)
    assert reactions.wait_idle(30)
    trends = services.hashtags().trends().items
    assert [(t.tag, t.tweet_count, t.author_count) for t in trends] == [(redo, 14, 3)]
    index = services.container().hashtags._index
    assert [e[1] for e in index.page(redo, 1, None, 100)] == sorted(posted[7:], reverse=True)
