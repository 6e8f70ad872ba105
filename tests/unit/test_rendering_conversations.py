"""Conversations and messages as the domain answers them, rendered to API.md's JSON by the
HTTP layer's serializer (``warble.http.render``), documented by the same classes in the OpenAPI
document; and the WebSocket frame that carries a message writes it as the HTTP answer does."""

from __future__ import annotations

import json
from typing import Any

import pytest
from warble.domain.conversations.answers import Conversation, ConversationPage, MessagePage
from warble.domain.conversations.ports import StoredMessage
from warble.domain.conversations.service import ConversationService, Sent
from warble.domain.shared import UserSummary
from warble.http.render import render

from tests.support.answers import ALICE, ALICE_JSON, AT, component, ref, response_component

pytestmark = pytest.mark.unit


class RecordingPusher:
    """The push port: keeps the frames it was given."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []

    def push(self, user_ids: Any, frame: dict[str, Any], skip: str | None = None) -> None:
        self.frames.append(frame)


def test_conversations_render_as_api_md_says():
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
    pusher = RecordingPusher()
    service = ConversationService(None, None, None, None, None, pusher, None)
    sent = Sent(StoredMessage.of(7262946581234567169, 5, 42, "héllo"), 43, created=True)
    service.announce(sent)
    (frame,) = pusher.frames
    assert frame["type"] == "message"
    # The same fields in the same order: the frame's JSON text is what it was as a dict.
    assert list(frame["data"].items()) == list(json.loads(render(sent.view())).items())


def test_the_openapi_document_names_the_conversation_classes():
    path = "/v1/conversations"
    assert response_component("post", path, "201") == "Conversation"
    assert response_component("post", path, "200") == "Conversation"
    assert response_component("get", path, "200") == "ConversationPage"
    messages = "/v1/conversations/{conversation_id}/messages"
    assert response_component("get", messages, "200") == "MessagePage"
    assert response_component("post", messages, "201") == "Message"
    for page, item in (("ConversationPage", "Conversation"), ("MessagePage", "Message")):
        items = component(page)["properties"]["items"]["items"]
        assert items == ref(item)
    participants = component("Conversation")["properties"]["participants"]
    assert participants["items"] == ref("UserSummary")
