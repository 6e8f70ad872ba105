"""Tweets, as the domain answers them, rendered to API.md's JSON by the HTTP layer's serializer,
and documented by the same classes in the OpenAPI document."""

from __future__ import annotations

import json

import pytest
from warble.domain.likes.answers import LikeAnswer
from warble.domain.media.answers import Media
from warble.domain.shared import UserSummary
from warble.domain.tweets.answers import Tweet, TweetPage
from warble.http.render import render

from tests.support.answers import component, ref, response_component

pytestmark = pytest.mark.unit

MEDIA = {
    "id": "7",
    "type": "image",
    "content_type": "image/png",
    "status": "ready",
    "size": 10,
    "width": 4,
    "height": 3,
    "url": "https://c/o.png",
    "preview_url": "https://c/p.webp",
    "blurhash": "L00000fQfQfQfQfQfQfQfQfQfQfQ",
    "alt_text": "alt",
    "created_at": "2026-11-25T10:00:00.000Z",
    "error": None,
}

ALICE = UserSummary("2", "alice", "Alice")
BOB = UserSummary("3", "bob", "Bob")


def tweet(tweet_id: str, author: UserSummary, retweet_of: Tweet | None = None) -> Tweet:
    return Tweet(
        id=tweet_id,
        author=author,
        text="" if retweet_of else "hi #Warble",
        created_at="2026-11-25T10:00:00.000Z",
        reply_to=None,
        retweet_of=retweet_of,
        media_ids=["7"],
        media=[Media(**{**MEDIA, "error": None})],
        hashtags=[] if retweet_of else ["warble"],
        like_count=2,
        retweet_count=1,
        reply_count=0,
        liked_by_me=False,
        retweeted_by_me=True,
    )


def test_a_retweet_renders_with_its_original_as_api_md_shows_it() -> None:
    # Given bob's retweet of alice's tweet, when rendered, then both are API.md Tweets: string
    # ids, the author as a user summary, the original nested, every field present.
    original = tweet("10", ALICE)
    body = json.loads(render(tweet("11", BOB, retweet_of=original)))
    assert body == {
        "id": "11",
        "author": {"id": "3", "username": "bob", "display_name": "Bob"},
        "text": "",
        "created_at": "2026-11-25T10:00:00.000Z",
        "reply_to": None,
        "retweet_of": {
            "id": "10",
            "author": {"id": "2", "username": "alice", "display_name": "Alice"},
            "text": "hi #Warble",
            "created_at": "2026-11-25T10:00:00.000Z",
            "reply_to": None,
            "retweet_of": None,
            "media_ids": ["7"],
            "media": [MEDIA],
            "hashtags": ["warble"],
            "like_count": 2,
            "retweet_count": 1,
            "reply_count": 0,
            "liked_by_me": False,
            "retweeted_by_me": True,
        },
        "media_ids": ["7"],
        "media": [MEDIA],
        "hashtags": [],
        "like_count": 2,
        "retweet_count": 1,
        "reply_count": 0,
        "liked_by_me": False,
        "retweeted_by_me": True,
    }


def test_a_page_of_tweets_renders_its_items_and_cursor() -> None:
    page = TweetPage([tweet("10", ALICE), tweet("9", BOB)], "abc")
    body = json.loads(render(page))
    assert [item["id"] for item in body["items"]] == ["10", "9"]
    assert body["next_cursor"] == "abc" and body["items"][1]["author"]["username"] == "bob"
    assert json.loads(render(TweetPage([], None))) == {"items": [], "next_cursor": None}


def test_a_like_answer_renders_as_api_md_says() -> None:
    assert json.loads(render(LikeAnswer(True))) == {"liked": True}


def test_a_dict_answer_still_renders_as_before() -> None:
    assert render({"status": "ok", "name": "é"}) == '{"status":"ok","name":"\\u00e9"}'


def test_the_document_names_the_rendered_classes_as_the_responses() -> None:
    assert response_component("get", "/v1/tweets/{tweet_id}", "200") == "Tweet"
    assert response_component("post", "/v1/tweets", "201") == "Tweet"
    assert response_component("get", "/v1/timeline/home", "200") == "TweetPage"
    assert response_component("put", "/v1/tweets/{tweet_id}/like", "200") == "LikeAnswer"
    # What the serializer writes for each field is what the document promises.
    assert set(component("Tweet")["required"]) == set(Tweet.__dataclass_fields__)
    assert component("Tweet")["properties"]["id"]["type"] == "string"
    assert component("TweetPage")["properties"]["items"]["items"] == ref("Tweet")
