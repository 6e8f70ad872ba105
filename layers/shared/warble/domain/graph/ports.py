"""What the follow graph needs of its store (``warble.dal.graph``), and its errors."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from warble.domain.accounts.ports import Relationship, SeenUser


class GraphStore(Protocol):
    reads: int

    def pair(self, a: int, b: int) -> tuple[Any, Any]: ...
    def statuses(self, viewer: int, others: list[int]) -> dict[int, tuple[bool, bool]]: ...
    def followers_among(self, user_id: int, others: list[int]) -> set[int]: ...
    def following_counts(self, user_ids: list[int]) -> dict[int, int]: ...
    def follow(self, a: int, b: int, seq: int, reverse: Any, limit: int) -> bool: ...
    def unfollow(self, a: int, b: int, edge: Any, reverse: Any) -> None: ...
    def page(
        self, user_id: int, which: str, limit: int, before_seq: int | None
    ) -> tuple[list[tuple[int, int]], bool]: ...
    def friends_page(
        self, user_id: int, limit: int, after_id: int | None
    ) -> tuple[list[int], bool]: ...
    def friends(self, user_id: int) -> list[int]: ...
    def following_seqs(self, user_id: int) -> dict[int, int]: ...
    def friend_edges(self) -> Iterable[tuple[int, int]]: ...
    def follow_edges(self) -> Iterator[tuple[int, int]]: ...
    def restriction(self, a: int, b: int, kind: str) -> int | None: ...
    def restrictions(self, user_id: int) -> list[tuple[str, int, int]]: ...
    def restricted_pairs(self, pairs: list[tuple[int, int]]) -> set[tuple[int, int]]: ...
    def block(self, a: int, b: int, seq: int, out: Any, into: Any) -> None: ...
    def unblock(self, a: int, b: int, seq: int) -> None: ...
    def mute(self, a: int, b: int, seq: int) -> None: ...
    def unmute(self, a: int, b: int, seq: int) -> None: ...
    def count_followers(self, user_id: int) -> int: ...
    def second_degree(self, user_id: int) -> set[int]: ...
    def save_second_degree(self, sets: Iterable[tuple[int, set[int]]]) -> int: ...
    def users_with_second_degree(self) -> set[int]: ...


class FollowRejected(Exception):
    """The follow/unfollow transaction was cancelled; ``reason`` says why."""

    LIMIT = "limit"  # following_count is at the limit
    EXISTS = "exists"  # the edge appeared meanwhile (a concurrent identical follow)
    RACED = "raced"  # an edge changed since it was read: read again and retry
    BLOCKED = "blocked"  # a block stands between the two users
    CONFLICT = "conflict"  # another transaction held an item, or throttling: retry

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# ---- what the service answers (API.md's objects) ------------------------------------------------
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
