"""Notifications and unread counts (API.md "Notifications")."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from warble.schemas.base import _Request

CountType = Literal[
    "follow", "like", "reply", "mention", "retweet", "match", "system", "message", "home"
]


class MarkRead(_Request):
    """Exactly one of ``types`` (some count fields but ``total``) and ``all: true``."""

    model_config = ConfigDict(
        json_schema_extra={"oneOf": [{"required": ["types"]}, {"required": ["all"]}]}
    )

    types: list[CountType] = Field(default=None, min_length=1, max_length=9)  # type: ignore[arg-type]
    all: Literal[True] = Field(default=None)  # type: ignore[arg-type]

    @model_validator(mode="after")
    def _one_of(self) -> MarkRead:
        if (self.types is None) == (self.all is None):
            raise ValueError("give either types or all, not both and not neither")
        return self


class SystemNotificationIn(_Request):
    title: str = Field(min_length=1, max_length=100, pattern=r"\S")
    body: str = Field(min_length=1, max_length=2000, pattern=r"\S")

    @field_validator("title", "body")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be only white space")
        return value
