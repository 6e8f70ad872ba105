"""What Discover needs of its stores (``warble.dal.discover``, ``discover_table``) and of the
other features: conversations, Users, blocks, push."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class StoredLocation:
    user_id: int
    lat: float
    lon: float
    cell: str


@dataclass(frozen=True)
class MatchRecord:
    """A match as stored: ``a`` and ``b`` (in a user's list, ``a`` is that user), the pair's
    conversation, when (epoch ms), and ``seq`` (the list position; 0 for the pair record)."""

    a: int
    b: int
    conversation_id: int
    matched_at_ms: int
    seq: int


@dataclass(frozen=True)
class FeedTake:
    """What a discover page took off the user's feed of candidates, and the feed's state for
    a refill when it ran dry."""

    entries: list[tuple[int, float]]  # (user id, km), nearest first
    reached_km: float  # every candidate up to here has been queued (-1: nothing yet)
    count: int  # the per-cell GEOSEARCH count the feed was last filled with
    exhausted: bool  # the last fill reached the end of every cell: nothing more to fetch


class DiscoverStore(Protocol):
    """Durable locations, swipes and matches (``warble.dal.discover_table``)."""

    def save_location(
        self, user_id: int, lat: float, lon: float, cell: str, at_ms: int
    ) -> str | None: ...
    def save_locations(
        self, entries: Iterable[tuple[int, float, float, str]], at_ms: int
    ) -> None: ...
    def location(self, user_id: int) -> StoredLocation | None: ...
    def all_locations(self) -> Iterator[StoredLocation]: ...
    def record_swipe(self, me: int, other: int, value: str, at_ms: int) -> None: ...
    def pair_swipes(self, me: int, other: int) -> tuple[str, str]: ...
    def swiped_ids(self, user_id: int) -> list[int]: ...
    def record_shown(self, user_id: int, seq: int, shown: Sequence[int]) -> None: ...
    def shown_ids(self, user_id: int) -> list[int]: ...
    def create_match(self, a: int, b: int, conversation_id: int, seq: int, at_ms: int) -> bool: ...
    def match(self, a: int, b: int) -> MatchRecord | None: ...
    def are_matched(self, a: int, b: int) -> bool: ...
    def matches_page(
        self, user_id: int, before_seq: int | None, limit: int
    ) -> list[MatchRecord]: ...


class GeoIndex(Protocol):
    """Located users by cell in Redis (``warble.dal.discover``)."""

    def place(
        self,
        user_id: int,
        lat: float,
        lon: float,
        cell: str,
        old_cell: str | None,
        own: tuple[float, float],
    ) -> None: ...
    def place_many(self, entries: Iterable[tuple[int, float, float, str]]) -> None: ...
    def cached_location(self, user_id: int) -> tuple[float, float] | None: ...
    def cache_location(self, user_id: int, lat: float, lon: float) -> None: ...
    def nearby(
        self, cells: Sequence[str], lat: float, lon: float, radius_km: float, count: int
    ) -> list[list[tuple[int, float]]]: ...


class SeenFilter(Protocol):
    """People already shown (Bloom filter) or swiped (exact), checked and added atomically."""

    def take(self, user_id: int, query: str, limit: int) -> FeedTake | str: ...
    def refill(
        self,
        user_id: int,
        query: str,
        before: float,
        entries: Sequence[tuple[int, float]],
        reached: float,
        count: int,
        exhausted: bool,
    ) -> bool: ...
    def load_swiped(self, user_id: int, swiped: Iterable[int]) -> None: ...
    def load_shown(self, user_id: int, ids: Sequence[int]) -> None: ...
    def add_swiped(self, user_id: int, other: int) -> None: ...


class SwipeLedger(Protocol):
    def swipe(
        self, me: int, other: int, direction: str, durable: tuple[str, str] | None = None
    ) -> tuple[str, str]: ...


class ConversationOpener(Protocol):
    """Opens (or finds) the pair's direct-message conversation on a match; its id
    (``ConversationService.open_for_match``)."""

    def open_for_match(self, a: int, b: int) -> str: ...


class People(Protocol):
    """Hydrated Users (``GraphService.users``): each a profile record with its counts and the
    viewer's relationship, in the order asked, unknown ids left out."""

    def users(self, viewer: int | None, user_ids: list[int]) -> list[dict[str, Any]]: ...


class BlockChecks(Protocol):
    """Blocks (``Shields``): whether one stands between two users (a right swipe across it is
    kept as a left one), and a user's blocks hash rebuilt (the page script found it missing)."""

    def blocked_between(self, a: int, b: int) -> bool: ...
    def rebuild(self, owner: int) -> Any: ...


class MatchAnnouncer(Protocol):
    """Tells both users about a match (``Announcer``, the ``match`` WebSocket event)."""

    def matched(self, a: int, b: int, conversation_id: str) -> None: ...
