"""What the counters need of their store (``warble.dal.counters``), its errors, and the words
every feature's counter rule speaks: a ``Delta`` to a user's or a tweet's counter."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Delta:
    key: str  # the counter, e.g. user_counter(<id>) or tweet_counter(<id>)
    field: str  # the counter attribute, e.g. "followers_count"
    amount: int


def user_counter(user_id: int) -> str:
    return f"U#{user_id}"


def tweet_counter(tweet_id: int) -> str:
    return f"T#{tweet_id}"


def owner_of(key: str) -> tuple[str, int] | None:
    """``("user" | "tweet", id)`` of a counter key, or None for anything else."""
    kind = {"U#": "user", "T#": "tweet"}.get(key[:2])
    return (kind, int(key[2:])) if kind and key[2:].isdigit() else None


class CounterStore(Protocol):
    """Counters by key. How a counter is stored (one item, or a hot one's sub-items) is the
    store's: every method speaks of whole counters."""

    def apply(self, claims: list[str], deltas: dict[tuple[str, str], int]) -> None: ...
    def read(self, keys: list[str]) -> dict[str, dict[str, int]]: ...
    def scan(self) -> Iterator[tuple[str, dict[str, int]]]: ...
    def current(self, key: str, field: str) -> int | None: ...
    def repair(self, key: str, field: str, observed: int | None, value: int) -> bool: ...
    def keys_page(self, start: str | None, limit: int) -> tuple[list[str], str | None]: ...


class CounterMarks(Protocol):
    """The counters a stream batch touched since reconciliation last looked, and where its
    rolling sweep of every counter stopped (``warble.dal.counter_marks``)."""

    def mark(self, counter_keys: Collection[str]) -> None: ...
    def take(self, limit: int) -> list[str]: ...
    def sweep_cursor(self) -> str | None: ...
    def save_sweep_cursor(self, cursor: str | None) -> None: ...


class ClaimsTaken(Exception):
    """The claims at ``indexes`` exist already (those records were applied before)."""

    def __init__(self, indexes: list[int]) -> None:
        super().__init__(indexes)
        self.indexes = indexes


class TransactionRetry(Exception):
    """Cancelled for another reason (conflict, throttling); try again."""
