"""What the follow graph answers (API.md's objects): a follow's outcome, relationships, mutual
friends, the degree of connection."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from warble.domain.accounts.answers import Relationship, SeenUser


@dataclass(slots=True)
class RelationshipNow:
    """A follow's or unfollow's answer: the viewer's relationship to the user afterwards."""

    relationship: Relationship


@dataclass(slots=True)
class RelationshipItem:
    """The viewer's relation to one of the users asked about (``GET /v1/users/me/relationships``):
    the follow status and the block and mute flags."""

    user_id: str
    status: Relationship
    blocking: bool
    blocked_by: bool
    muting: bool


@dataclass(slots=True)
class Relationships:
    items: list[RelationshipItem]


@dataclass(slots=True)
class MutualFriends:
    count: int
    items: list[SeenUser]


@dataclass(slots=True)
class Degree:
    """Degree of connection on the friends graph: 1 to 3, or null (``"3rd+"``) for further."""

    degree: Literal[1, 2, 3] | None
    label: Literal["1st", "2nd", "3rd", "3rd+"]
