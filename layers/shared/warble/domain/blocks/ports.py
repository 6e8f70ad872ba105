"""What blocks and mutes need of their stores (``warble.dal.blocks``), and the refusals a
write's transaction raises when a block stands in its way."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from warble.domain.shared import (
    Later,
    ReadBatch,
    Writes,
)


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


class BlockedByAuthor(Exception):
    """A like, reply or retweet refused in its transaction: the tweet's author blocks the user."""


class PairBlocked(Exception):
    """A message refused in its transaction: a block stands between the two users."""


# ---- what the service answers (API.md's objects) ------------------------------------------------
@dataclass(slots=True)
class Blocking:
    """A block's or unblock's answer: whether the viewer blocks the user now."""

    blocking: bool


@dataclass(slots=True)
class Muting:
    """A mute's or unmute's answer: whether the viewer mutes the user now."""

    muting: bool
