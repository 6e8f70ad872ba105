"""What the counters need of their store (``warble.dal.counters``), and its errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol


class CounterStore(Protocol):
    def apply(self, claims: list[str], deltas: dict[tuple[str, str], int]) -> None: ...
    def read(self, keys: list[str]) -> dict[str, dict[str, int]]: ...
    def scan(self) -> Iterator[tuple[str, dict[str, int]]]: ...
    def current(self, key: str, field: str) -> int | None: ...
    def repair(self, key: str, field: str, observed: int | None, value: int) -> bool: ...


class ClaimsTaken(Exception):
    """The claims at ``indexes`` exist already (those records were applied before)."""

    def __init__(self, indexes: list[int]) -> None:
        super().__init__(indexes)
        self.indexes = indexes


class TransactionRetry(Exception):
    """Cancelled for another reason (conflict, throttling); try again."""
