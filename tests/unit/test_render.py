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

import pytest
import warble.domain
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter
from warble.domain.media.answers import (
    MEDIA_JSON_FORM,
    MediaJson,
    encoded_media,
    media_answers,
    media_part,
)
from warble.domain.media.ports import AttachedMedia
from warble.domain.tweets.answers import Tweet
from warble.http.render import render

from tests.support.answers import ATTACHED

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


@settings(max_examples=60, deadline=None)
@given(st.lists(ATTACHED, max_size=4), st.from_type(Tweet), st.sampled_from(["https://c.d", ""]))
def test_a_cached_tweets_media_renders_as_made_afresh(
    media: list[AttachedMedia], tweet: Tweet, base: str
) -> None:
    # Given a tweet's media encoded when it was cached, when its answer is rendered, then the
    # bytes are those of the same media made and encoded on the read
    fresh = dataclasses.replace(tweet, media=media_answers(media, base))
    text = encoded_media(media, base)
    cached = dataclasses.replace(
        tweet, media=media_part(media, (MEDIA_JSON_FORM, base, text), base)
    )
    assert isinstance(cached.media, MediaJson)
    assert render(cached) == render(fresh)
    # and a text of another form, or made for another base URL, is not used
    for stale in ((MEDIA_JSON_FORM + 1, base, text), (MEDIA_JSON_FORM, base + "/x", text)):
        assert media_part(media, stale, base) == media_answers(media, base)
