"""Muted words against real PostgreSQL, Redis and moto (API.md "Reports and moderation"): the
list's row and its cache, and the reads it filters from the viewer's next request: the home
timeline, a hashtag page, a replies list, mention and reply notifications and their count."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from warble import keys, services
from warble.events import TweetPosted
from warble.settings import get_settings

from tests.integration.test_blocks import World
from tests.integration.test_notifications import deliver_twice_shuffled
from tests.integration.test_sample_events import _load_function
from tests.support.streams import StreamTap

pytestmark = [pytest.mark.integration, pytest.mark.redis]


@pytest.fixture
def world(accounts, moto, redis) -> Iterator[World]:
    yield World()


def _home(viewer: int) -> list[str]:
    return [t.text for t in services.timelines().home(viewer, 20, None).items]


def test_the_list_is_one_row_cached_under_the_users_tag_and_dropped_on_replace(world, redis):
    alice = world.user("alice")
    muted = services.muted_words()
    assert muted.words(alice).words == []
    assert muted.replace(alice, [" spoiler ", "#Finale"]).words == ["spoiler", "#Finale"]
    _home(alice)  # a read fills the cache
    key = keys.muted_words(alice).value
    assert key.startswith(f"{{u:{alice}}}") and redis.get(key) is not None
    muted.replace(alice, ["other"])
    assert redis.get(key) is None  # dropped: the next read takes the new list
    assert muted.words(alice).words == ["other"]
    muted.replace(alice, [])
    assert muted.words(alice).words == []


def test_home_hashtag_page_and_replies_leave_out_muted_tweets_but_not_the_viewers(world):
    alice, bob = world.user("alice"), world.user("bob")
    tweets, tag = services.tweets(), f"t{uuid.uuid4().hex[:8]}"
    services.graph().follow(alice, bob)
    world.settle()
    original = tweets.post(bob, f"Big SPOILER! #{tag}", None, [])
    plain = tweets.post(bob, f"no spoilers #{tag}", None, [])
    tweets.retweet(bob, int(original.id))
    mine = tweets.post(alice, f"my spoiler #{tag}", None, [])
    reply = tweets.post(bob, "the spoiler is...", int(mine.id), [])
    world.settle()
    services.hashtags().tweets_changed(
        [TweetPosted(tweet_id=int(t.id), author_id=int(t.author.id), hashtags=(tag,))
         for t in (original, plain, mine)]
    )  # fmt: skip
    assert len(_home(alice)) == 5
    # when
    services.muted_words().replace(alice, ["spoiler"])
    # then: at her next request
    assert _home(alice) == [mine.text, plain.text]  # the retweet of the muted tweet went too
    page = services.hashtags().timeline(alice, tag, 20, None)
    assert [t.id for t in page.items] == [mine.id, plain.id]
    assert tweets.replies(alice, int(mine.id), 20, None).items == []
    assert len(tweets.replies(bob, int(mine.id), 20, None).items) == 1  # bob mutes nothing
    # and a #tag mutes the hashtag
    services.muted_words().replace(alice, [f"#{tag.upper()}"])
    assert [t.id for t in services.hashtags().timeline(alice, tag, 20, None).items] == [mine.id]
    assert _home(alice) == [reply.text, mine.text]


def test_mentions_and_replies_holding_a_muted_word_are_not_listed_nor_counted(accounts, moto):
    s = get_settings()
    tap = StreamTap([s.graph_table, s.tweets_table, s.likes_table])
    consumer = _load_function("reactions").handler
    alice, bob = (
        int(accounts.signup(n, f"{n}@example.com", "password1", None, "").user["id"])
        for n in ("alice", "bob")
    )
    services.muted_words().replace(alice, ["Spoiler"])
    tweets = services.tweets()
    original = int(tweets.post(alice, "my post", None, []).id)
    tweets.post(bob, "spoiler: it ends", original, [])
    tweets.post(bob, "@alice SPOILER ahead", None, [])
    kept = tweets.post(bob, "@alice nothing to hide", None, [])
    tweets.post(bob, "a fine reply", original, [])
    deliver_twice_shuffled(consumer, tap.drain())
    notifications = services.notifications()
    page = notifications.page(alice, [], 100, None)
    assert sorted(n.type for n in page.items) == ["mention", "reply"]
    assert {n.tweet_id for n in page.items if n.type == "mention"} == {kept.id}
    counts = notifications.counts(alice)
    assert (counts.mention, counts.reply) == (1, 1)


def test_the_list_goes_with_the_account(accounts, moto, redis):
    issued = accounts.signup("gone", "gone@example.com", "password1", None, "")
    user_id = int(issued.user["id"])
    services.muted_words().replace(user_id, ["spoiler"])
    accounts.delete_account(accounts.require_token(issued.token), "password1")
    # the row went in the users row's transaction (ON DELETE CASCADE)
    assert services.container().stores.muted_words().words(user_id) == []
