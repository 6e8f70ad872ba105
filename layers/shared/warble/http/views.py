"""JSON views of user records for the answers not typed yet (Discover, a tweet's likers); the
follow graph's are ``warble.domain.graph.service.user_seen``."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from warble.domain.accounts.ports import User
from warble.domain.graph.service import user_values

_USER_FIELDS = tuple(field.name for field in fields(User))


def user(record: dict[str, Any], *, viewer_id: int | None = None, me: bool = False) -> dict:
    body = dict(zip(_USER_FIELDS, user_values(record), strict=True))
    if me:
        body["email"] = record["email"]
    elif viewer_id is not None and viewer_id != record["id"]:
        body["relationship"] = record.get("relationship", "none")
    return body
