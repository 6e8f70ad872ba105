"""What accounts answer (API.md's objects): a User as others and as its owner read it, a page
of Users, sign-up's and login's answer, the live sessions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from warble.domain.shared import Page

Relationship = Literal["none", "following", "followed_by", "friends"]


@dataclass(frozen=True)
class Principal:
    """Who a request is: the signed-in user and the session its token belongs to."""

    user_id: int
    session_id: int


@dataclass(slots=True)
class User:
    """API.md's User as its viewer sees it (or an unauthenticated answer): no relationship."""

    id: str
    username: str
    display_name: str
    bio: str
    created_at: str
    followers_count: int
    following_count: int
    tweet_count: int


def user_values(record: dict[str, Any]) -> tuple[str, str, str, str, str, int, int, int]:
    """The fields every User has, in ``User``'s order, from a hydrated record (a profile with
    its counts, ``GraphService.users``): a page of 20 built from positional values costs half
    what keyword arguments would."""
    return (
        str(record["id"]),
        record["username"],
        record["display_name"],
        record["bio"],
        record["created_at"],
        record.get("followers_count", 0),
        record.get("following_count", 0),
        record.get("tweet_count", 0),
    )


@dataclass(slots=True)
class RelatedUser(User):
    """A User seen by another user: with the viewer's relationship to them."""

    relationship: Relationship


@dataclass(slots=True)
class Me(User):
    """``GET /v1/users/me`` and the user of a sign-up or login: a User with its email, and
    whether it is an admin (a moderator: a client shows the moderators' screens by it)."""

    email: str
    admin: bool


# A User as a viewer reads it: someone else (the common case, first: the serializer tries the
# union's classes in order) or the viewer themselves (no relationship).
SeenUser = RelatedUser | User


@dataclass(slots=True)
class UserPage(Page[SeenUser]):
    """A page of Users, each as the viewer sees it (the viewer may be among them)."""

    items: list[SeenUser]  # named again (domain/shared.py's Page says why)


@dataclass(slots=True)
class Auth:
    """What sign-up and login answer: the user, the new session's token, id and expiry."""

    user: Me
    token: str
    session_id: str
    expires_at: str


@dataclass(slots=True)
class LiveSession:
    session_id: str
    device: str
    created_at: str
    last_seen_at: str
    expires_at: str
    current: bool


@dataclass(slots=True)
class Sessions:
    items: list[LiveSession]


@dataclass(slots=True)
class SocketTicket:
    """``POST /v1/auth/socket-ticket``: a single-use ticket for one WebSocket connect."""

    ticket: str
    expires_at: str
