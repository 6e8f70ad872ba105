"""What tweets need of their stores (``warble.dal.tweets``) and of blocks: the stored record, and
the errors a tweet's transaction raises."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

import msgspec

from warble.domain.blocks.ports import Shield
from warble.domain.media.ports import AttachedMedia, media_copies
from warble.domain.shared import Later, ReadBatch, RequestKey
from warble.domain.text import hashtags


class TweetStore(Protocol):
    def author_of(self, tweet_id: int) -> int | None: ...
    def retweet_by(self, user_id: int, original_id: int) -> int | None: ...
    # Repeated when ``repeat`` (a keyed post) created a tweet already, within 24 hours.
    def create(self, tweet: StoredTweet, repeat: RequestKey | None = None) -> None: ...
    def delete(self, tweet: StoredTweet) -> None: ...
    def update_media(self, author_id: int, tweet_id: int, media: AttachedMedia) -> bool: ...
    def get(self, author_id: int, tweet_id: int) -> StoredTweet | None: ...
    def get_many(self, keys: list[tuple[int, int]]) -> list[StoredTweet]: ...
    def by_author(self, author_id: int, before_id: int | None, limit: int) -> list[StoredTweet]: ...
    def newest_of(self, author_ids: list[int], limit: int) -> dict[int, list[StoredTweet]]: ...
    def recent_retweets(self, user_id: int, limit: int) -> tuple[dict[int, int], int]: ...
    def reply_keys(
        self, parent_id: int, before_id: int | None, limit: int
    ) -> list[tuple[int, int]]: ...
    def retweet_keys(self, original_id: int) -> list[tuple[int, int]]: ...
    def scan_links(self) -> Iterator[tuple[int, int, int | None, int | None]]: ...
    def count_by_author(self, author_id: int) -> int: ...
    def count_replies(self, tweet_id: int) -> int: ...
    def count_retweets(self, tweet_id: int) -> int: ...


class ParentMissing(Exception):
    """The tweet named by reply_to / retweet_of does not exist (or was just deleted)."""


class AlreadyRetweeted(Exception):
    def __init__(self, retweet_id: int) -> None:
        super().__init__(retweet_id)
        self.retweet_id = retweet_id


class Repeated(Exception):
    """The post's Idempotency-Key already created a tweet (the durable claim held it)."""

    def __init__(self, tweet_id: int, fingerprint: str) -> None:
        super().__init__(tweet_id)
        self.tweet_id = tweet_id
        self.fingerprint = fingerprint


class MediaTaken(Exception):
    """The tweet's transaction found some of its media changed since they were read (attached
    meanwhile, or their alt text edited)."""

    def __init__(self, media_ids: list[int]) -> None:
        super().__init__(media_ids)
        self.media_ids = media_ids


class MediaCatalog(Protocol):
    """What tweets need of media: what a new tweet of ``owner_id`` shows of ``media_ids``
    (InvalidMedia names the refused ones)."""

    def attachable(self, owner_id: int, media_ids: list[str]) -> list[AttachedMedia]: ...


class TweetGone(Exception):
    """The tweet to delete does not exist any more."""


# A msgspec Struct, not a dataclass: a page of 20 cached tweets makes 20 on every read, and a
# Struct is made in 0.13 µs where a slotted dataclass took 0.57 µs and a frozen one 4 µs (issue 45,
# as issue 20 found for the answers). Never changed once built all the same (``replace`` makes
# another: ``msgspec.structs.replace``).
class StoredTweet(msgspec.Struct):
    """A tweet as stored (and cached): ids, not rendered objects."""

    id: int
    author_id: int
    text: str
    created_at_ms: int
    reply_to: int | None = None
    reply_to_author: int | None = None
    retweet_of: int | None = None
    retweet_of_author: int | None = None
    media_ids: tuple[str, ...] = ()
    # What it shows of them, copied when it was posted (from the cache: decoded when used).
    media: Sequence[AttachedMedia] = ()
    # The text's tags (warble.domain.text), parsed once at posting and stored with it.
    hashtags: tuple[str, ...] = ()
    # What every viewer sees of it, rendered once when it is cached (form, media address, two
    # JSON objects as str or, read from the cache, bytes-like: tweets.answers.tweet_parts).
    shown: tuple[int, str, Any, Any] | None = None

    def record(self) -> dict[str, Any]:
        """The cached (JSON) form."""
        return {
            "id": self.id,
            "author_id": self.author_id,
            "text": self.text,
            "created_at_ms": self.created_at_ms,
            "reply_to": self.reply_to,
            "reply_to_author": self.reply_to_author,
            "retweet_of": self.retweet_of,
            "retweet_of_author": self.retweet_of_author,
            "media_ids": list(self.media_ids),
            "media": [m.record() for m in self.media],
            "hashtags": list(self.hashtags),
            "shown": None if self.shown is None else list(self.shown),
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> StoredTweet:
        """A cached record; keys it does not know (an older form's) are left out."""
        get = record.get
        tags = get("hashtags")  # a record cached before tags were stored has none: its text says
        shown = get("shown")
        return cls(
            record["id"],
            record["author_id"],
            record["text"],
            record["created_at_ms"],
            get("reply_to"),
            get("reply_to_author"),
            get("retweet_of"),
            get("retweet_of_author"),
            tuple(get("media_ids") or ()),
            media_copies(get("media")),
            tuple(tags) if tags is not None else hashtags(record["text"]),
            # Parts read as maps (a value of another shape, decoded as plain JSON) are not
            # spliced: the tweet is made afresh.
            tuple(shown) if shown and not isinstance(shown[2], dict) else None,
        )


class TextFilter(Protocol):
    """A viewer's muted words, compiled (``warble.domain.muted_words.matcher.Matcher``)."""

    def hides(self, text: str, hashtags: Iterable[str] = ()) -> bool: ...


class MutedWordReader(Protocol):
    """A viewer's muted words (``MutedWordService.later``), read with a page: replies holding
    one are left out (but never the viewer's own)."""

    def later(self, batch: ReadBatch, viewer: int) -> Later[TextFilter]: ...


class ShieldReader(Protocol):
    """A viewer's blocks and mutes (``Shields.later``), read with a page: replies by anyone the
    viewer blocks or is blocked by are left out."""

    def later(self, batch: ReadBatch, owner: int) -> Later[Shield]: ...
