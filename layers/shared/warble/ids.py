"""Snowflake IDs: 41-bit millisecond timestamp | 10-bit worker id | 12-bit sequence.

IDs sort by creation time and fit a signed 64-bit integer (PostgreSQL BIGINT, DynamoDB N).
Worker ids come from a lease (see ``warble.dal.worker_lease``) so that containers running at the
same time never share one. When the clock moves backwards the generator keeps the last timestamp
it used and goes on counting from there (borrowing the next millisecond when a sequence is
exhausted), so IDs stay unique and increasing without blocking.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol

EPOCH_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z
TIMESTAMP_BITS = 41
WORKER_BITS = 10
SEQUENCE_BITS = 12
MAX_WORKER = (1 << WORKER_BITS) - 1
MAX_SEQUENCE = (1 << SEQUENCE_BITS) - 1


class WorkerIdSource(Protocol):
    """Hands out a worker id that no other live generator holds."""

    def current(self, now_ms: int) -> tuple[int, int]:
        """Return ``(worker_id, floor_ms)``: IDs must use timestamps above ``floor_ms``."""
        ...


class FixedWorker:
    """A worker id fixed by configuration (tests, benchmarks, single-process tools)."""

    def __init__(self, worker_id: int) -> None:
        if not 0 <= worker_id <= MAX_WORKER:
            raise ValueError("worker id out of range")
        self.worker_id = worker_id

    def current(self, now_ms: int) -> tuple[int, int]:
        return self.worker_id, 0


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


class Snowflake:
    def __init__(self, workers: WorkerIdSource, clock: Callable[[], int] = _wall_ms) -> None:
        self._workers = workers
        self._clock = clock
        self._lock = threading.Lock()
        self._last_ms = 0
        self._sequence = 0
        self._worker = 0

    def next_id(self) -> int:
        with self._lock:
            now = self._clock()
            self._worker, floor_ms = self._workers.current(now)
            if floor_ms > self._last_ms:
                # A freshly claimed id: stay above every timestamp its previous holder used.
                self._last_ms = floor_ms
                self._sequence = -1
            if now > self._last_ms:
                self._last_ms = now
                self._sequence = 0
            else:
                # Same millisecond, or the clock went backwards: keep counting on the last one.
                self._sequence += 1
                if self._sequence > MAX_SEQUENCE:
                    self._last_ms += 1
                    self._sequence = 0
            return compose(self._last_ms, self._worker, self._sequence)


def compose(timestamp_ms: int, worker_id: int, sequence: int) -> int:
    return (
        ((timestamp_ms - EPOCH_MS) << (WORKER_BITS + SEQUENCE_BITS))
        | (worker_id << SEQUENCE_BITS)
        | sequence
    )


def decompose(snowflake: int) -> tuple[int, int, int]:
    """Return ``(timestamp_ms, worker_id, sequence)``."""
    sequence = snowflake & MAX_SEQUENCE
    worker = (snowflake >> SEQUENCE_BITS) & MAX_WORKER
    timestamp = (snowflake >> (WORKER_BITS + SEQUENCE_BITS)) + EPOCH_MS
    return timestamp, worker, sequence


# The decimal form of a Snowflake, as the OpenAPI document states it (parse_id also bounds it
# by 2**63 - 1, which a pattern cannot say simply).
SNOWFLAKE_PATTERN = r"^[1-9][0-9]{0,18}$"
USER_REF_PATTERN = r"^(me|[1-9][0-9]{0,18})$"  # a user id, or ``me`` for the caller


def parse_id(raw: str) -> int | None:
    """A Snowflake written as a decimal string, or None if it cannot be one."""
    if not raw.isascii() or not raw.isdigit() or len(raw) > 19:
        return None
    value = int(raw)
    return value if 0 < value < (1 << 63) else None
