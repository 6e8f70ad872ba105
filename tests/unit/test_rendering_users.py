"""The typed answers rendered as API.md writes them (``warble.http.render``), and named as their
routes' responses in the OpenAPI document. Tests are named by feature (accounts, graph, blocks).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from warble.domain.accounts.answers import (
    Auth,
    LiveSession,
    Me,
    RelatedUser,
    Sessions,
    User,
    UserPage,
)
from warble.domain.accounts.service import IssuedSession
from warble.domain.blocks.answers import Blocking, Muting
from warble.domain.graph.answers import (
    Degree,
    MutualFriends,
    RelationshipItem,
    RelationshipNow,
    Relationships,
)
from warble.domain.graph.service import me_seen, user_seen
from warble.http.meta import openapi_document
from warble.http.render import render

from tests.unit.fakes import World

pytestmark = pytest.mark.unit

USER_KEYS = [
    "id",
    "username",
    "display_name",
    "bio",
    "created_at",
    "followers_count",
    "following_count",
    "tweet_count",
]
RECORD = {
    "id": 7262946581234567168,
    "username": "alice",
    "email": "alice@example.com",
    "admin": False,
    "display_name": "Alice",
    "bio": "hi",
    "created_at": "2026-11-22T06:00:00.000Z",
    "followers_count": 3,
    "following_count": 2,
    "tweet_count": 1,
    "relationship": "followed_by",
}


def _json(answer: Any) -> Any:
    return json.loads(render(answer))


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return json.loads(openapi_document())


def _answer_schema(document: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    responses = document["paths"][path][method]["responses"]
    status = next(code for code in responses if code.startswith("2"))
    schema: dict[str, Any] = responses[status]["content"]["application/json"]["schema"]
    return schema


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


SEEN_USER = {"anyOf": [_ref("RelatedUser"), _ref("User")]}


# ---- accounts ---------------------------------------------------------------------------------
def test_accounts_user_is_rendered_as_api_md_user_without_relationship_for_the_viewer():
    body = _json(user_seen(RECORD, RECORD["id"]))
    assert list(body) == USER_KEYS  # no relationship, no email
    assert body["id"] == "7262946581234567168"  # ids are strings
    assert (body["followers_count"], body["following_count"], body["tweet_count"]) == (3, 2, 1)
    assert list(_json(user_seen(RECORD, None))) == USER_KEYS  # unauthenticated: none either


def test_accounts_user_seen_by_another_carries_the_relationship_and_no_email():
    seen = user_seen(RECORD, 1)
    assert isinstance(seen, RelatedUser)
    body = _json(seen)
    assert list(body) == [*USER_KEYS, "relationship"]
    assert body["relationship"] == "followed_by"


def test_accounts_me_adds_the_email_the_admin_flag_and_no_relationship():
    me = me_seen(RECORD)
    assert isinstance(me, Me)
    body = _json(me)
    assert list(body) == [*USER_KEYS, "email", "admin"]
    assert body["email"] == "alice@example.com" and body["admin"] is False
    assert _json(me_seen({**RECORD, "admin": True}))["admin"] is True


def test_accounts_auth_is_user_token_session_id_and_expiry():
    class Row:  # the stored session: the answer reads its id and expiry
        id = 7262946581234567169
        expires_at = datetime(2026, 12, 22, 6, 0, tzinfo=UTC)

    issued = IssuedSession(user=RECORD, token="tok", session=Row())  # type: ignore[arg-type]
    answer = issued.answer(me_seen(RECORD))
    assert isinstance(answer, Auth)
    body = _json(answer)
    assert list(body) == ["user", "token", "session_id", "expires_at"]
    assert body["user"]["email"] == "alice@example.com" and "relationship" not in body["user"]
    assert body["session_id"] == "7262946581234567169"
    assert body["expires_at"] == "2026-12-22T06:00:00.000Z"


def test_accounts_sessions_list_is_items_of_api_md_sessions():
    body = _json(Sessions([LiveSession("12", "phone", "a", "b", "c", current=True)]))
    assert body == {
        "items": [
            {
                "session_id": "12",
                "device": "phone",
                "created_at": "a",
                "last_seen_at": "b",
                "expires_at": "c",
                "current": True,
            }
        ]
    }


def test_accounts_openapi_names_the_classes_as_the_routes_answers(document):
    assert _answer_schema(document, "post", "/v1/auth/signup") == _ref("Auth")
    assert _answer_schema(document, "post", "/v1/auth/login") == _ref("Auth")
    assert _answer_schema(document, "get", "/v1/auth/sessions") == _ref("Sessions")
    assert _answer_schema(document, "get", "/v1/users/me") == _ref("Me")
    assert _answer_schema(document, "patch", "/v1/users/me") == _ref("Me")
    for path in ("/v1/users/{user_id}", "/v1/users/by-username/{username}"):
        schema = _answer_schema(document, "get", path)
        assert schema["anyOf"] == SEEN_USER["anyOf"], path
    components = document["components"]["schemas"]
    assert components["Me"]["required"] == [*USER_KEYS, "email", "admin"]
    assert components["RelatedUser"]["required"] == [*USER_KEYS, "relationship"]
    assert components["User"]["required"] == USER_KEYS
    assert {"AuthOut", "SessionsOut", "SessionOut"}.isdisjoint(components)


# ---- follow graph -----------------------------------------------------------------------------
def test_graph_pages_of_users_carry_each_ones_relationship_but_the_viewers():
    world = World()
    viewer, star, fan = world.user("viewer"), world.user("star"), world.user("fan")
    world.follow(viewer, star)
    world.follow(fan, star)
    world.follow(star, fan)
    page = world.graph.followers(viewer, star, 20, None)
    assert isinstance(page, UserPage)
    body = _json(page)
    assert list(body) == ["items", "next_cursor"] and body["next_cursor"] is None
    assert [item["id"] for item in body["items"]] == [str(fan), str(viewer)]
    assert body["items"][0]["relationship"] == "none"
    assert list(body["items"][1]) == USER_KEYS  # the viewer: no relationship
    assert body["items"][0]["followers_count"] == 1 and body["items"][0]["following_count"] == 1


def test_graph_follow_answers_and_mutual_friends_and_degrees_render_as_api_md():
    world = World()
    a, b, x = world.user("a"), world.user("b"), world.user("x")
    followed = world.graph.follow(a, b)
    assert isinstance(followed, RelationshipNow)
    assert _json(followed) == {"relationship": "following"}
    assert _json(world.graph.follow(b, a)) == {"relationship": "friends"}
    assert _json(world.graph.unfollow(a, b)) == {"relationship": "followed_by"}
    world.graph.follow(a, b)
    world.graph.follow(x, b)
    world.graph.follow(b, x)
    mutual = world.graph.mutual_friends(a, x)
    assert isinstance(mutual, MutualFriends)
    body = _json(mutual)
    assert body["count"] == 1 and [u["id"] for u in body["items"]] == [str(b)]
    assert body["items"][0]["relationship"] == "friends"
    assert _json(world.graph.degree(a, b)) == {"degree": 1, "label": "1st"}
    assert _json(world.graph.degree(a, x)) == {"degree": 2, "label": "2nd"}
    assert _json(Degree(None, "3rd+")) == {"degree": None, "label": "3rd+"}


def test_graph_relationships_items_are_user_id_status_and_flags():
    answer = Relationships([RelationshipItem("5", "friends", False, True, False)])
    assert _json(answer) == {
        "items": [
            {
                "user_id": "5",
                "status": "friends",
                "blocking": False,
                "blocked_by": True,
                "muting": False,
            }
        ]
    }


def test_graph_openapi_names_the_classes_as_the_routes_answers(document):
    assert _answer_schema(document, "put", "/v1/users/me/following/{user_id}") == _ref(
        "RelationshipNow"
    )
    assert _answer_schema(document, "delete", "/v1/users/me/following/{user_id}") == _ref(
        "RelationshipNow"
    )
    assert _answer_schema(document, "get", "/v1/users/me/relationships") == _ref("Relationships")
    assert _answer_schema(document, "get", "/v1/users/me/mutual-friends/{user_id}") == _ref(
        "MutualFriends"
    )
    assert _answer_schema(document, "get", "/v1/users/me/degree/{user_id}") == _ref("Degree")
    for which in ("following", "followers", "friends"):
        path = f"/v1/users/{{user_id}}/{which}"
        assert _answer_schema(document, "get", path) == _ref("UserPage"), path
    page = document["components"]["schemas"]["UserPage"]
    assert page["properties"]["items"]["items"] == SEEN_USER  # the items are typed
    assert page["required"] == ["items", "next_cursor"]
    components = document["components"]["schemas"]
    assert {"RelationshipOut", "RelationshipsOut", "DegreeOut", "MutualFriendsOut"}.isdisjoint(
        components
    )


# ---- blocks and mutes -------------------------------------------------------------------------
def test_blocks_answers_render_as_api_md():
    assert _json(Blocking(True)) == {"blocking": True}
    assert _json(Blocking(False)) == {"blocking": False}
    assert _json(Muting(True)) == {"muting": True}
    assert _json(Muting(False)) == {"muting": False}
    related = RelatedUser(**{k: RECORD[k] for k in USER_KEYS[1:]}, id="9", relationship="none")
    body = _json(UserPage([related, User(**{k: RECORD[k] for k in USER_KEYS[1:]}, id="8")], "c"))
    assert [list(item) for item in body["items"]] == [[*USER_KEYS, "relationship"], USER_KEYS]
    assert body["next_cursor"] == "c"


def test_blocks_openapi_names_the_classes_as_the_routes_answers(document):
    for method in ("put", "delete"):
        assert _answer_schema(document, method, "/v1/users/me/blocks/{user_id}") == _ref("Blocking")
        assert _answer_schema(document, method, "/v1/users/me/mutes/{user_id}") == _ref("Muting")
    for path in ("/v1/users/me/blocks", "/v1/users/me/mutes"):
        assert _answer_schema(document, "get", path) == _ref("UserPage"), path
    assert {"BlockingOut", "MutingOut"}.isdisjoint(document["components"]["schemas"])
