"""JSON views of domain records, shaped as API.md's objects."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from warble import clock

if TYPE_CHECKING:
    from warble.domain.accounts.ports import Session


def user(record: dict[str, Any], *, viewer_id: int | None = None, me: bool = False) -> dict:
    body: dict[str, Any] = {
        "id": str(record["id"]),
        "username": record["username"],
        "display_name": record["display_name"],
        "bio": record["bio"],
        "created_at": record["created_at"],
        "followers_count": record.get("followers_count", 0),
        "following_count": record.get("following_count", 0),
        "tweet_count": record.get("tweet_count", 0),
    }
    if me:
        body["email"] = record["email"]
    elif viewer_id is not None and viewer_id != record["id"]:
        body["relationship"] = record.get("relationship", "none")
    return body


def session(row: Session, current: bool) -> dict[str, Any]:
    return {
        "session_id": str(row.id),
        "device": row.device,
        "created_at": clock.rfc3339(row.created_at),
        "last_seen_at": clock.rfc3339(row.last_seen_at),
        "expires_at": clock.rfc3339(row.expires_at),
        "current": current,
    }


def user_page(users: list[dict[str, Any]], next_cursor: str | None, viewer: int) -> dict[str, Any]:
    """A page of Users as API.md's lists answer it."""
    return {
        "items": [user(record, viewer_id=viewer) for record in users],
        "next_cursor": next_cursor,
    }
