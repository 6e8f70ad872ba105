"""The tweets cache's typed codec (``warble.dal.tweet_cache``): a tweet written and read back is
the same tweet, its spliced answer renders the bytes of the same tweet made afresh, and values of
other shapes (a tombstone, a record of an older form) read as they should."""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import given, settings
from warble.dal.cache import JSON
from warble.dal.tweet_cache import TWEET_CODEC
from warble.domain.media.ports import AttachedMedia, CachedMedia
from warble.domain.shared import UserSummary
from warble.domain.tweets.answers import (
    TWEET_JSON_FORM,
    TweetJson,
    has_parts,
    summary_json,
    tweet_parts,
)
from warble.domain.tweets.ports import StoredTweet
from warble.domain.tweets.service import TOMBSTONE
from warble.http.render import render

from tests.support.answers import STORED, SUMMARIES

pytestmark = pytest.mark.unit

BASE = "https://media.example"


def cached(tweet: StoredTweet) -> StoredTweet:
    """The tweet as the service caches it (what every viewer sees of it rendered), written and
    read back."""
    record = msgspec.structs.replace(tweet, shown=tweet_parts(tweet, BASE)).record()
    return read_back(TWEET_CODEC.encode(record))


def read_back(written: str | bytes) -> StoredTweet:
    """A cached value as the codec reads it: the stored tweet itself, no record between."""
    back = TWEET_CODEC.decode(written)
    assert isinstance(back, StoredTweet)
    return back


def spliced(tweet: StoredTweet, author: UserSummary) -> TweetJson:
    return TweetJson(tweet, author, summary_json(author), None, 3, 2, 1, True, False)


@settings(max_examples=80, deadline=None)
@given(STORED, SUMMARIES)
def test_a_tweet_read_back_is_the_same_tweet_and_renders_the_same_bytes(
    tweet: StoredTweet, author: UserSummary
) -> None:
    # Given a tweet (any text, tags, media), cached through the typed codec
    back = cached(tweet)
    # then every field reads back as written, the media copies included (decoded when asked)
    assert msgspec.structs.replace(back, shown=None) == tweet
    assert list(back.media) == list(tweet.media)
    # and its parts read back as the bytes written (not strings), spliced into the bytes of the
    # tweet spliced from the parts as made (test_render holds those equal to a Tweet made now)
    assert has_parts(back, BASE)
    assert all(isinstance(part, msgspec.Raw) for part in back.shown[2:])  # type: ignore[index]
    made = msgspec.structs.replace(tweet, shown=tweet_parts(tweet, BASE))
    assert render(spliced(back, author)) == render(spliced(made, author))


def test_the_page_path_does_not_decode_the_media_copies() -> None:
    # Given a cached tweet with images, read back
    media = AttachedMedia(1, "image/png", 10, 2, 3, "o", "p", "LKO2", 'a "quote"', 1000)
    back = cached(StoredTweet(1, 2, "hi", 1000, media_ids=("1",), media=(media,)))
    # then its copies are still the raw JSON after its answer is spliced (the page's only use)
    assert isinstance(back.media, CachedMedia)
    author = UserSummary("2", "al", "Al")
    TweetJson(back, author, summary_json(author), None, 0, 0, 0, False, False)
    assert back.media._items is None
    # and they decode to the copies when something asks
    assert back.media[0] == media and back.media._items is not None


def test_a_tweet_without_media_reads_back_with_none() -> None:
    back = cached(StoredTweet(1, 2, "hi", 1000))
    assert back.media == () and has_parts(back, BASE)


def test_a_tombstone_reads_as_itself() -> None:
    assert TWEET_CODEC.decode(TWEET_CODEC.encode(TOMBSTONE)) == TOMBSTONE


def test_a_record_of_the_older_form_is_rendered_afresh() -> None:
    # Given a tweet cached by an older deploy: its media's answer as a JSON string (the form
    # before tweets were rendered once), no parts, and a key this form does not know
    media = AttachedMedia(1, "image/png", 10, 2, 3, "o", "p", "LKO2", "alt", 1000)
    record = StoredTweet(1, 2, "#hi", 1000, media_ids=("1",), media=(media,)).record()
    del record["shown"], record["hashtags"]
    record["media_json"] = [1, BASE, json.dumps([{"id": "1"}])]
    record["retired_field"] = True
    back = read_back(JSON.encode(record))
    # then it has no parts (the service renders it afresh), and its media are its copies
    assert not has_parts(back, BASE) and list(back.media) == [media]
    # and the tags come from the text, as for any record cached before tags were stored
    assert back.hashtags == ("hi",)
    # and parts of another form are not used either
    stale = msgspec.structs.replace(back, shown=(TWEET_JSON_FORM + 1, BASE, "{}", "{}"))
    assert not has_parts(stale, BASE)


def test_the_parts_are_json_in_place_not_strings() -> None:
    media = AttachedMedia(1, "image/png", 10, 2, 3, "o", "p", "LKO2", "alt", 1000)
    tweet = StoredTweet(1, 2, "hi", 1000, media_ids=("1",), media=(media,))
    parts = tweet_parts(tweet, BASE)
    written = TWEET_CODEC.encode(msgspec.structs.replace(tweet, shown=parts).record())
    form, base, head, tail = json.loads(written)["shown"]
    assert (form, base) == (TWEET_JSON_FORM, BASE)
    assert head == json.loads(parts[2]) and tail == json.loads(parts[3])
    assert tail["media"][0]["alt_text"] == "alt"


def test_a_tweet_read_back_and_cached_again_keeps_its_parts() -> None:
    # a fill of a value read from the cache writes its parts (bytes as read) in place again
    back = cached(StoredTweet(1, 2, "hi", 1000))
    again = read_back(TWEET_CODEC.encode(back.record()))
    author = UserSummary("2", "al", "Al")
    one = TweetJson(back, author, summary_json(author), None, 0, 0, 0, False, False)
    two = TweetJson(again, author, summary_json(author), None, 0, 0, 0, False, False)
    assert bytes(one.json) == bytes(two.json)


def test_a_value_of_another_shape_reads_as_plain_json() -> None:
    # an id written as a string (not this shape's int) is read as the default codec reads it
    value = {"id": "1", "author_id": 2, "text": "hi", "created_at_ms": 1000}
    assert TWEET_CODEC.decode(JSON.encode(value)) == value


def test_parts_read_as_plain_json_are_not_spliced() -> None:
    # Given a value of another shape (an id as a string) that holds parts: the codec reads it as
    # plain JSON, its parts as maps
    record = msgspec.structs.replace(StoredTweet(1, 2, "hi", 1000), shown=None).record()
    record["shown"] = list(tweet_parts(StoredTweet(1, 2, "hi", 1000), BASE))
    record["reply_to"] = "5"
    value = TWEET_CODEC.decode(TWEET_CODEC.encode(record))
    assert isinstance(value["shown"][2], dict)
    # then the tweet has no parts to splice: it is made afresh
    assert not has_parts(StoredTweet.from_record(value), BASE)
