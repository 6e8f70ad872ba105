"""The follow graph (API.md "Follow graph"), blocks and mutes included."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
)

from warble.schemas.accounts import Relationship, UserOut
from warble.schemas.base import _Model


class RelationshipOut(_Model):
    relationship: Relationship


class UserPageOut(_Model):
    items: list[UserOut]
    next_cursor: str | None = Field(description="Opaque; null when there is nothing more")


class RelationshipItemOut(_Model):
    user_id: str
    status: Relationship
    blocking: bool = Field(description="I block them")
    blocked_by: bool = Field(description="They block me")
    muting: bool = Field(description="I mute them")


class BlockingOut(_Model):
    blocking: bool


class MutingOut(_Model):
    muting: bool


class RelationshipsOut(_Model):
    items: list[RelationshipItemOut]


class MutualFriendsOut(_Model):
    count: int
    items: list[UserOut]


class DegreeOut(_Model):
    degree: Literal[1, 2, 3] | None
    label: Literal["1st", "2nd", "3rd", "3rd+"]
