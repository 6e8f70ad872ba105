"""Hashtag timelines and trends (API.md "Search and hashtags").

Both are built from the tweets stream, a batch at a time (``tweets_changed``, run by the reactions
reader's ``hashtags`` group): the batch's tag uses are folded (a tweet posted and deleted in one
batch is only deleted), routed to their shards in one Redis pipeline, written to the timelines in
BatchWriteItem calls, and counted into trends in one script call.

**Hot tags.** A tag's timeline is one partition until the tag's uses in a minute pass
``SPLIT_PER_MINUTE`` per shard (250 a second, a quarter of what a DynamoDB partition writes, so
that the burst before the split lands and deletes fit too); then its shard count doubles (up to
``MAX_SHARDS``, 64: 16,000 tweets a second for one tag, above the whole platform's 12k peak). A
tweet's shard is a hash of its id, so a tag's entries spread evenly; a page reads every shard and
merges them. A delete tries each shard the tweet could have been written to (one per power of two
up to the count now: at most 7).

**Reads.** A page is the tag's newest entries below the cursor, left out those whose author the
viewer blocks, is blocked by or mutes, then hydrated as tweets (which leaves out a tweet deleted
before the stream removed its entries).

**Trends** count each tag's uses and distinct authors over the last hour, exactly (Redis, one
hash tag); a tag used by one author is never listed.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Callable, Iterable

from warble import clock
from warble.domain.hashtags.ports import (
    HashtagIndex,
    MutedWordReader,
    TagUse,
    Trend,
    TrendCounts,
    Trends,
    TweetShows,
    ViewerShields,
)
from warble.domain.pagination import decode_cursor, encode_cursor
from warble.domain.shared import Later, ReadBatch, at_once
from warble.domain.text import tag_of
from warble.domain.tweets.answers import TweetPage
from warble.errors import FieldError, ValidationFailed
from warble.events import TweetDeleted, TweetPosted
from warble.ids import decompose

WINDOW_MS = 3_600_000
TOP_TRENDS = 10
MAX_SHARDS = 64
SPLIT_PER_MINUTE = 250 * 60
_MASK = (1 << 64) - 1


def mixed(tweet_id: int) -> int:
    """A tweet id's bits mixed (Fibonacci hashing): Snowflakes' low bits are mostly zero."""
    return ((tweet_id * 0x9E3779B97F4A7C15) & _MASK) >> 32


def shard_of(tweet_id: int, shards: int) -> int:
    return mixed(tweet_id) % shards


def possible_shards(tweet_id: int, shards: int) -> list[int]:
    """Every shard a tweet may have been written to while the count grew to ``shards``."""
    found, count = [], 1
    while count <= shards:
        found.append(mixed(tweet_id) % count)
        count *= 2
    return list(dict.fromkeys(found))


def shards_for(rate_per_minute: int, shards: int) -> int:
    """The shard count a tag's rate asks for: doubled while each shard takes more than its
    share, never lowered."""
    while shards < MAX_SHARDS and rate_per_minute > shards * SPLIT_PER_MINUTE:
        shards *= 2
    return shards


def _cursor_kind(tag: str) -> str:
    # Cursors are ASCII; a tag may not be.
    return f"tag{zlib.crc32(tag.encode()):08x}"


class HashtagService:
    def __init__(
        self,
        index: HashtagIndex,
        trends: TrendCounts,
        tweets: TweetShows,
        shields: ViewerShields,
        muted: MutedWordReader,
        now_ms: Callable[[], int] = clock.epoch_ms,
    ) -> None:
        self._muted = muted
        self._index = index
        self._trends = trends
        self._tweets = tweets
        self._shields = shields
        self._now = now_ms

    # ---- the stream's side --------------------------------------------------------------
    def tweets_changed(self, events: Iterable[TweetPosted | TweetDeleted]) -> int:
        """A batch's posted and deleted tweets, in stream order, into the tags' timelines and
        the trends. Returns the timeline writes made."""
        latest: dict[tuple[str, int], tuple[TagUse, bool]] = {}
        for event in events:
            if event.retweet_of is not None:
                continue
            posted = isinstance(event, TweetPosted)
            for tag in event.hashtags:
                latest[(tag, event.tweet_id)] = (
                    TagUse(tag, event.tweet_id, event.author_id),
                    posted,
                )
        if not latest:
            return 0
        now = self._now()
        added = [use for use, posted in latest.values() if posted]
        removed = [use for use, posted in latest.values() if not posted]
        uses = Counter(use.tag for use in added)
        for use in removed:
            uses.setdefault(use.tag, 0)
        routes = self._index.route(dict(uses), now)
        shards = {tag: self._grown(tag, *route) for tag, route in routes.items()}
        puts = [(use, shard_of(use.tweet_id, shards[use.tag])) for use in added]
        deletes = [
            (use, shard)
            for use in removed
            for shard in possible_shards(use.tweet_id, shards[use.tag])
        ]
        written = self._index.write(puts, deletes)
        self._trends.apply([(use, decompose(use.tweet_id)[0]) for use in added], removed, now)
        return written

    def _grown(self, tag: str, shards: int, rate: int) -> int:
        wanted = shards_for(rate, shards)
        return self._index.split(tag, wanted) if wanted > shards else shards

    # ---- reads ----------------------------------------------------------------------------
    def timeline(self, viewer: int, raw_tag: str, limit: int, cursor: str | None) -> TweetPage:
        return at_once(
            self._index.batch(),
            lambda batch: self.timeline_later(batch, viewer, raw_tag, limit, cursor),
        )

    def timeline_later(
        self, batch: ReadBatch, viewer: int, raw_tag: str, limit: int, cursor: str | None
    ) -> Later[TweetPage]:
        """``timeline`` with its first reads (the tag's shard count, the viewer's Shield)
        queued in ``batch``: the HTTP gate sends them with the session check."""
        tag = tag_of(raw_tag)
        if tag is None:
            raise ValidationFailed(
                [FieldError("tag", "must be 1 to 50 letters, digits or _, not all digits")]
            )
        kind = _cursor_kind(tag)
        before = decode_cursor(kind, cursor)
        shards = self._index.shards_later(batch, tag)
        shield = self._shields.later(batch, viewer)
        muted = self._muted.later(batch, viewer)

        def page() -> TweetPage:
            entries = self._index.page(tag, shards(), before, limit)
            hidden, words = shield().hidden, muted()
            pairs = [(author, tweet) for author, tweet in entries if author not in hidden]
            shown = self._tweets.show(pairs, viewer) if pairs else []
            # A page that muted words thin is answered shorter; its cursor is the last entry read.
            items = [t for t in shown if not words.hides_tweet(t, viewer)] if words else shown
            next_cursor = encode_cursor(kind, entries[-1][1]) if len(entries) >= limit else None
            return TweetPage(items, next_cursor)

        return page

    def trends(self) -> Trends:
        top = self._trends.top(self._now(), TOP_TRENDS)
        return Trends([Trend(tag, tweets, authors) for tag, tweets, authors in top])
