"""What tweets answer (API.md's objects): a Tweet (with its original when it is a retweet) and a
page of Tweets.

A tweet is rendered once, when it is cached: what every viewer sees of it (text, time, reply
link, media ids, media, hashtags) is encoded then, as two JSON objects (``tweet_parts``), and a
read splices them with what it reads for its viewer (the author's summary, from the profile
cache, so a profile edit shows at once; the original of a retweet; the counters and the
viewer's flags) into the Tweet's bytes (``TweetJson``), which the answer encoder writes as they
are. A page of 20 tweets then builds no Tweet and encodes no field of one (issue 45). A tweet
without parts of this form (``TWEET_JSON_FORM``) or for this media address is answered as a
``Tweet`` made now: the same bytes (tests/unit/test_render.py holds them equal).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import msgspec

from warble import clock
from warble.domain.media.answers import Media, media_answers
from warble.domain.shared import EncodedJson, Page, UserSummary
from warble.domain.tweets.ports import StoredTweet


@dataclass(slots=True)
class Tweet:
    """API.md's Tweet. A retweet carries its original (``retweet_of``) and the original's
    counters and flags: that is what a like or a retweet of it acts on."""

    id: str
    author: UserSummary
    text: str
    created_at: str
    reply_to: str | None
    retweet_of: Tweet | None
    media_ids: list[str]
    media: list[Media]
    hashtags: list[str]
    like_count: int
    retweet_count: int
    reply_count: int
    liked_by_me: bool
    retweeted_by_me: bool


# The form of ``tweet_parts``: a change of what they hold or of Tweet's fields (API.md) changes
# it, and the cached parts of the older form are then not used (the tweet is rendered afresh).
TWEET_JSON_FORM = 1

_encode = msgspec.json.encode  # the answer encoder's bytes (warble.http.render)


def tweet_parts(tweet: StoredTweet, media_url: str) -> tuple[int, str, str, str]:
    """What every viewer sees of a tweet, as the cache keeps it: (form, media address, the
    object of ``text``, ``created_at`` and ``reply_to``, the object of ``media_ids``, ``media``
    and ``hashtags``): JSON objects, so the tweet cache writes them in place and reads them
    back as their bytes (``warble.dal.tweet_cache``); ``TweetJson`` splices their members."""
    head = {
        "text": tweet.text,
        "created_at": clock.rfc3339_ms(tweet.created_at_ms),
        "reply_to": None if tweet.reply_to is None else str(tweet.reply_to),
    }
    tail = {
        "media_ids": list(tweet.media_ids),
        "media": media_answers(tweet.media, media_url),
        "hashtags": list(tweet.hashtags),
    }
    return TWEET_JSON_FORM, media_url, _encode(head).decode(), _encode(tail).decode()


def has_parts(tweet: StoredTweet, media_url: str) -> bool:
    """Whether the tweet carries parts of this form, made for this media address."""
    shown = tweet.shown
    return shown is not None and shown[0] == TWEET_JSON_FORM and shown[1] == media_url


def summary_json(summary: UserSummary) -> bytes:
    """A tweet's ``author``, as the answer encoder writes it (once per author on a page)."""
    return _encode(summary)


_FLAGS = (b"false", b"true")
# A Tweet's bytes, the parts' members (their braces cut) and the viewer's fields in their places:
# one formatting, where a join of eleven pieces, the id's text and the viewer's formatting were
# four calls more a tweet (20 tweets spliced: 28 -> 20 µs).
_SPLICED = (
    b'{"id":"%d","author":%b,%b,"retweet_of":%b,%b,"like_count":%d,"retweet_count":%d,'
    b'"reply_count":%d,"liked_by_me":%b,"retweeted_by_me":%b}'
)


class TweetJson(EncodedJson):
    """API.md's Tweet spliced from its cached parts (``tweet_parts``) and the viewer's fields:
    the encoder writes its bytes as they are. It answers the attributes of a ``Tweet`` (what
    the domain reads of a shown tweet: its author, text, hashtags, original), the rest made
    from the stored tweet only when something asks (a test, never a page)."""

    __slots__ = (
        "_tweet",
        "author",
        "like_count",
        "liked_by_me",
        "reply_count",
        "retweet_count",
        "retweet_of",
        "retweeted_by_me",
    )

    def __init__(
        self,
        tweet: StoredTweet,
        author: UserSummary,
        author_json: bytes,
        retweet_of: TweetJson | None,
        like_count: int,
        retweet_count: int,
        reply_count: int,
        liked_by_me: bool,
        retweeted_by_me: bool,
    ) -> None:
        _, _, head, tail = tweet.shown  # type: ignore[misc]  # the caller checked has_parts
        # Written on every page for every tweet: one formatting, no call it can do without.
        self.json = _SPLICED % (
            tweet.id,
            author_json,
            # a part's members, its braces cut: copied from the bytes a cache read (a view of
            # them formats at twice the cost: 1.3 against 0.67 µs a tweet), or the text of parts
            # just made
            bytes(head)[1:-1] if not isinstance(head, str) else head[1:-1].encode(),
            b"null" if retweet_of is None else retweet_of.json,
            bytes(tail)[1:-1] if not isinstance(tail, str) else tail[1:-1].encode(),
            like_count,
            retweet_count,
            reply_count,
            _FLAGS[liked_by_me],
            _FLAGS[retweeted_by_me],
        )
        self._tweet = tweet
        self.author = author
        self.retweet_of = retweet_of
        self.like_count = like_count
        self.retweet_count = retweet_count
        self.reply_count = reply_count
        self.liked_by_me = liked_by_me
        self.retweeted_by_me = retweeted_by_me

    @property
    def id(self) -> str:
        return str(self._tweet.id)

    @property
    def text(self) -> str:
        return self._tweet.text

    @property
    def created_at(self) -> str:
        return clock.rfc3339_ms(self._tweet.created_at_ms)

    @property
    def reply_to(self) -> str | None:
        return None if self._tweet.reply_to is None else str(self._tweet.reply_to)

    @property
    def media_ids(self) -> list[str]:
        return list(self._tweet.media_ids)

    @property
    def media(self) -> list[Media]:
        shown = self._tweet.shown
        return media_answers(self._tweet.media, shown[1] if shown else "")

    @property
    def hashtags(self) -> list[str]:
        return list(self._tweet.hashtags)

    def __repr__(self) -> str:
        return f"TweetJson({bytes(self.json).decode()})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """For pydantic (the OpenAPI document, the render tests): described as the Tweet it
        holds, serialized as the value of its bytes."""
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(
            lambda value: value,
            json_schema_input_schema=handler.generate_schema(Tweet),
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda value: json.loads(bytes(value.json))
            ),
        )


# What a read answers for a tweet: spliced from the cache's parts, else made now.
TweetAnswer = Tweet | TweetJson


@dataclass(slots=True)
class TweetPage(Page[TweetAnswer]):
    """A page of Tweets, newest first."""

    items: list[TweetAnswer]
