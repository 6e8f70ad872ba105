"""Direct messages (API.md "Direct messages"), over HTTP and the WebSocket API."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
)

from warble.ids import SNOWFLAKE_PATTERN
from warble.schemas.base import _Request


class OpenConversation(_Request):
    participant_id: str = Field(pattern=SNOWFLAKE_PATTERN, description="the other user's id")


class SendMessage(_Request):
    # The 2000-character rule applies after NFC normalisation (warble.domain.conversations).
    text: str = Field(
        max_length=8000,
        description="1 to 2000 characters after NFC normalisation, not only white space",
        json_schema_extra={"minLength": 1, "maxLength": 2000, "pattern": r"\S"},
    )


class SendMessageFrame(SendMessage):
    """The WebSocket ``sendMessage`` frame (``action`` selected the route)."""

    action: Literal["sendMessage"]
    conversation_id: str = Field(pattern=SNOWFLAKE_PATTERN)
    client_id: str | None = Field(default=None, min_length=1, max_length=64)
