"""What likes need of their store (``warble.dal.likes``), of tweets and of the follow graph: the
stored like, and its errors."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from warble.domain.accounts.answers import UserPage
from warble.domain.tweets.answers import TweetAnswer
from warble.domain.tweets.ports import StoredTweet


@dataclass(frozen=True)
class Like:
    """A like as stored: ``seq`` orders it in both time lists; ``shards`` is how its tweet's
    likers list was spread when it was stored, which the store needs to find its item there
    (0: stored before the list was spread)."""

    user_id: int
    tweet_id: int
    seq: int
    author_id: int
    shards: int = 0


class Liker(NamedTuple):
    """One of a tweet's likers as its likers list holds them (``shards`` as in ``Like``)."""

    seq: int
    user_id: int
    shards: int = 0


class LikeStore(Protocol):
    def edge(self, user_id: int, tweet_id: int) -> Like | None: ...
    def like(self, user_id: int, tweet_id: int, author_id: int, seq: int) -> bool: ...
    def unlike(self, like: Like) -> bool: ...
    def liked_page(
        self, user_id: int, before_seq: int | None, limit: int
    ) -> list[tuple[int, int, int]]: ...
    def likers_page(
        self, tweet_id: int, before_seq: int | None, limit: int
    ) -> list[tuple[int, int]]: ...
    def count_likers(self, tweet_id: int) -> int: ...
    def all_likers(self, tweet_id: int) -> Iterator[Liker]: ...
    def delete_likes(self, tweet_id: int, likes: list[Liker]) -> None: ...
    def existing_tweets(self, tweet_ids: Iterable[int]) -> set[int]: ...
    def edges(self) -> Iterator[tuple[int, int]]: ...
    def viewer_flags(self, viewer: int, tweet_ids: list[int]) -> tuple[set[int], set[int]]: ...
    def recent_likes(self, user_id: int, limit: int) -> tuple[dict[int, int], int]: ...


class TweetMissing(Exception):
    """The tweet to like does not exist (or was deleted a moment ago)."""


class LikeMarks(Protocol):
    """The viewer's ``liked_by_me`` held in memory (``ViewerFlags``), changed after a commit."""

    def liked(self, user_id: int, tweet_id: int, seq: int, present: bool) -> None: ...


class Tweets(Protocol):
    """What likes need of tweets (``TweetService``): the tweet a like acts on (none of a
    suspended author's), liked tweets shown to a viewer, and the liked flags it keeps."""

    @property
    def flags(self) -> LikeMarks: ...
    def load_shown(self, tweet_id: int) -> StoredTweet | None: ...
    def show(self, pairs: list[tuple[int, int]], viewer: int) -> list[TweetAnswer]: ...


class UserPages(Protocol):
    """Users as a viewer sees them, a page at a time (``GraphService.user_page``)."""

    def user_page(self, viewer: int, user_ids: list[int], next_cursor: str | None) -> UserPage: ...
