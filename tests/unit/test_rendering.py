"""The domain's typed answers as the API writes them (``warble.http.render``): each class's JSON
has API.md's field names, ids as strings, and an optional field absent where API.md says so;
and the OpenAPI document names the class as its route's response."""

from __future__ import annotations

import json
from typing import Any

import pytest
from warble.domain.shared import UserSummary
from warble.http.meta import openapi_document
from warble.http.render import render

pytestmark = pytest.mark.unit

ALICE = UserSummary("7262946581234567168", "alice", "Alice")
ALICE_JSON = {"id": "7262946581234567168", "username": "alice", "display_name": "Alice"}
AT = "2026-11-22T06:00:00.000Z"


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return json.loads(openapi_document())


def response_schema(document: dict[str, Any], method: str, path: str, status: str) -> str:
    """The component a route's answer names."""
    content = document["paths"][path][method]["responses"][status]["content"]
    return str(content["application/json"]["schema"]["$ref"]).rpartition("/")[2]


def component(document: dict[str, Any], name: str) -> dict[str, Any]:
    return document["components"]["schemas"][name]


# ---- notifications ----------------------------------------------------------------------------
def test_notifications_render_as_api_md_says():
    from warble.domain.notifications.ports import (
        Notification,
        NotificationOfDeletedTweet,
        NotificationPage,
    )

    liked = Notification("11", "like", ALICE, "12", None, None, AT, False)
    system = Notification("13", "system", None, None, "Hello", "Everyone", AT, True)
    gone = NotificationOfDeletedTweet("14", "reply", ALICE, None, None, None, AT, False, True)
    common = {"title": None, "body": None, "created_at": AT, "read": False}
    assert json.loads(render(liked)) == {
        "id": "11", "type": "like", "actor": ALICE_JSON, "tweet_id": "12", **common,
    }  # fmt: skip
    assert json.loads(render(system)) == {
        "id": "13", "type": "system", "actor": None, "tweet_id": None, "title": "Hello",
        "body": "Everyone", "created_at": AT, "read": True,
    }  # fmt: skip
    page = json.loads(render(NotificationPage([liked, gone], "c")))
    assert page["next_cursor"] == "c"
    # ``tweet_deleted`` only where the tweet is gone, absent on the others.
    assert "tweet_deleted" not in page["items"][0]
    assert page["items"][1] == {
        "id": "14", "type": "reply", "actor": ALICE_JSON, "tweet_id": None, **common,
        "tweet_deleted": True,
    }  # fmt: skip


def test_unread_counts_render_as_api_md_says():
    from warble.domain.notifications.ports import UnreadCounts

    counts = UnreadCounts(1, 2, 3, 4, 5, 6, 7, 8, 9, 45)
    assert json.loads(render(counts)) == {
        "follow": 1, "like": 2, "reply": 3, "mention": 4, "retweet": 5, "message": 6,
        "match": 7, "system": 8, "home": 9, "total": 45,
    }  # fmt: skip


def test_the_openapi_document_names_the_notification_classes(document):
    assert response_schema(document, "get", "/v1/notifications", "200") == "NotificationPage"
    assert (
        response_schema(document, "get", "/v1/notifications/unread-counts", "200") == "UnreadCounts"
    )
    assert (
        response_schema(document, "post", "/v1/admin/system-notifications", "201") == "Notification"
    )
    items = component(document, "NotificationPage")["properties"]["items"]["items"]
    assert {ref["$ref"].rpartition("/")[2] for ref in items["anyOf"]} == {
        "Notification",
        "NotificationOfDeletedTweet",
    }
    actor = component(document, "Notification")["properties"]["actor"]
    assert {"$ref": "#/components/schemas/UserSummary"} in actor["anyOf"]


