"""Notifications and unread counts as the domain answers them, rendered to API.md's JSON by
the HTTP layer's serializer (``warble.http.render``: field names, ids as strings, ``tweet_deleted``
only where the tweet is gone), and documented by the same classes in the OpenAPI document."""

from __future__ import annotations

import json

import pytest
from warble.domain.notifications.answers import (
    Notification,
    NotificationOfDeletedTweet,
    NotificationPage,
    UnreadCounts,
)
from warble.http.render import render

from tests.support.answers import ALICE, ALICE_JSON, AT, component, ref, response_component

pytestmark = pytest.mark.unit


def test_notifications_render_as_api_md_says():
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
    counts = UnreadCounts(1, 2, 3, 4, 5, 6, 7, 8, 9, 45)
    assert json.loads(render(counts)) == {
        "follow": 1, "like": 2, "reply": 3, "mention": 4, "retweet": 5, "message": 6,
        "match": 7, "system": 8, "home": 9, "total": 45,
    }  # fmt: skip


def test_the_openapi_document_names_the_notification_classes():
    assert response_component("get", "/v1/notifications", "200") == "NotificationPage"
    assert response_component("get", "/v1/notifications/unread-counts", "200") == "UnreadCounts"
    assert response_component("post", "/v1/admin/system-notifications", "201") == "Notification"
    items = component("NotificationPage")["properties"]["items"]["items"]
    assert items["anyOf"] == [ref("Notification"), ref("NotificationOfDeletedTweet")]
    actor = component("Notification")["properties"]["actor"]
    assert ref("UserSummary") in actor["anyOf"]
