"""What direct messages answer (API.md's objects): a Message, a Conversation, their pages."""

from __future__ import annotations

from dataclasses import dataclass

from warble.domain.shared import Page, UserSummary


@dataclass(slots=True)
class Message:
    """API.md's Message (also the data of the WebSocket ``message`` event)."""

    id: str
    conversation_id: str
    sender_id: str
    text: str
    created_at: str


@dataclass(slots=True)
class Conversation:
    """API.md's Conversation: both participants (by id), the newest message, and how many of
    the other participant's messages the viewer has not read."""

    id: str
    participants: list[UserSummary]
    last_message: Message | None
    unread_count: int


@dataclass(slots=True)
class ConversationPage(Page[Conversation]):
    items: list[Conversation]


@dataclass(slots=True)
class MessagePage(Page[Message]):
    items: list[Message]
