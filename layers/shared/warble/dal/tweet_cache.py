"""The tweets cache's codec: a cached tweet read with a typed decoder.

A home page reads 20 cached tweets; with 4 images each, that is 80 media copies and 20 rendered
tweets inside them. The generic decoder builds every one of those maps and lists, and undoes the
rendered parts' escaped quotes, for a page that only splices the parts into its answer. Here:

- what every viewer sees of the tweet (``StoredTweet.shown``: form, media address and two JSON
  objects, ``warble.domain.tweets.answers.tweet_parts``) is written into the cached JSON as
  JSON, not as strings, and read back as ``msgspec.Raw``: the bytes as they are, skipped by the
  decoder and spliced into the answer unchanged (``TweetJson``);
- the media copies (``media``) are read as ``msgspec.Raw`` too, and decoded only if something
  asks for them (``warble.domain.media.ports.CachedMedia``): on the page, nothing does;
- a tombstone (``{"deleted": true}``) reads as itself; keys this shape does not know (a record
  of an older form, such as its ``media_json``) are left out.

A tweet is written as its record (``StoredTweet.record``) and read back as the ``StoredTweet``
itself, not a record to build it from (``StoredTweet.from_record`` takes either).
"""

from __future__ import annotations

from typing import Any

import msgspec

from warble.dal.cache import JSON, Codec
from warble.domain.media.ports import media_copies
from warble.domain.text import hashtags
from warble.domain.tweets.ports import StoredTweet


class _CachedTweet(msgspec.Struct, gc=False):
    """A cached tweet's shape; keys it does not name (an older form's) are skipped."""

    id: int
    author_id: int
    text: str
    created_at_ms: int
    reply_to: int | None = None
    reply_to_author: int | None = None
    retweet_of: int | None = None
    retweet_of_author: int | None = None
    media_ids: tuple[str, ...] = ()
    media: msgspec.Raw = msgspec.Raw()  # the copies, as stored
    hashtags: tuple[str, ...] | None = None
    # (form, media address, the two parts as JSON in place)
    shown: tuple[int, str, msgspec.Raw, msgspec.Raw] | None = None


_ENCODER = msgspec.json.Encoder(enc_hook=str)


def _encode(record: Any) -> bytes:
    shown = record.get("shown")
    if shown is not None:  # the parts' text written as the JSON it is
        form, media_url, head, tail = shown
        record = {**record, "shown": [form, media_url, msgspec.Raw(head), msgspec.Raw(tail)]}
    return _ENCODER.encode(record)


_typed = msgspec.json.Decoder(_CachedTweet).decode


def _decode(raw: bytes | str) -> Any:
    """The stored tweet, built from the typed read (a page reads 20: a Struct and the tweet cost
    a third less than a map and the tweet made from it); a value of another shape (a
    tombstone, or written by an older deploy) is read as plain JSON, as the default codec
    reads it, rather than failing the request."""
    try:
        cached = _typed(raw)
    except msgspec.ValidationError:
        return JSON.decode(raw)
    tags, media = cached.hashtags, cached.media
    return StoredTweet(
        cached.id,
        cached.author_id,
        cached.text,
        cached.created_at_ms,
        cached.reply_to,
        cached.reply_to_author,
        cached.retweet_of,
        cached.retweet_of_author,
        cached.media_ids,
        media_copies(media) if len(media) > 2 else (),  # none: absent, or "[]"
        # a record cached before tags were stored has none: its text says
        tags if tags is not None else hashtags(cached.text),
        cached.shown,
    )


TWEET_CODEC = Codec(encode=_encode, decode=_decode)
