"""The small interfaces the domain needs from its stores (implemented in ``warble.dal``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol, TypeVar

from warble.keys import CacheKey

T = TypeVar("T")


class Cache(Protocol):
    def get_or_load(self, key: CacheKey, loader: Callable[[], T | None]) -> T | Any | None: ...
    def get_many(self, cache_keys: list[CacheKey]) -> list[Any | None]: ...
    def get_many_or_load(
        self, cache_keys: list[CacheKey], loader: Callable[[list[int]], list[Any | None]]
    ) -> list[Any | None]: ...
    def lease(self, key: CacheKey) -> str | None: ...
    def fill(self, key: CacheKey, token: str, value: Any) -> bool: ...
    def invalidate(self, key: CacheKey) -> None: ...
    def invalidate_many(self, cache_keys: list[CacheKey]) -> None: ...


class IdGenerator(Protocol):
    def next_id(self) -> int: ...


class Session(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def user_id(self) -> int: ...
    @property
    def token_hash(self) -> bytes: ...
    @property
    def device(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def last_seen_at(self) -> datetime: ...
    @property
    def expires_at(self) -> datetime: ...
    @property
    def revoked_at(self) -> datetime | None: ...


class DuplicateAccount(Exception):
    """Raised by the user store when a unique username or email is already taken."""

    def __init__(self, field: str) -> None:
        super().__init__(field)
        self.field = field
