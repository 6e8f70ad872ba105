"""The tweets cache's codec: a cached tweet read with a typed decoder.

A home page reads 20 cached tweets; with 4 images each, that is 80 media copies and 20 media
answers inside them. The generic decoder builds every one of those maps and lists, and undoes the
answer's escaped quotes, for a page that only writes the answer back out as it is. Here:

- the media answer (``StoredTweet.media_json``: form, base URL, text) is written into the cached
  JSON as JSON, not as a string, and read back as ``msgspec.Raw``: the bytes as they are, skipped
  by the decoder and written by the answer encoder unchanged (``warble.http.render``);
- the media copies (``media``) are read as ``msgspec.Raw`` too, and decoded only if something
  asks for them (``warble.domain.media.ports.CachedMedia``): on the page, nothing does;
- a tombstone (``{"deleted": true}``) reads as itself; keys this shape does not know (a record
  of an older form) are left out.

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
    # (form, base URL, answer): the answer is JSON in place; an older form's is a JSON string.
    media_json: tuple[int, str, msgspec.Raw] | None
    deleted: bool  # the tombstone


_ENCODER = msgspec.json.Encoder(enc_hook=str)


def _encode(record: Any) -> bytes:
    answer = record.get("media_json")
    if answer is not None and isinstance(answer[2], str):
        record = {**record, "media_json": [answer[0], answer[1], msgspec.Raw(answer[2])]}
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
