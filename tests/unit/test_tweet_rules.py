"""TweetService's rules on in-memory stores: posting, replies, retweets, deletion and purge."""

from __future__ import annotations

import pytest
from warble.domain.shared import UserSummary
from warble.domain.tweets.service import TOMBSTONE
from warble.errors import Forbidden, NotFound, ValidationFailed
from warble.events import Liked, TweetPosted
from warble.http.render import render

from tests.unit.fakes import World

pytestmark = pytest.mark.unit


def test_a_posted_tweet_is_stored_and_rendered_for_its_author(world: World):
    # given
    alice = world.user("alice")
    photo = world.ready_media(alice, "a cat")
    # when
    tweet = world.tweets.post(alice, "hello\u0301 world", None, [photo])
    # then
    stored = world.tweet_store.tweets[int(tweet.id)]
    assert stored.author_id == alice and stored.text == "hell\u00f3 world"  # NFC
    assert tweet.author == UserSummary(str(alice), "alice", "alice")
    assert tweet.text == "hell\u00f3 world" and tweet.media_ids == [photo]
    assert [(m.id, m.alt_text, m.status) for m in tweet.media] == [(photo, "a cat", "ready")]
    assert tweet.media[0].url == f"https://cdn.example/media/{photo}/t.png"
    assert (tweet.reply_to, tweet.retweet_of) == (None, None)
    assert tweet.like_count == 0 and not tweet.liked_by_me and not tweet.retweeted_by_me
    # read back (its media's answer then comes from the cached tweet): the same bytes
    assert render(world.tweets.get(alice, int(tweet.id))) == render(tweet)


@pytest.mark.parametrize("text", ["", "   \n", "x" * 281])
def test_text_outside_the_rules_is_refused_and_nothing_written(world: World, text: str):
    alice = world.user()
    with pytest.raises(ValidationFailed):
        world.tweets.post(alice, text, None, [])
    assert world.tweet_store.tweets == {}


def test_a_reply_names_its_parent_and_its_author(world: World):
    # given
    alice, bob = world.user(), world.user()
    parent = world.tweets.post(alice, "first", None, [])
    # when
    reply = world.tweets.post(bob, "answer", int(parent.id), [])
    # then
    assert reply.reply_to == parent.id
    assert world.tweet_store.tweets[int(reply.id)].reply_to_author == alice
    page = world.tweets.replies(alice, int(parent.id), 20, None)
    assert [t.id for t in page.items] == [reply.id]


def test_a_reply_to_a_missing_parent_is_not_found_and_writes_nothing(world: World):
    alice = world.user()
    with pytest.raises(NotFound):
        world.tweets.post(alice, "into the void", 999_999, [])
    assert world.tweet_store.tweets == {}


def test_a_reply_to_a_parent_deleted_after_the_read_is_not_found(world: World):
    # given: the parent's author is read, then the parent goes before the write
    alice, bob = world.user(), world.user()
    parent = world.tweets.post(alice, "first", None, [])
    real_author_of = world.tweet_store.author_of

    def author_then_delete(tweet_id: int) -> int | None:
        author = real_author_of(tweet_id)
        world.tweet_store.tweets.pop(tweet_id, None)
        return author

    world.tweet_store.author_of = author_then_delete  # type: ignore[method-assign]
    # when / then: the store's atomic parent check refuses it
    with pytest.raises(NotFound):
        world.tweets.post(bob, "too late", int(parent.id), [])
    assert world.tweet_store.tweets == {}


def test_retweeting_twice_gives_the_same_retweet(world: World):
    # given
    alice, bob = world.user(), world.user()
    original = world.tweets.post(alice, "worth sharing", None, [])
    # when
    first, created = world.tweets.retweet(bob, int(original.id))
    again, created_again = world.tweets.retweet(bob, int(original.id))
    # then
    assert (created, created_again) == (True, False)
    assert again.id == first.id
    assert first.retweet_of.id == original.id and first.retweeted_by_me is True
    assert world.tweet_store.count_retweets(int(original.id)) == 1


def test_retweeting_a_retweet_retweets_its_original(world: World):
    alice, bob, carol = world.user(), world.user(), world.user()
    original = world.tweets.post(alice, "origin", None, [])
    retweet, _ = world.tweets.retweet(bob, int(original.id))
    mine, created = world.tweets.retweet(carol, int(retweet.id))
    assert created and mine.retweet_of.id == original.id


def test_a_retweet_racing_another_returns_the_one_that_won(world: World):
    # given: bob's other request wrote its retweet between this one's read and its write
    alice, bob = world.user(), world.user()
    original = world.tweets.post(alice, "race", None, [])
    other, _ = world.tweets.retweet(bob, int(original.id))
    world.tweet_store.retweet_by = lambda user, tweet: None  # type: ignore[method-assign]
    # when
    found, created = world.tweets.retweet(bob, int(original.id))
    # then: AlreadyRetweeted from the store's condition, answered with the existing one
    assert (found.id, created) == (other.id, False)
    assert world.tweet_store.count_retweets(int(original.id)) == 1


def test_retweeting_a_missing_tweet_is_not_found(world: World):
    with pytest.raises(NotFound):
        world.tweets.retweet(world.user(), 12345)


