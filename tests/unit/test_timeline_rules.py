"""TimelineService's rules on in-memory stores: fan-out, celebrities merged on read, backfill on
follow, removal on unfollow and deletion, and a lost timeline rebuilt.

The stream consumers' part (``tweet_created``, ``followed`` ...) is called by each test where
the timeline consumer would call it.
"""

from __future__ import annotations

import pytest
from warble.domain.timelines.service import entry

from tests.unit.fakes import World

pytestmark = pytest.mark.unit


def follow(world: World, follower: int, followee: int) -> None:
    world.follow(follower, followee)
    world.timelines.followed(follower, followee)


def tweet(world: World, author: int, text: str = "hi") -> int:
    tweet_id = int(world.tweets.post(author, text, None, []).id)
    world.timelines.tweet_created(author, tweet_id)
    return tweet_id


def home_ids(world: World, viewer: int, limit: int = 50, cursor: str | None = None) -> list[int]:
    return [int(t.id) for t in world.timelines.home(viewer, limit, cursor).items]


def test_a_tweet_fans_out_to_its_followers_built_timelines_only(world: World):
    # given: bob has read his timeline (it is built), carol never has
    alice, bob, carol = world.user(), world.user(), world.user()
    follow(world, bob, alice)
    follow(world, carol, alice)
    assert home_ids(world, bob) == []
    # when
    posted = tweet(world, alice)
    # then
    assert world.timeline_store.home[bob] == {entry(alice, posted)}
    assert carol not in world.timeline_store.home  # rebuilt when she comes, not pushed to
    assert home_ids(world, carol) == [posted]  # ... and the rebuild finds it


def test_a_celebrity_is_not_fanned_out_but_merged_on_read_in_order():
    # given: a threshold of 2 followers; celeb has 3, dan has 1; bob follows both
    world = World(celebrity_followers=2)
    celeb, dan, bob = world.user(), world.user(), world.user()
    for fan in (bob, world.user(), world.user()):
        follow(world, fan, celeb)
    follow(world, bob, dan)
    assert home_ids(world, bob) == []
    # when: their tweets interleave in time
    posted = [tweet(world, author) for author in (celeb, dan, celeb, dan, celeb)]
    # then: nothing of celeb's was pushed, yet bob reads all five newest first
    assert all(celeb != int(e.split(":")[1]) for e in world.timeline_store.home[bob])
    assert home_ids(world, bob) == posted[::-1]
    # and pages split the merged list without repeats or gaps
    first = world.timelines.home(bob, 2, None)
    assert [int(t.id) for t in first.items] == posted[:-3:-1]
    rest = home_ids(world, bob, 10, first.next_cursor)
    assert rest == posted[-3::-1]


def test_following_backfills_the_followees_newest_tweets():
    # given: alice tweeted before bob followed her
    world = World(backfill=2)
    alice, bob = world.user(), world.user()
    older = [tweet(world, alice, f"t{i}") for i in range(3)]
    assert home_ids(world, bob) == []
    # when
    follow(world, bob, alice)
    # then: her two newest, in order
    assert home_ids(world, bob) == older[:0:-1]


def test_following_a_celebrity_backfills_nothing_but_reads_merge_them():
    world = World(celebrity_followers=1)
    celeb, bob = world.user(), world.user()
    follow(world, world.user(), celeb)
    follow(world, world.user(), celeb)
    earlier = tweet(world, celeb)
    assert home_ids(world, bob) == []
    follow(world, bob, celeb)
    assert world.timeline_store.home[bob] == set()
    assert home_ids(world, bob) == [earlier]


def test_unfollowing_removes_the_followees_tweets(world: World):
    from warble.events import Unfollowed

    from tests.unit.fakes import FakeBatch

    # given
    alice, carol, bob = world.user(), world.user(), world.user()
    follow(world, bob, alice)
    follow(world, bob, carol)
    assert home_ids(world, bob) == []
    theirs = [tweet(world, alice), tweet(world, carol), tweet(world, alice)]
    # when
    world.graph.unfollow(bob, alice)
    world.timelines.apply_stream([Unfollowed(bob, alice)], FakeBatch())
    # then
    assert home_ids(world, bob) == [theirs[1]]


def test_a_deleted_tweet_leaves_every_timeline(world: World):
    alice, bob = world.user(), world.user()
    follow(world, bob, alice)
    assert home_ids(world, bob) == [] and home_ids(world, alice) == []
    kept, gone = tweet(world, alice), tweet(world, alice)
    world.tweets.delete(alice, gone)
    world.timelines.tweet_deleted(alice, gone)
    assert home_ids(world, bob) == [kept] and home_ids(world, alice) == [kept]
    assert entry(alice, gone) not in world.timeline_store.recent[alice]


def test_a_redelivered_tweet_is_in_a_timeline_once(world: World):
    alice, bob = world.user(), world.user()
    follow(world, bob, alice)
    assert home_ids(world, bob) == []
    posted = tweet(world, alice)
    world.timelines.tweet_created(alice, posted)
    assert home_ids(world, bob) == [posted]


