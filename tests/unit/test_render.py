"""Every answer class, rendered by the HTTP layer's encoder, byte for byte as pydantic-core's
serializer for the class writes it (what the answers were rendered with before, and what the
OpenAPI document is generated from): the API's JSON did not change with the encoder."""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import pkgutil
from typing import Any

import msgspec
import pytest
import warble.domain
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter
from warble.domain.shared import UserSummary
from warble.domain.tweets.answers import (
    TWEET_JSON_FORM,
    Tweet,
    TweetJson,
    TweetPage,
    has_parts,
    tweet_parts,
)
from warble.domain.tweets.ports import StoredTweet
from warble.domain.tweets.service import Hydration
from warble.http.render import render

from tests.support.answers import STORED, SUMMARIES
from tests.unit.fakes import MEDIA_URL, World

pytestmark = pytest.mark.unit


def answer_classes() -> list[type]:
    """The dataclasses of every feature's ``answers.py``."""
    found = []
    for feature in pkgutil.iter_modules(warble.domain.__path__):
        try:
            module = importlib.import_module(f"warble.domain.{feature.name}.answers")
        except ModuleNotFoundError:
            continue
        found += [
            value
            for value in vars(module).values()
            if isinstance(value, type)
            and dataclasses.is_dataclass(value)
            and value.__module__ == module.__name__
        ]
    return found


ANSWERS = answer_classes()


def has_large_float(value: Any) -> bool:
    """A float of 1e16 or more: written ``1e16`` by msgspec, ``1e+16`` by pydantic-core (the same
    JSON number)."""
    if isinstance(value, float):
        return math.isfinite(value) and abs(value) >= 1e16
    if dataclasses.is_dataclass(value):
        return any(has_large_float(getattr(value, f.name)) for f in dataclasses.fields(value))
    if isinstance(value, list | tuple):
        return any(has_large_float(item) for item in value)
    if isinstance(value, dict):
        return any(has_large_float(item) for item in value.values())
    return False


def test_every_feature_answers_with_dataclasses() -> None:
    assert len(ANSWERS) >= 30
    named = {kind.__name__ for kind in ANSWERS}
    assert {"Tweet", "TweetPage", "Media", "User", "NotificationPage"} <= named


@pytest.mark.parametrize("kind", ANSWERS, ids=lambda kind: kind.__name__)
def test_an_answer_renders_the_bytes_pydantic_wrote(kind: type) -> None:
    # Given any instance of the answer class (any text: escapes, non-ASCII, control characters),
    # when rendered, then the bytes are pydantic-core's for that class.
    serializer = TypeAdapter(kind).serializer

    @settings(max_examples=25, deadline=None)
    @given(st.from_type(kind))
    def check(answer: Any) -> None:
        ours, theirs = render(answer), serializer.to_json(answer).decode()
        if has_large_float(answer):
            assert json.loads(ours) == json.loads(theirs)
        else:
            assert ours == theirs

    check()


_WORLD: list[World] = []


def world() -> World:
    """One in-memory world for every example (a Container is built once)."""
    if not _WORLD:
        _WORLD.append(World())
    return _WORLD[0]


def rendered(
    tweet: StoredTweet,
    original: StoredTweet | None,
    authors: dict[int, UserSummary],
    counts: list[int],
    liked: bool,
    retweeted: bool,
) -> list[Any]:
    """``TweetService.render`` of ``tweet`` (a retweet of ``original``, cached as the service
    caches it) with these authors and engagement read ahead, as ``show`` reads them."""
    w = world()
    subject = tweet.id if original is None else original.id
    if original is not None:
        w.tweet_cache.invalidate(original.id)
        w.tweets.prime([original])
    profiles = {
        a: {"id": a, "username": s.username, "display_name": s.display_name}
        for a, s in authors.items()
    }
    ahead = Hydration(
        frozenset(authors),
        frozenset([subject]),
        profiles,
        {subject: dict(zip(("like_count", "retweet_count", "reply_count"), counts, strict=True))},
        {subject} if liked else set(),
        {subject} if retweeted else set(),
    )
    return w.tweets.render([tweet], viewer=1, ahead=ahead)


