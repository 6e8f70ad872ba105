"""What the rendering tests share (``tests/unit/test_rendering_*.py``, ``test_render.py``,
``test_tweet_cache.py``): a user summary and a time as API.md writes them, what the OpenAPI
document says of a route's answer, and a tweet's media copies as Hypothesis draws them."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import msgspec
from hypothesis import strategies as st
from warble.domain.media.ports import AttachedMedia
from warble.domain.shared import UserSummary
from warble.domain.tweets.answers import TweetJson, summary_json, tweet_parts
from warble.domain.tweets.ports import StoredTweet

ALICE = UserSummary("7262946581234567168", "alice", "Alice")
ALICE_JSON = {"id": "7262946581234567168", "username": "alice", "display_name": "Alice"}
AT = "2026-11-22T06:00:00.000Z"

# A tweet's copy of one of its media: any text in the keys, blurhash and alt text (quotes,
# backslashes, emoji, control characters).
ATTACHED = st.builds(
    AttachedMedia,
    id=st.integers(1, 2**62),
    content_type=st.sampled_from(["image/png", "image/jpeg", "image/webp"]),
    size=st.integers(0, 10**8),
    width=st.integers(1, 20_000),
    height=st.integers(1, 20_000),
    original_key=st.text(),
    preview_key=st.text(),
    blurhash=st.text(),
    alt_text=st.text(),
    created_at_ms=st.integers(0, 4 * 10**12),
    rev=st.integers(0, 5),
)


@cache
def document() -> dict[str, Any]:
    """The API's OpenAPI document (built once per test process)."""
    from warble.http.meta import openapi_document

    return json.loads(openapi_document())  # type: ignore[no-any-return]


def response_component(method: str, path: str, status: str) -> str:
    """The name of the component a route's answer refers to."""
    content = document()["paths"][path][method]["responses"][status]["content"]
    return str(content["application/json"]["schema"]["$ref"]).rpartition("/")[2]


def component(name: str) -> dict[str, Any]:
    return document()["components"]["schemas"][name]  # type: ignore[no-any-return]


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


# A stored tweet: any text, tags and media ids, up to 4 media, maybe a reply.
STORED = st.builds(
    StoredTweet,
    id=st.integers(1, 2**63 - 1),
    author_id=st.integers(1, 2**63 - 1),
    text=st.text(),
    created_at_ms=st.integers(0, 4 * 10**12),
    reply_to=st.none() | st.integers(1, 2**63 - 1),
    media_ids=st.lists(st.text(), max_size=4).map(tuple),
    media=st.lists(ATTACHED, max_size=4).map(tuple),
    hashtags=st.lists(st.text(), max_size=3).map(tuple),
)
SUMMARIES = st.builds(UserSummary, id=st.text(), username=st.text(), display_name=st.text())


def _spliced(tweet: StoredTweet, author: UserSummary, counts: list[int], flags: bool) -> TweetJson:
    rendered = msgspec.structs.replace(tweet, shown=tweet_parts(tweet, "u"))
    return TweetJson(rendered, author, summary_json(author), None, *counts, flags, not flags)


# A tweet spliced from its cached parts (pydantic writes what it holds). Registered here, where
# every test that draws a Tweet page gets it by importing ATTACHED.
st.register_type_strategy(
    TweetJson,
    st.builds(
        _spliced,
        STORED,
        SUMMARIES,
        st.lists(st.integers(0, 2**31), min_size=3, max_size=3),
        st.booleans(),
    ),
)
