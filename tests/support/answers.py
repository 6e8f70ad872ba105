"""What the rendering tests share (``tests/unit/test_rendering_*.py``, ``test_render.py``,
``test_tweet_cache.py``): a user summary and a time as API.md writes them, what the OpenAPI
document says of a route's answer, and a tweet's media copies as Hypothesis draws them."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from hypothesis import strategies as st
from warble.domain.media.answers import MediaJson, encoded_media
from warble.domain.media.ports import AttachedMedia
from warble.domain.shared import UserSummary

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


# A cached tweet's media: its text as the tweet cache makes it (pydantic writes what it holds).
# Registered here, where every test that draws a Tweet gets it by importing ATTACHED.
st.register_type_strategy(
    MediaJson, st.lists(ATTACHED, max_size=3).map(lambda m: MediaJson(encoded_media(m, "u")))
)
