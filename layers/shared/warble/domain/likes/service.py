"""Likes: like and unlike (idempotent), the tweets a user liked, and who liked a tweet.

A like is a conditional write of three items after a read of the tweet (warble.dal.likes),
so a repeat changes nothing; a like that lands just after its tweet's delete is removed by the
likes stream's cleanup (``orphans_removed``), so a like never outlives its tweet.
``like_count`` is not touched here: the counter consumer derives it from the likes table's
stream (``likes_counted``), one write per hot tweet per batch. A like of a retweet is a
like of its original, as the retweet stands for it.
"""

from __future__ import annotations

from warble.domain.accounts.answers import UserPage
from warble.domain.accounts.ports import Profiles
from warble.domain.blocks.ports import BlockedByAuthor
from warble.domain.counters.ports import Delta, tweet_counter
from warble.domain.likes.ports import LikeStore, TweetMissing, Tweets, UserPages
from warble.domain.pagination import decode_cursor, encode_cursor
from warble.domain.shared import IdGenerator
from warble.domain.tweets.answers import TweetPage
from warble.domain.tweets.ports import StoredTweet
from warble.errors import Blocked, NotFound
from warble.events import Liked, Unliked

MAX_ATTEMPTS = 5  # unlike retried when a racing like / unlike changed the edge under it


class LikeService:
    def __init__(
        self,
        store: LikeStore,
        tweets: Tweets,
        accounts: Profiles,
        graph: UserPages,
        ids: IdGenerator,
    ) -> None:
        self._store = store
        self._tweets = tweets
        self._accounts = accounts
        self._graph = graph
        self._ids = ids

    def _subject(self, tweet_id: int) -> StoredTweet:
        """The tweet a like acts on: the tweet itself, or a retweet's original. 404 if gone, or
        if its author is suspended."""
        tweet = self._tweets.load_shown(tweet_id)
        if tweet is not None and tweet.retweet_of is not None:
            tweet = self._tweets.load_shown(tweet.retweet_of)
        if tweet is None:
            raise NotFound("No such tweet.")
        return tweet

    def like(self, user_id: int, tweet_id: int) -> bool:
        tweet = self._subject(tweet_id)
        seq = self._ids.next_id()
        try:
            created = self._store.like(user_id, tweet.id, tweet.author_id, seq)
        except TweetMissing:
            # Deleted between the read and the write: the condition check wrote nothing.
            raise NotFound("No such tweet.") from None
        except BlockedByAuthor:
            raise Blocked("The author of this tweet blocks you.") from None
        if created:
            self._tweets.flags.liked(user_id, tweet.id, seq, present=True)
        return True

    def unlike(self, user_id: int, tweet_id: int) -> bool:
        tweet = self._subject(tweet_id)
        for _ in range(MAX_ATTEMPTS):
            edge = self._store.edge(user_id, tweet.id)
            if edge is None:
                return False
            if self._store.unlike(edge):
                self._tweets.flags.liked(user_id, tweet.id, edge.seq, present=False)
                return False
        return False  # still changing under us: the last unlike to land decides, as ever

    def liked_tweets(self, viewer: int, user_id: int, limit: int, cursor: str | None) -> TweetPage:
        """The tweets ``user_id`` liked, newest like first; deleted ones are left out."""
        self._accounts.profile(user_id)  # 404 for an unknown user
        kind = f"likes{user_id}"
        rows = self._store.liked_page(user_id, decode_cursor(kind, cursor), limit)
        rendered = self._tweets.show([(author, tid) for _, author, tid in rows], viewer)
        # The cursor pins the last like read, even if its tweet was dropped from the page.
        next_cursor = encode_cursor(kind, rows[-1][0]) if len(rows) >= limit else None
        return TweetPage(rendered, next_cursor)

    def likers(self, viewer: int, tweet_id: int, limit: int, cursor: str | None) -> UserPage:
        """Who liked the tweet, newest first, as Users carrying the viewer's relationship."""
        tweet = self._subject(tweet_id)
        kind = f"likers{tweet.id}"
        rows = self._store.likers_page(tweet.id, decode_cursor(kind, cursor), limit)
        next_cursor = encode_cursor(kind, rows[-1][0]) if len(rows) >= limit else None
        return self._graph.user_page(viewer, [uid for _, uid in rows], next_cursor)

    def orphans_removed(self, likes: list[Liked]) -> int:
        """The likes of a stream batch whose tweet is gone, unliked; how many. A like reads its
        tweet before its write, so it can commit just after the tweet's delete and after that
        delete's cleanup read the likers: this read comes after the commit, so it sees the
        delete. Idempotent: a like already gone, or unliked since, is skipped."""
        present = self._store.existing_tweets(like.tweet_id for like in likes)
        removed = 0
        for like in likes:
            if like.tweet_id in present:
                continue
            edge = self._store.edge(like.user_id, like.tweet_id)
            if edge is not None and self._store.unlike(edge):
                removed += 1
        return removed


def likes_counted(event: Liked | Unliked) -> list[Delta]:
    """A like counts once on its tweet while it exists."""
    amount = 1 if isinstance(event, Liked) else -1
    return [Delta(tweet_counter(event.tweet_id), "like_count", amount)]
