"""What hashtag timelines and trends need: their two stores (``warble.dal.hashtags``), and, as
narrow Protocols, what they ask of tweets (hydration) and of blocks (the viewer's Shield)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from warble.domain.blocks.ports import Shield
from warble.domain.shared import Later, ReadBatch
from warble.domain.tweets.answers import TweetAnswer


@dataclass(frozen=True)
class TagUse:
    """One tweet's use of one tag: a hashtag timeline's entry, and one count of a trend."""

    tag: str
    tweet_id: int
    author_id: int


class HashtagIndex(Protocol):
    """Each tag's timeline in DynamoDB (tag partition, Snowflake sort key), sharded when hot."""

    def batch(self) -> ReadBatch: ...
    def shards_later(self, batch: ReadBatch, tag: str) -> Later[int]: ...
    def route(self, uses: dict[str, int], now_ms: int) -> dict[str, tuple[int, int]]: ...
    def split(self, tag: str, shards: int) -> int: ...
    def write(self, puts: list[tuple[TagUse, int]], deletes: list[tuple[TagUse, int]]) -> int: ...
    def page(
        self, tag: str, shards: int, before: int | None, limit: int
    ) -> list[tuple[int, int]]: ...


class TrendCounts(Protocol):
    """The last hour's tag uses, counted exactly in Redis."""

    def apply(
        self, added: list[tuple[TagUse, int]], removed: list[TagUse], now_ms: int
    ) -> None: ...
    def top(self, now_ms: int, count: int) -> list[tuple[str, int, int]]: ...
    def forget_author(self, author_id: int, now_ms: int) -> int: ...


class TweetShows(Protocol):
    """Tweets as a viewer sees them (``TweetService.show``): deleted ones left out."""

    def show(self, pairs: list[tuple[int, int]], viewer: int) -> list[TweetAnswer]: ...


class ViewerShields(Protocol):
    """A viewer's blocks and mutes (``Shields.later``), read in the page's pipeline."""

    def later(self, batch: ReadBatch, owner: int) -> Later[Shield]: ...


class TweetFilter(Protocol):
    """A viewer's muted words, compiled (``warble.domain.muted_words.matcher.Matcher``)."""

    def hides_tweet(self, tweet: TweetAnswer, viewer: int) -> bool: ...

    def __bool__(self) -> bool: ...  # False when it hides nothing (no muted word)


class MutedWordReader(Protocol):
    """A viewer's muted words (``MutedWordService.later``), read in the page's pipeline."""

    def later(self, batch: ReadBatch, viewer: int) -> Later[TweetFilter]: ...


# ---- what the service answers (API.md's objects) ------------------------------------------------
@dataclass(slots=True)
class Trend:
    tag: str
    tweet_count: int
    author_count: int


@dataclass(slots=True)
class Trends:
    items: list[Trend]
