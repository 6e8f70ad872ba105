"""What people search needs: its index (``warble.dal.search``: PostgreSQL) and its result
snapshots (Redis), and, as narrow Protocols, what it asks of the follow graph (friends,
second-degree sets, counts, hydrated users) and of blocks (the viewer's Shield)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from warble.domain.accounts.answers import RelatedUser
from warble.domain.blocks.ports import Shield
from warble.domain.shared import Later, Page, ReadBatch

Degree = Literal[1, 2, 3] | None


class PeopleIndex(Protocol):
    def candidates(self, query: str, friends: list[int], limit: int) -> list[tuple[int, bool]]: ...
    def set_followers(self, counts: dict[int, int]) -> int: ...


class Snapshots(Protocol):
    """Ranked results kept for their next pages."""

    def save_later(
        self, batch: ReadBatch, viewer: int, token: int, entries: list[tuple[int, Degree]]
    ) -> None: ...
    def load(self, viewer: int, token: int) -> list[tuple[int, Degree]] | None: ...


class Network(Protocol):
    """The follow graph, as search reads it (``GraphService``)."""

    def friends_later(
        self, batch: ReadBatch, user_ids: list[int]
    ) -> Later[dict[int, frozenset[int]]]: ...
    def second_degree_later(self, batch: ReadBatch, user_id: int) -> Later[frozenset[int]]: ...
    def counts_later(
        self, batch: ReadBatch, user_ids: list[int]
    ) -> Later[dict[int, dict[str, int]]]: ...
    def users_later(
        self, batch: ReadBatch, viewer: int | None, user_ids: list[int]
    ) -> Later[list[dict[str, Any]]]: ...


class ViewerShields(Protocol):
    def batch(self) -> ReadBatch: ...
    def later(self, batch: ReadBatch, owner: int) -> Later[Shield]: ...


# ---- what the service answers (API.md's objects) ------------------------------------------------
@dataclass(slots=True)
class FoundUser(RelatedUser):
    """A search result: the User as the viewer sees it, and its degree on the friends graph."""

    degree: Degree


@dataclass(slots=True)
class FoundPage(Page[FoundUser]):
    items: list[FoundUser]  # named again (domain/shared.py's Page says why)