def test_only_the_author_may_delete_a_tweet(world: World):
    # given
    alice, bob = world.user(), world.user()
    tweet = world.tweets.post(alice, "mine", None, [])
    # when / then
    with pytest.raises(Forbidden):
        world.tweets.delete(bob, int(tweet.id))
    assert int(tweet.id) in world.tweet_store.tweets
    world.tweets.delete(alice, int(tweet.id))
    assert world.tweet_store.tweets == {}
    with pytest.raises(NotFound):
        world.tweets.delete(alice, int(tweet.id))


def test_a_deleted_tweet_is_tombstoned_and_no_late_fill_brings_it_back(world: World):
    # given: a reader loaded the tweet into the cache
    alice = world.user()
    tweet_id = int(world.tweets.post(alice, "soon gone", None, []).id)
    assert world.tweets.load_one(tweet_id) is not None
    stale = world.tweet_store.tweets[tweet_id]
    # when
    world.tweets.delete(alice, tweet_id)
    world.tweets.prime([stale])  # a slow reader's copy, read before the delete
    # then
    assert world.tweet_cache.get(tweet_id) == TOMBSTONE
    assert world.tweets.load_one(tweet_id) is None
    with pytest.raises(NotFound):
        world.tweets.get(alice, tweet_id)


def test_unretweet_is_idempotent_but_an_unknown_tweet_is_not_found(world: World):
    alice, bob = world.user(), world.user()
    original = int(world.tweets.post(alice, "x", None, []).id)
    world.tweets.retweet(bob, original)
    world.tweets.unretweet(bob, original)
    world.tweets.unretweet(bob, original)
    assert world.tweet_store.retweet_by(bob, original) is None
    with pytest.raises(NotFound):
        world.tweets.unretweet(bob, 4242)


def test_purge_deletes_a_deleted_tweets_retweets_and_likes(world: World):
    # given: a tweet retweeted by two and liked by three, then deleted by its author
    alice, bob, carol, dave = (world.user() for _ in range(4))
    original = int(world.tweets.post(alice, "viral", None, []).id)
    retweets = [int(world.tweets.retweet(u, original)[0].id) for u in (bob, carol)]
    for user in (bob, carol, dave):
        world.likes.like(user, original)
    other = int(world.tweets.post(dave, "unrelated", None, []).id)
    world.likes.like(alice, other)
    world.tweets.delete(alice, original)
    # when: the cleanup consumer sees the deletion, twice (at-least-once delivery)
    deleted = world.tweets.purge(original)
    again = world.tweets.purge(original)
    # then
    assert (deleted, again) == (5, 0)
    assert all(rt not in world.tweet_store.tweets for rt in retweets)
    assert all(world.tweets.load_one(rt) is None for rt in retweets)  # tombstoned
    assert world.like_store.count_likers(original) == 0
    assert world.tweet_store.retweet_by(bob, original) is None
    assert world.like_store.edge(alice, other) is not None  # others' likes stay


def test_purge_deletes_likes_in_chunks(world: World):
    alice = world.user()
    tweet = int(world.tweets.post(alice, "popular", None, []).id)
    fans = [world.user() for _ in range(250)]
    for fan in fans:
        world.likes.like(fan, tweet)
    chunks: list[int] = []
    real_delete = world.like_store.delete_likes
    world.like_store.delete_likes = lambda t, likes: (  # type: ignore[method-assign]
        chunks.append(len(likes)),
        real_delete(t, likes),
    )
    assert world.tweets.purge(tweet) == 250
    assert chunks == [100, 100, 50]


def test_a_like_whose_tweet_is_gone_is_unliked_by_the_stream_cleanup(world: World):
    # given: two likes, then one tweet deleted under its like (committed after its purge)
    alice, bob = world.user(), world.user()
    gone = int(world.tweets.post(alice, "going", None, []).id)
    kept = int(world.tweets.post(alice, "staying", None, []).id)
    world.likes.like(bob, gone)
    world.likes.like(bob, kept)
    stored = world.tweet_store.tweets.pop(gone)
    likes = [
        Liked(bob, tweet, alice, world.like_store.likes[(bob, tweet)].seq) for tweet in (gone, kept)
    ]
    # when: the cleanup sees the likes' stream records, twice (at-least-once delivery)
    removed = world.likes.orphans_removed(likes)
    again = world.likes.orphans_removed(likes)
    # then: the like of the gone tweet is unliked once; the other stays
    assert (removed, again) == (1, 0)
    assert world.like_store.edge(bob, stored.id) is None
    assert world.like_store.edge(bob, kept) is not None


def test_a_page_carries_counts_and_the_viewers_flags(world: World):
    # given: a like and a retweet, counted by the counter consumer
    alice, bob = world.user(), world.user()
    tweet = int(world.tweets.post(alice, "count me", None, []).id)
    assert world.tweets.get(bob, tweet).like_count == 0  # cached now
    world.likes.like(bob, tweet)
    retweet = int(world.tweets.retweet(bob, tweet)[0].id)
    world.deliver(
        Liked(user_id=bob, tweet_id=tweet, author_id=alice),
        TweetPosted(retweet, bob, retweet_of=tweet, retweet_of_author=alice),
    )
    # when
    seen_by_bob = world.tweets.get(bob, tweet)
    seen_by_alice = world.tweets.get(alice, tweet)
    # then
    assert (seen_by_bob.like_count, seen_by_bob.retweet_count) == (1, 1)
    assert (seen_by_bob.liked_by_me, seen_by_bob.retweeted_by_me) == (True, True)
    assert (seen_by_alice.liked_by_me, seen_by_alice.retweeted_by_me) == (False, False)
