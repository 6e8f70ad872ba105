"""The tweets cache's typed codec (``warble.dal.tweet_cache``): a tweet written and read back is
the same tweet, its answer renders the bytes of the same tweet made afresh, and values of other
shapes (a tombstone, a record of an older form) read as they should."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from warble.dal.cache import JSON
from warble.dal.tweet_cache import TWEET_CODEC
from warble.domain.media.answers import (
    MEDIA_JSON_FORM,
    MediaJson,
    encoded_media,
    media_answers,
    media_part,
)
from warble.domain.media.ports import AttachedMedia, CachedMedia
from warble.domain.tweets.answers import Tweet
from warble.domain.tweets.ports import StoredTweet
from warble.domain.tweets.service import TOMBSTONE
from warble.http.render import render

from tests.support.answers import ATTACHED

pytestmark = pytest.mark.unit

BASE = "https://media.example"


def cached(tweet: StoredTweet) -> StoredTweet:
    """The tweet as the service caches it (the answer of its media, if any, encoded), written
    and read back."""
    if tweet.media:
        text = encoded_media(tweet.media, BASE)
        tweet = dataclasses.replace(tweet, media_json=(MEDIA_JSON_FORM, BASE, text))
    record = tweet.record()
    return StoredTweet.from_record(TWEET_CODEC.decode(TWEET_CODEC.encode(record)))


@settings(max_examples=80, deadline=None)
@given(
    st.lists(ATTACHED, max_size=4),
    st.text(),
    st.lists(st.text(), max_size=3),
    st.from_type(Tweet),
)
def test_a_tweet_read_back_is_the_same_tweet_and_renders_the_same_bytes(
    media: list[AttachedMedia], text: str, tags: list[str], answer: Tweet
) -> None:
    # Given a tweet with media, cached through the typed codec
    tweet = StoredTweet(
        id=7,
        author_id=3,
        text=text,
        created_at_ms=1_700_000_000_000,
        reply_to=5,
        reply_to_author=4,
        media_ids=tuple(str(m.id) for m in media),
        media=tuple(media),
        hashtags=tuple(tags),
    )
    back = cached(tweet)
    # then every field reads back as written, the media copies included (decoded when asked)
    assert dataclasses.replace(back, media_json=None) == tweet
    assert list(back.media) == media
    # and its media answer is the cached text, written as the same bytes as made afresh
    part = media_part(back.media, back.media_json, BASE)
    assert isinstance(part, MediaJson) == bool(media)
    fresh = dataclasses.replace(answer, media=media_answers(media, BASE))
    assert render(dataclasses.replace(answer, media=part)) == render(fresh)


def test_the_page_path_does_not_decode_the_media_copies() -> None:
    # Given a cached tweet with images, read back
    media = AttachedMedia(1, "image/png", 10, 2, 3, "o", "p", "LKO2", 'a "quote"', 1000)
    back = cached(StoredTweet(1, 2, "hi", 1000, media_ids=("1",), media=(media,)))
    # then its copies are still the raw JSON after its answer is made (the page's only use)
    assert isinstance(back.media, CachedMedia)
    media_part(back.media, back.media_json, BASE)
    assert back.media._items is None
    # and they decode to the copies when something asks
    assert back.media[0] == media and back.media._items is not None


def test_a_tweet_without_media_reads_back_with_none() -> None:
    back = cached(StoredTweet(1, 2, "hi", 1000))
    assert back.media == () and back.media_json is None
    assert media_part(back.media, back.media_json, BASE) == []


def test_a_tombstone_reads_as_itself() -> None:
    assert TWEET_CODEC.decode(TWEET_CODEC.encode(TOMBSTONE)) == TOMBSTONE


def test_a_record_of_the_older_form_renders_its_media_afresh() -> None:
    # Given a tweet cached by the default codec with its answer as a JSON string (form 1), and
    # a key this form does not know
    media = AttachedMedia(1, "image/png", 10, 2, 3, "o", "p", "LKO2", "alt", 1000)
    record = StoredTweet(1, 2, "#hi", 1000, media_ids=("1",), media=(media,)).record()
    record["media_json"] = [1, BASE, encoded_media([media], BASE)]
    record["retired_field"] = True
    del record["hashtags"]
    back = StoredTweet.from_record(TWEET_CODEC.decode(JSON.encode(record)))
    # then its media are made again from the copies (the older text is not used)
    assert media_part(back.media, back.media_json, BASE) == media_answers([media], BASE)
    # and the tags come from the text, as for any record cached before tags were stored
    assert back.hashtags == ("hi",)


def test_the_answer_is_json_in_place_not_a_string() -> None:
    media = AttachedMedia(1, "image/png", 10, 2, 3, "o", "p", "LKO2", "alt", 1000)
    tweet = StoredTweet(1, 2, "hi", 1000, media_ids=("1",), media=(media,))
    text = encoded_media([media], BASE)
    written = TWEET_CODEC.encode(
        dataclasses.replace(tweet, media_json=(MEDIA_JSON_FORM, BASE, text)).record()
    )
    assert json.loads(written)["media_json"][2] == json.loads(text)


def test_a_value_of_another_shape_reads_as_plain_json() -> None:
    # an id written as a string (not this shape's int) is read as the default codec reads it
    value = {"id": "1", "author_id": 2, "text": "hi", "created_at_ms": 1000}
    assert TWEET_CODEC.decode(JSON.encode(value)) == value