def same_attributes(spliced: Any, made: Any) -> None:
    """What the domain reads of a shown tweet is the same, spliced or made."""
    for name in Tweet.__dataclass_fields__:
        if name == "retweet_of":
            assert (spliced.retweet_of is None) == (made.retweet_of is None)
            if made.retweet_of is not None:
                same_attributes(spliced.retweet_of, made.retweet_of)
        else:
            assert getattr(spliced, name) == getattr(made, name), name


@settings(max_examples=80, deadline=None)
@given(
    STORED,
    st.none() | STORED,
    SUMMARIES,
    SUMMARIES,
    st.lists(st.integers(0, 2**40), min_size=3, max_size=3),
    st.booleans(),
    st.booleans(),
)
def test_a_cached_tweet_renders_as_made_afresh(
    tweet: StoredTweet,
    original: StoredTweet | None,
    author: UserSummary,
    original_author: UserSummary,
    counts: list[int],
    liked: bool,
    retweeted: bool,
) -> None:
    # Given a tweet (any text, media, tags, reply link; maybe a retweet of another, cached) and
    # its authors' summaries (any text: they are spliced, never cached with the tweet)
    author = UserSummary(str(tweet.author_id), author.username, author.display_name)
    authors = {tweet.author_id: author}
    if original is not None:
        original = msgspec.structs.replace(original, id=tweet.id ^ 1, author_id=tweet.author_id ^ 1)
        authors[original.author_id] = UserSummary(
            str(original.author_id), original_author.username, original_author.display_name
        )
        tweet = msgspec.structs.replace(
            tweet, retweet_of=original.id, retweet_of_author=original.author_id
        )
    cached = msgspec.structs.replace(tweet, shown=tweet_parts(tweet, MEDIA_URL))
    # when it is rendered from the parts made when it was cached, and made afresh
    [spliced] = rendered(cached, original, authors, counts, liked, retweeted)
    [made] = rendered(tweet, original, authors, counts, liked, retweeted)
    assert isinstance(spliced, TweetJson) and isinstance(made, Tweet)
    # then the bytes are the same, alone and on a page, and so is what the domain reads of it
    assert render(TweetPage([spliced], "c")) == render(TweetPage([made], "c"))
    assert render(spliced) == render(made)
    same_attributes(spliced, made)
    # and parts of another form, or made for another media address, are not used
    for stale in (
        (TWEET_JSON_FORM + 1, MEDIA_URL, *cached.shown[2:]),  # type: ignore[index]
        (TWEET_JSON_FORM, MEDIA_URL + "/x", *cached.shown[2:]),  # type: ignore[index]
    ):
        old = msgspec.structs.replace(tweet, shown=stale)
        assert not has_parts(old, MEDIA_URL)
        [again] = rendered(old, original, authors, counts, liked, retweeted)
        assert isinstance(again, Tweet) and render(again) == render(made)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(STORED, max_size=4, unique_by=lambda tweet: tweet.id),
    SUMMARIES,
    st.none() | st.text(st.characters(codec="utf-8")),
)
def test_a_page_of_spliced_tweets_renders_as_the_page_made_afresh(
    tweets: list[StoredTweet], author: UserSummary, cursor: str | None
) -> None:
    # Given a page of tweets rendered from their cached parts, and the same tweets made afresh
    spliced: list[Any] = []
    made: list[Any] = []
    for tweet in tweets:
        summary = UserSummary(str(tweet.author_id), author.username, author.display_name)
        authors = {tweet.author_id: summary}
        cached = msgspec.structs.replace(tweet, shown=tweet_parts(tweet, MEDIA_URL))
        spliced += rendered(cached, None, authors, [3, 2, 1], True, False)
        made += rendered(tweet, None, authors, [3, 2, 1], True, False)
    assert all(isinstance(item, TweetJson) for item in spliced)
    # then the page written by one join of its parts is the page the encoder writes, whatever
    # its cursor holds
    assert render(TweetPage(spliced, cursor)) == render(TweetPage(made, cursor))
    # and so is a page that mixes both (a tweet of an older form among spliced ones)
    mixed = spliced[:1] + made[1:]
    assert render(TweetPage(mixed, cursor)) == render(TweetPage(made, cursor))