def test_a_lost_timeline_is_rebuilt_from_the_followed_and_own_tweets():
    # given: bob follows alice and a celebrity; his timeline was built, then evicted
    world = World(celebrity_followers=2)
    alice, celeb, bob, stranger = (world.user() for _ in range(4))
    follow(world, bob, alice)
    for fan in (bob, world.user(), world.user()):
        follow(world, fan, celeb)
    posted = [tweet(world, a) for a in (alice, celeb, bob, stranger, alice)]
    assert home_ids(world, bob) == [posted[4], posted[2], posted[1], posted[0]]
    # when
    del world.timeline_store.home[bob]
    world.timeline_store.recent.clear()  # the authors' recent sets are gone too
    # then: rebuilt from the tweets table, the celebrity still merged on read, not stored
    assert home_ids(world, bob) == [posted[4], posted[2], posted[1], posted[0]]
    stored = world.timeline_store.home[bob]
    assert stored == {entry(a, posted[i]) for i, a in ((0, alice), (2, bob), (4, alice))}


def test_a_stream_batch_applies_in_stream_order_with_followers_from_memory(world: World):
    from warble.events import Followed, TweetDeleted, TweetPosted, Unfollowed

    from tests.unit.fakes import FakeBatch

    # given: bob and carol follow alice; bob's timeline is built, alice has no followers hash
    alice, bob, carol = world.user(), world.user(), world.user()
    world.follow(bob, alice)
    world.follow(carol, alice)
    assert home_ids(world, bob) == []
    kept, gone = (int(world.tweets.post(alice, t, None, []).id) for t in ("kept", "gone"))
    # when: one batch posts both and deletes one (the followers hash is loaded once)
    world.timelines.apply_stream(
        [TweetPosted(kept, alice), TweetPosted(gone, alice), TweetDeleted(gone, alice)],
        FakeBatch(),
    )
    # then
    assert world.timeline_store.home[bob] == {entry(alice, kept)}
    assert world.followers.rebuilds == [alice]
    # when: bob unfollows and follows again in one batch, and a new tweet follows
    world.timelines.apply_stream(
        [Unfollowed(bob, alice, seq=5), Followed(bob, alice, seq=9)], FakeBatch()
    )
    later = int(world.tweets.post(alice, "later", None, []).id)
    world.timelines.apply_stream([TweetPosted(later, alice)], FakeBatch())
    # then: the follow stands (backfilled), and the followers hash served the fan-out
    assert home_ids(world, bob) == [later, kept]
    assert world.followers.rebuilds == [alice]


def test_a_followee_crossing_the_threshold_drops_its_followers_celebrity_lists():
    from warble.events import TweetPosted

    from tests.unit.fakes import FakeBatch

    # given: a threshold of 2 followers; dan has 2, bob and carol follow him, bob has read
    world = World(celebrity_followers=2)
    dan, bob, carol = world.user(), world.user(), world.user()
    follow(world, bob, dan)
    follow(world, carol, dan)
    assert home_ids(world, bob) == []

    def post(text: str) -> int:
        tweet_id = int(world.tweets.post(dan, text, None, []).id)
        world.timelines.apply_stream([TweetPosted(tweet_id, dan)], FakeBatch())
        return tweet_id

    first = post("first")  # his first marked tweet: fanned out, nothing dropped
    assert world.timeline_store.marks[dan] is False
    assert world.timeline_store.celebrities[bob] == []  # the list bob's read kept
    # when: a third follower makes him a celebrity, and he tweets
    follow(world, world.user(), dan)
    world.timeline_store.celebrities[bob] = []  # as bob's list was before the follow
    second = post("second")
    # then: not pushed, bob's list dropped, so his next read merges dan's tweet
    assert world.timeline_store.marks[dan] is True
    assert bob not in world.timeline_store.celebrities
    assert entry(dan, second) not in world.timeline_store.home[bob]
    assert home_ids(world, bob) == [second, first]
    assert world.timeline_store.celebrities[bob] == [dan]
    # when: he drops back to 2 followers and tweets: pushed, the lists dropped again
    from warble.events import Unfollowed

    world.graph.unfollow(carol, dan)
    world.deliver(Unfollowed(follower=carol, followee=dan))
    third = post("third")
    assert world.timeline_store.marks[dan] is False
    assert bob not in world.timeline_store.celebrities
    assert entry(dan, third) in world.timeline_store.home[bob]
    # (dan's second tweet, never pushed, is no longer merged: as when any account drops below)
    assert home_ids(world, bob) == [third, first]
    assert world.timeline_store.celebrities[bob] == []


def test_an_unmarked_author_is_marked_without_dropping_any_list():
    from warble.events import TweetPosted

    from tests.unit.fakes import FakeBatch

    world = World(celebrity_followers=1)
    celeb, bob, carol = world.user(), world.user(), world.user()
    follow(world, bob, celeb)
    follow(world, carol, celeb)
    assert home_ids(world, bob) == []
    assert world.timeline_store.celebrities[bob] == [celeb]
    tweet_id = int(world.tweets.post(celeb, "hi", None, []).id)
    world.timelines.apply_stream([TweetPosted(tweet_id, celeb)], FakeBatch())
    assert world.timeline_store.marks[celeb] is True
    assert world.timeline_store.celebrities[bob] == [celeb]  # kept: nothing crossed
