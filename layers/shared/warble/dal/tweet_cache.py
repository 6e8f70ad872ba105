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

The values stay the domain's records (``StoredTweet.record`` / ``from_record``): only how they
are written and read differs from the default codec.
"""

from __future__ import annotations

from typing import Any, TypedDict

import msgspec

from warble.dal.cache import JSON, Codec


class _CachedTweet(TypedDict, total=False):
    id: int
    author_id: int
    text: str
    created_at_ms: int
    reply_to: int | None
    reply_to_author: int | None
    retweet_of: int | None
    retweet_of_author: int | None
    media_ids: list[str]
    media: msgspec.Raw  # the copies, as stored
    hashtags: list[str] | None
    # (form, media address, the two parts as JSON in place)
    shown: tuple[int, str, msgspec.Raw, msgspec.Raw] | None
    deleted: bool  # the tombstone


_ENCODER = msgspec.json.Encoder(enc_hook=str)


def _encode(record: Any) -> bytes:
    shown = record.get("shown")
    if shown is not None:  # the parts' text written as the JSON it is
        form, media_url, head, tail = shown
        record = {**record, "shown": [form, media_url, msgspec.Raw(head), msgspec.Raw(tail)]}
    return _ENCODER.encode(record)


_typed = msgspec.json.Decoder(_CachedTweet).decode


def _decode(raw: bytes | str) -> Any:
    """The typed read; a value of another shape (written by an older deploy, say) is read as
    plain JSON, as the default codec reads it, rather than failing the request."""
    try:
        return _typed(raw)
    except msgspec.ValidationError:
        return JSON.decode(raw)


TWEET_CODEC = Codec(encode=_encode, decode=_decode)
