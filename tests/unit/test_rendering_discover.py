"""Discover's answers (people nearby, swipes, matches) as the domain answers them, rendered to
API.md's JSON by the HTTP layer's serializer (``warble.http.render``), and documented by the
same classes in the OpenAPI document."""

from __future__ import annotations

import json

import pytest
from warble.domain.accounts.answers import RelatedUser
from warble.domain.discover.answers import Match, MatchPage, NearbyUser, NearbyUsers, SwipeAnswer
from warble.http.render import render

from tests.support.answers import AT, component, ref, response_component

pytestmark = pytest.mark.unit

USER_JSON = {
    "id": "43", "username": "bob", "display_name": "Bob", "bio": "", "created_at": AT,
    "followers_count": 1, "following_count": 2, "tweet_count": 3, "relationship": "none",
}  # fmt: skip


def test_discover_renders_as_api_md_says():
    fields = ("43", "bob", "Bob", "", AT, 1, 2, 3, "none")
    nearby = NearbyUsers([NearbyUser(*fields, 1.25), NearbyUser(*fields, 12.0)])
    # A User and its distance; a page of them has no cursor.
    assert json.loads(render(nearby)) == {
        "items": [{**USER_JSON, "distance_km": 1.25}, {**USER_JSON, "distance_km": 12.0}]
    }
    assert json.loads(render(SwipeAnswer(True, "77"))) == {"matched": True, "conversation_id": "77"}
    assert json.loads(render(SwipeAnswer(False, None))) == {
        "matched": False,
        "conversation_id": None,
    }
    match = Match(RelatedUser(*fields), "77", AT)
    assert json.loads(render(MatchPage([match], "c"))) == {
        "items": [{"user": USER_JSON, "conversation_id": "77", "matched_at": AT}],
        "next_cursor": "c",
    }


def test_the_openapi_document_names_the_discover_classes():
    assert response_component("get", "/v1/discover", "200") == "NearbyUsers"
    assert response_component("post", "/v1/discover/swipes", "200") == "SwipeAnswer"
    assert response_component("get", "/v1/discover/matches", "200") == "MatchPage"
    nearby = component("NearbyUsers")
    assert nearby["required"] == ["items"]
    assert nearby["properties"]["items"]["items"] == ref("NearbyUser")
    assert set(component("NearbyUser")["required"]) == {*USER_JSON, "distance_km"}
    matches = component("MatchPage")["properties"]["items"]["items"]
    assert matches == ref("Match")
    assert component("Match")["properties"]["user"] == {"$ref": "#/components/schemas/RelatedUser"}
