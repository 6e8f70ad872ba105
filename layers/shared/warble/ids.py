"""Snowflake IDs: 41-bit millisecond timestamp | 10-bit worker id | 12-bit sequence.

IDs sort by creation time and fit a signed 64-bit integer (PostgreSQL BIGINT, DynamoDB N).
Worker ids come from a durable lease (``LeasedWorker`` over ``warble.dal.worker_lease``'s
DynamoDB table) so that containers running at the same time never share one. When the clock
moves backwards the generator keeps the last timestamp it used and goes on counting from there
(borrowing the next millisecond when a sequence is exhausted), so IDs stay unique and increasing
without blocking.
"""

from __future__ import annotations

import random
import secrets
import threading
import time
from collections.abc import Callable
from typing import Protocol

from warble.errors import WorkerIdExhausted, WorkerLeaseLost

EPOCH_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z
TIMESTAMP_BITS = 41
WORKER_BITS = 10
SEQUENCE_BITS = 12
MAX_WORKER = (1 << WORKER_BITS) - 1
MAX_SEQUENCE = (1 << SEQUENCE_BITS) - 1
WORKERS = MAX_WORKER + 1
# A lease lasts a minute; its holder issues ids for a third of it after each renewal, so two
# thirds separate the last timestamp it may use from the first a next holder can (below).
LEASE_MS = 60_000


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


class WorkerLeases(Protocol):
    """The durable record of which worker ids are held (``warble.dal.worker_lease``). Each
    call is one conditional write, decided by the store: it succeeds or changes nothing."""

    def claim(self, worker_id: int, holder: str, now_ms: int, until_ms: int) -> bool:
        """Hold ``worker_id`` until ``until_ms`` if no one does at ``now_ms``."""
        ...

    def renew(self, worker_id: int, holder: str, until_ms: int) -> bool:
        """Extend the lease to ``until_ms`` if ``holder`` still holds it."""
        ...

    def release(self, worker_id: int, holder: str, last_ms: int) -> None:
        """End ``holder``'s lease: claimable once a claimant's clock is past ``last_ms``."""
        ...

    def held(self, now_ms: int) -> set[int]:
        """The ids whose leases have not lapsed at ``now_ms`` (eventually consistent)."""
        ...


class LeasedWorker:
    """A worker id held through ``WorkerLeases``: claimed on first use (once per container),
    renewed on the id path once a third of the lease has passed (Lambda freezes a container
    between invocations, so a background renewer would not run).

    Why ids never repeat: the holder writes ``until = now + LEASE_MS`` by its own clock and
    issues ids only while its clock is below ``now + LEASE_MS / 3``; a claimant takes the id only
    when its own clock is past ``until``. So every timestamp of the next holder is above every
    timestamp of the last one, as numbers, whatever the two clocks' skew. A holder whose renewal
    finds the lease taken (it was frozen past it) issues nothing more under that id: the request
    is refused (``WorkerLeaseLost``, a 503) and the next one claims a new id. All ids held is
    ``WorkerIdExhausted`` (a 503 with Retry-After).
    """

    def __init__(self, leases: WorkerLeases, lease_ms: int = LEASE_MS) -> None:
        self._leases = leases
        self._lease_ms = lease_ms
        self._issue_for = lease_ms // 3
        self._holder = secrets.token_hex(8)
        self._worker: int | None = None
        self._renewed_at = 0
        self._latest = 0

    def current(self, now_ms: int) -> tuple[int, int]:
        # The lease's end is counted from the latest time seen, so a clock that stepped back
        # cannot end it below timestamps already used.
        self._latest = max(self._latest, now_ms)
        until = self._latest + self._lease_ms
        if self._worker is None:
            return self._claim(now_ms, until), 0
        # A clock that went backwards (negative elapsed) renews too: the lease's real age is
        # unknown then, and skipping renewal could let it lapse while ids are still issued.
        if 0 <= now_ms - self._renewed_at < self._issue_for:
            return self._worker, 0
        if not self._leases.renew(self._worker, self._holder, until):
            self._worker = None
            raise WorkerLeaseLost()
        self._renewed_at = now_ms
        return self._worker, 0

    def _claim(self, now_ms: int, until: int) -> int:
        # One conditional write at a random id is the usual cold start; only a miss reads which
        # ids are held, so that even a full table answers in a few calls, not 1,024.
        claimed = random.randrange(WORKERS)
        if not self._leases.claim(claimed, self._holder, now_ms, until):
            held = self._leases.held(now_ms)
            candidates = [n for n in range(WORKERS) if n not in held and n != claimed]
            random.shuffle(candidates)
            for claimed in candidates:
                if self._leases.claim(claimed, self._holder, now_ms, until):
                    break
            else:
                raise WorkerIdExhausted()
        self._worker = claimed
        self._renewed_at = now_ms
        return claimed

    def release(self) -> None:
        """Give the id back (a tool or a test that ends). The next holder's clock must still
        pass the last millisecond this one may have used, so the lease ends there rather than
        disappearing (a second's slack: the milliseconds a burst of over 4,096 ids a
        millisecond borrows ahead)."""
        if self._worker is not None:
            self._leases.release(self._worker, self._holder, self._latest + 1_000)
            self._worker = None


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
