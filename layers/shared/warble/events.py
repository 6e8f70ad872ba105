"""What happened, as the stream consumers see it: typed events decoded from DynamoDB Streams.

Each store decodes its own table's stream records (``decode_record`` in ``warble.dal.<store>``),
so the item layout is read in one place; ``warble.dal.streams.StreamDecoder`` dispatches a record
to its table's decoder and wraps the result in a ``Change``. Consumers subscribe to event types
(``warble.entrypoints.streams``) and never see a raw record.

A record decodes to zero events (an item no consumer cares about, a MODIFY of a flag) or one.
Events carry what their consumers need and nothing of the item layout.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TweetPosted:
    """A tweet, reply or retweet was written (INSERT of a tweets-table item)."""

    tweet_id: int
    author_id: int
    text: str = ""
    reply_to: int | None = None
    reply_to_author: int | None = None
    retweet_of: int | None = None
    retweet_of_author: int | None = None
    # The media it shows, and their files in the bucket.
    media_ids: tuple[int, ...] = ()
    media_keys: tuple[str, ...] = ()
    hashtags: tuple[str, ...] = ()


@dataclass(frozen=True)
class TweetDeleted:
    """A tweet, reply or retweet was deleted (REMOVE of a tweets-table item)."""

    tweet_id: int
    author_id: int
    reply_to: int | None = None
    retweet_of: int | None = None
    media_ids: tuple[int, ...] = ()
    media_keys: tuple[str, ...] = ()
    hashtags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Followed:
    """``seq`` is the follow's Snowflake; its Unfollowed carries the same one. ``friend``: the
    followee followed the follower already, so a friendship began (ended, on an Unfollowed)."""

    follower: int
    followee: int
    seq: int | None = None
    friend: bool = False


@dataclass(frozen=True)
class Unfollowed:
    follower: int
    followee: int
    seq: int | None = None
    friend: bool = False


@dataclass(frozen=True)
class Liked:
    """``seq`` is the like's Snowflake; its Unliked carries the same one."""

    user_id: int
    tweet_id: int
    author_id: int | None = None
    seq: int | None = None


@dataclass(frozen=True)
class Unliked:
    user_id: int
    tweet_id: int
    author_id: int | None = None
    seq: int | None = None


@dataclass(frozen=True)
class Matched:
    """Two users swiped right on each other (INSERT of the match record in the matches table).

    One event per user: a match record decodes to two, ``Matched(a, b, c)`` and
    ``Matched(b, a, c)``, so a subscriber (the ``match`` notification) handles its recipient."""

    user_id: int
    other_id: int
    conversation_id: int


@dataclass(frozen=True)
class Blocked:
    """``blocker`` blocks ``blocked`` (INSERT of the ``R#B#`` item); ``seq`` is the block's
    Snowflake, and its Unblocked carries the same one."""

    blocker: int
    blocked: int
    seq: int | None = None


@dataclass(frozen=True)
class Unblocked:
    blocker: int
    blocked: int
    seq: int | None = None


@dataclass(frozen=True)
class Muted:
    """``muter`` mutes ``muted`` (INSERT of the ``R#M#`` item); Unmuted carries the same seq."""

    muter: int
    muted: int
    seq: int | None = None


@dataclass(frozen=True)
class Unmuted:
    muter: int
    muted: int
    seq: int | None = None


Event = (
    TweetPosted | TweetDeleted | Followed | Unfollowed | Liked | Unliked | Matched
    | Blocked | Unblocked | Muted | Unmuted
)  # fmt: skip


@dataclass(frozen=True)
class Change:
    """One stream record, decoded: its delivery identity and the events it carries.

    ``event_id`` is unique per record and stable across redeliveries (the dedupe claim);
    ``sequence`` is Lambda's ``itemIdentifier`` for partial batch failures. A record that could
    not be decoded is ``readable=False``: reported as a failure, never applied.
    """

    event_id: str
    sequence: str
    events: tuple[Event, ...]
    readable: bool = True


class UnreadableRecord(Exception):
    """A stream record no decoder can read (unknown table, missing keys, bad values)."""