# ---- conversations ----------------------------------------------------------------------------
class RecordingPusher:
    """The push port: keeps the frames it was given."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []

    def push(self, user_ids: Any, frame: dict[str, Any], skip: str | None = None) -> None:
        self.frames.append(frame)


def test_conversations_render_as_api_md_says():
    from warble.domain.conversations.ports import (
        Conversation,
        ConversationPage,
        MessagePage,
        StoredMessage,
    )

    stored = StoredMessage.of(7262946581234567169, 7262946581234567170, 42, "héllo")
    message = stored.answer()
    message_json = {
        "id": "7262946581234567169", "conversation_id": "7262946581234567170",
        "sender_id": "42", "text": "héllo", "created_at": message.created_at,
    }  # fmt: skip
    assert json.loads(render(message)) == message_json
    assert message.created_at.endswith("Z") and len(message.created_at) == len(AT)
    bob = UserSummary("43", "bob", "Bob")
    conversation = Conversation("7262946581234567170", [ALICE, bob], message, 2)
    conversation_json = {
        "id": "7262946581234567170",
        "participants": [ALICE_JSON, {"id": "43", "username": "bob", "display_name": "Bob"}],
        "last_message": message_json,
        "unread_count": 2,
    }
    assert json.loads(render(conversation)) == conversation_json
    empty = Conversation("1", [ALICE, bob], None, 0)
    assert json.loads(render(empty))["last_message"] is None
    assert json.loads(render(ConversationPage([conversation], None))) == {
        "items": [conversation_json],
        "next_cursor": None,
    }
    assert json.loads(render(MessagePage([message], "c"))) == {
        "items": [message_json],
        "next_cursor": "c",
    }


def test_a_message_frame_carries_the_message_as_the_http_answer_writes_it():
    from warble.domain.conversations.ports import StoredMessage
    from warble.domain.conversations.service import ConversationService, Sent

    pusher = RecordingPusher()
    service = ConversationService(None, None, None, None, None, pusher, None)
    sent = Sent(StoredMessage.of(7262946581234567169, 5, 42, "héllo"), 43, created=True)
    service.announce(sent)
    (frame,) = pusher.frames
    assert frame["type"] == "message"
    # The same fields in the same order: the frame's JSON text is what it was as a dict.
    assert list(frame["data"].items()) == list(json.loads(render(sent.view())).items())


def test_the_openapi_document_names_the_conversation_classes(document):
    path = "/v1/conversations"
    assert response_schema(document, "post", path, "201") == "Conversation"
    assert response_schema(document, "post", path, "200") == "Conversation"
    assert response_schema(document, "get", path, "200") == "ConversationPage"
    messages = "/v1/conversations/{conversation_id}/messages"
    assert response_schema(document, "get", messages, "200") == "MessagePage"
    assert response_schema(document, "post", messages, "201") == "Message"
    for page, item in (("ConversationPage", "Conversation"), ("MessagePage", "Message")):
        items = component(document, page)["properties"]["items"]["items"]
        assert items == {"$ref": f"#/components/schemas/{item}"}
    participants = component(document, "Conversation")["properties"]["participants"]
    assert participants["items"] == {"$ref": "#/components/schemas/UserSummary"}


# ---- discover ---------------------------------------------------------------------------------
USER_JSON = {
    "id": "43", "username": "bob", "display_name": "Bob", "bio": "", "created_at": AT,
    "followers_count": 1, "following_count": 2, "tweet_count": 3, "relationship": "none",
}  # fmt: skip


def test_discover_renders_as_api_md_says():
    from warble.domain.discover.ports import (
        DiscoverUser,
        Match,
        MatchPage,
        NearbyUser,
        NearbyUsers,
        SwipeAnswer,
    )

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
    match = Match(DiscoverUser(*fields), "77", AT)
    assert json.loads(render(MatchPage([match], "c"))) == {
        "items": [{"user": USER_JSON, "conversation_id": "77", "matched_at": AT}],
        "next_cursor": "c",
    }


def test_the_openapi_document_names_the_discover_classes(document):
    assert response_schema(document, "get", "/v1/discover", "200") == "NearbyUsers"
    assert response_schema(document, "post", "/v1/discover/swipes", "200") == "SwipeAnswer"
    assert response_schema(document, "get", "/v1/discover/matches", "200") == "MatchPage"
    nearby = component(document, "NearbyUsers")
    assert nearby["required"] == ["items"]
    assert nearby["properties"]["items"]["items"] == {"$ref": "#/components/schemas/NearbyUser"}
    assert set(component(document, "NearbyUser")["required"]) == {*USER_JSON, "distance_km"}
    matches = component(document, "MatchPage")["properties"]["items"]["items"]
    assert matches == {"$ref": "#/components/schemas/Match"}
    assert component(document, "Match")["properties"]["user"] == {
        "$ref": "#/components/schemas/DiscoverUser"
    }
