"""What blocks and mutes need of their stores (``warble.dal.blocks``, ``warble.dal.graph``) and of
the follow graph, and the refusals a write's transaction raises when a block stands in its
way."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from warble.domain.accounts.answers import Relationship, UserPage
from warble.domain.shared import Later, ReadBatch, Writes


@dataclass(frozen=True)
class Shield:
    """A user's blocks and mutes as held in memory: whom the user blocks, who blocks the user,
    whom the user mutes (warble.dal.blocks)."""

    blocking: frozenset[int] = frozenset()
    blocked_by: frozenset[int] = frozenset()
    muting: frozenset[int] = frozenset()

    @property
    def blocked(self) -> frozenset[int]:
        """Either side of a block: the people whose tweets and replies the user never sees."""
        return self.blocking | self.blocked_by

    @property
    def hidden(self) -> frozenset[int]:
        """Blocked either way or muted: left out of the home timeline and its count."""
        return self.blocking | self.blocked_by | self.muting


class BlockSets(Protocol):
    """Each user's blocks hash in memory (``warble.dal.blocks``)."""

    def batch(self) -> ReadBatch: ...
    def read_later(self, batch: ReadBatch, owner: int) -> Later[Shield | None]: ...
    def check_later(
        self, batch: ReadBatch, owner: int, others: Iterable[int]
    ) -> Later[Shield | None]: ...
    def rebuild(self, owner: int, load: Callable[[], list[tuple[str, int, int]]]) -> Shield: ...
    def apply(self, owner: int, kind: str, other: int, seq: int, present: bool) -> None: ...
    def apply_later(
        self, writes: Writes, owner: int, kind: str, other: int, seq: int, present: bool
    ) -> None: ...


class BlockStore(Protocol):
    """Block and mute records and their lists, in the graph table beside the follow edges a
    block ends (``warble.dal.graph``); a write changed meanwhile raises ``FollowRejected``."""

    def pair(self, a: int, b: int) -> tuple[Any, Any]: ...
    def page(
        self, user_id: int, which: str, limit: int, before_seq: int | None
    ) -> tuple[list[tuple[int, int]], bool]: ...
    def restriction(self, a: int, b: int, kind: str) -> int | None: ...
    def restrictions(self, user_id: int) -> list[tuple[str, int, int]]: ...
    def restricted_pairs(self, pairs: list[tuple[int, int]]) -> set[tuple[int, int]]: ...
    def block(self, a: int, b: int, seq: int, out: Any, into: Any) -> None: ...
    def unblock(self, a: int, b: int, seq: int) -> None: ...
    def mute(self, a: int, b: int, seq: int) -> None: ...
    def unmute(self, a: int, b: int, seq: int) -> None: ...


class Follows(Protocol):
    """What blocks need of the follow graph (``GraphService``): a block ends follows, and the
    lists and relationships show Users and statuses as the graph reads them."""

    def changed(self, follower: int, followee: int) -> None: ...
    def user_page(self, viewer: int, user_ids: list[int], next_cursor: str | None) -> UserPage: ...
    def relationships_later(
        self, batch: ReadBatch, viewer: int, user_ids: list[int]
    ) -> Later[list[tuple[int, Relationship]]]: ...


class BlockedByAuthor(Exception):
    """A like, reply or retweet refused in its transaction: the tweet's author blocks the user."""


class PairBlocked(Exception):
    """A message refused in its transaction: a block stands between the two users."""
