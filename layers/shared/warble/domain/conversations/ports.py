"""What direct messages need of their stores (``warble.dal.conversations``, ``dm_unread``), of
the follow graph and of blocks, and the errors a message's transaction raises."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from warble import clock
from warble.domain.conversations.answers import Message
from warble.ids import decompose


@dataclass(frozen=True)
class StoredMessage:
    """A direct message as stored; its time is its Snowflake id's."""

    id: int
    conversation_id: int
    sender_id: int
    text: str
    created_at_ms: int

    @classmethod
    def of(cls, message_id: int, conversation_id: int, sender_id: int, text: str) -> StoredMessage:
        return cls(message_id, conversation_id, sender_id, text, decompose(message_id)[0])

    def answer(self) -> Message:
        """API.md's Message."""
        return Message(
            str(self.id),
            str(self.conversation_id),
            str(self.sender_id),
            self.text,
            clock.rfc3339_ms(self.created_at_ms),
        )

    def record(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "conversation_id": self.conversation_id,
            "sender_id": self.sender_id,
            "text": self.text,
            "created_at_ms": self.created_at_ms,
        }


@dataclass(frozen=True)
class Membership:
    """One participant's side of a conversation: read position, unread count, last message."""

    user_id: int
    conversation_id: int
    other_id: int
    last_id: int  # the newest message's id (the conversation's own before any message)
    last_read: int
    unread: int
    last_message: StoredMessage | None


class ConversationStore(Protocol):
    """Conversations, messages and matches (``warble.dal.conversations``)."""

    def conversation_of(self, a: int, b: int) -> int | None: ...
    def create(self, conversation_id: int, a: int, b: int) -> int: ...
    def record_match(self, a: int, b: int, matched_at_ms: int) -> bool: ...
    def matched(self, a: int, b: int) -> bool: ...
    def membership(self, user_id: int, conversation_id: int) -> Membership | None: ...
    def memberships_page(
        self, user_id: int, before_last_id: int | None, limit: int
    ) -> list[Membership]: ...
    def all_memberships(self, user_id: int) -> Iterator[Membership]: ...
    def mark_read(self, membership: Membership) -> bool: ...
    def append(self, message: StoredMessage, recipient: int, client_id: str | None) -> None: ...
    def resent(
        self, conversation_id: int, sender_id: int, client_id: str
    ) -> StoredMessage | None: ...
    def history(
        self, conversation_id: int, before_id: int | None, limit: int
    ) -> list[StoredMessage]: ...
    def find_message(
        self, conversation_ids: list[int], message_id: int
    ) -> StoredMessage | None: ...
    def remove_message(self, conversation_id: int, message_id: int) -> None: ...


class UnreadMessages(Protocol):
    """The ``dm_unread`` hash per user (``warble.dal.dm_unread``): a cache of the memberships'
    unread counters, rebuilt from them when missing."""

    def counts(self, user_id: int) -> dict[int, int] | None: ...
    def rebuild(self, user_id: int, load: Callable[[], dict[int, int]]) -> dict[int, int]: ...
    def increment(self, user_id: int, conversation_id: int) -> None: ...
    def clear(self, user_id: int, conversation_id: int) -> None: ...


class MessageRaced(Exception):
    """A message with a larger id committed first in this conversation: send with a new id."""


class DuplicateClientId(Exception):
    """The sender's ``client_id`` already names a message in this conversation."""


class Relationships(Protocol):
    """The follow graph's view of a pair (``GraphService.relationships``)."""

    def relationships(self, viewer: int, user_ids: list[int]) -> list[tuple[int, str]]: ...


class BlockChecks(Protocol):
    """Whether a block stands between two users (``Shields.blocked_between``)."""

    def blocked_between(self, a: int, b: int) -> bool: ...
