"""Snowflake IDs: a 41-bit millisecond timestamp above a worker id and a sequence.

The 22 bits below the timestamp are split by the timestamp itself: before ``WIDE_FROM_MS``, a
10-bit worker id and a 12-bit sequence (1,024 workers, 4,096 ids a millisecond each); from it,
a 16-bit worker id and a 6-bit sequence (65,536 workers, 64 ids a millisecond each: a Lambda
environment mints a few ids a request, and 1,024 worker ids were fewer than the environments
that mint at the event, docs/capacity.md). The timestamp keeps the same top bits in both, so
ids sort by creation time and stay unique across the switch. They fit a signed 64-bit integer
(PostgreSQL BIGINT, DynamoDB N).

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
TIMESTAMP_SHIFT = 22  # the worker id's and the sequence's bits, in either layout
# The layout from WIDE_FROM_MS on, the one new ids take.
WORKER_BITS = 16
SEQUENCE_BITS = 6
MAX_WORKER = (1 << WORKER_BITS) - 1
MAX_SEQUENCE = (1 << SEQUENCE_BITS) - 1
WORKERS = MAX_WORKER + 1
# Every id before WIDE_FROM_MS: a 12-bit sequence, a 10-bit worker id above it.
NARROW_SEQUENCE_BITS = 12
# 2027-01-04T00:00:00Z: the first millisecond of the wide layout. It is a constant of the code,
# as EPOCH_MS is, not a setting: it is part of what an id means, so every reader (the functions,
# the tools, the benchmarks) must decompose a stored id the same way for ever, and every minter
# must agree on it at the same instant; a setting could differ between two functions, between two
# versions during a deploy, or be changed after ids were minted under it. It is in the future of
# this change by a month so that code still minting the narrow layout (the previous version,
# during and after a deploy, until Lambda retires its environments) has stopped before it: from
# it on, narrow ids (worker w, sequence s) would collide with wide ones (worker 64w + s // 64).
# So this code must be deployed before it (otherwise move it, before deploying), and after it
# no version older than this one may be deployed again.
WIDE_FROM_MS = 1_799_020_800_000
# A lease lasts a minute; its holder issues ids for a third of it after each renewal, so two
# thirds separate the last timestamp it may use from the first a next holder can (below).
LEASE_MS = 60_000
# Random conditional writes a claim tries before it reads which ids are held (below).
CLAIM_TRIES = 8


def sequence_bits(timestamp_ms: int) -> int:
    """The sequence's bits in an id made at ``timestamp_ms`` (the worker id has the rest)."""
    return SEQUENCE_BITS if timestamp_ms >= WIDE_FROM_MS else NARROW_SEQUENCE_BITS


def workers_at(timestamp_ms: int) -> int:
    """How many worker ids an id made at ``timestamp_ms`` can carry: 1,024 before
    ``WIDE_FROM_MS``, 65,536 from it."""
    return 1 << (TIMESTAMP_SHIFT - sequence_bits(timestamp_ms))


class WorkerIdSource(Protocol):
    """Hands out a worker id that no other live generator holds."""

    def current(self, now_ms: int, last_ms: int = 0) -> tuple[int, int]:
        """Return ``(worker_id, floor_ms)`` for an id at ``now_ms`` or later (the worker id fits
        the layout of ``now_ms``), the generator's last id being at ``last_ms``: IDs must use
        timestamps above ``floor_ms``."""
        ...


class FixedWorker:
    """A worker id fixed by configuration (tests, benchmarks, single-process tools). One above
    the narrow layout's 1,023 mints only from ``WIDE_FROM_MS`` (``compose`` refuses it before)."""

    def __init__(self, worker_id: int) -> None:
        if not 0 <= worker_id <= MAX_WORKER:
            raise ValueError("worker id out of range")
        self.worker_id = worker_id

    def current(self, now_ms: int, last_ms: int = 0) -> tuple[int, int]:
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

    Why ids never repeat: the holder writes ``until = t + LEASE_MS``, ``t`` the latest of its
    clock and of the timestamp its next id may take, and issues ids only while its clock is below
    ``now + LEASE_MS / 3`` and its timestamps below ``t + LEASE_MS / 3``; a claimant takes the id
    only when its own clock is past ``until``. So every timestamp of the next holder is above
    every timestamp of the last one, as numbers, whatever the two clocks' skew, and however far a
    burst borrowed ahead of the clock (64 ids a millisecond: a loop minting ids, as the seed tool
    does, runs seconds ahead). A holder whose renewal finds the lease taken (it was frozen past
    it) issues nothing more under that id: the request is refused (``WorkerLeaseLost``, a 503)
    and the next one claims a new id. All ids held is ``WorkerIdExhausted`` (a 503 with
    Retry-After).
    """

    def __init__(self, leases: WorkerLeases, lease_ms: int = LEASE_MS) -> None:
        self._leases = leases
        self._lease_ms = lease_ms
        self._issue_for = lease_ms // 3
        self._holder = secrets.token_hex(8)
        self._worker: int | None = None
        self._renewed_at = 0
        self._issue_below = 0
        self._latest = 0

    def current(self, now_ms: int, last_ms: int = 0) -> tuple[int, int]:
        # The lease's end is counted from the latest timestamp an id may take: the clock's (one
        # that stepped back cannot end it below timestamps already used) or one past the last id
        # (a burst past the sequence borrows the next millisecond, ahead of the clock).
        self._latest = max(self._latest, now_ms, last_ms + 1)
        until = self._latest + self._lease_ms
        if self._worker is None:
            return self._claim(now_ms, until), 0
        # A clock that went backwards (negative elapsed) renews too: the lease's real age is
        # unknown then, and skipping renewal could let it lapse while ids are still issued.
        if 0 <= now_ms - self._renewed_at < self._issue_for and self._latest < self._issue_below:
            return self._worker, 0
        if not self._leases.renew(self._worker, self._holder, until):
            self._worker = None
            raise WorkerLeaseLost()
        self._held_from(now_ms)
        return self._worker, 0

    def _claim(self, now_ms: int, until: int) -> int:
        # Random conditional writes first: with at most half the ids held (docs/capacity.md's
        # check), each lands with even odds, so a cold start costs two writes on average and
        # reads the held ids (a Scan of every lease: pages of them at 30k held) once in 256. An
        # id above the narrow layout's is claimed only from WIDE_FROM_MS: every id minted under
        # it is at now_ms or later.
        space = workers_at(now_ms)
        tried: set[int] = set()
        for _ in range(CLAIM_TRIES):
            pick = random.randrange(space)
            if self._leases.claim(pick, self._holder, now_ms, until):
                return self._took(pick, now_ms)
            tried.add(pick)
        held = self._leases.held(now_ms)
        candidates = [n for n in range(space) if n not in held and n not in tried]
        random.shuffle(candidates)
        for pick in candidates:
            if self._leases.claim(pick, self._holder, now_ms, until):
                return self._took(pick, now_ms)
        raise WorkerIdExhausted()

    def _took(self, worker: int, now_ms: int) -> int:
        self._worker = worker
        self._held_from(now_ms)
        return worker

    def _held_from(self, now_ms: int) -> None:
        self._renewed_at = now_ms
        self._issue_below = self._latest + self._issue_for

    def release(self) -> None:
        """Give the id back (a tool or a test that ends). The next holder's clock must still
        pass the last millisecond this one may have used, so the lease ends there rather than
        disappearing: at the latest timestamp an id took, borrowed milliseconds included."""
        if self._worker is not None:
            self._leases.release(self._worker, self._holder, self._latest)
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
            self._worker, floor_ms = self._workers.current(now, self._last_ms)
            if floor_ms > self._last_ms:
                # A freshly claimed id: stay above every timestamp its previous holder used.
                self._last_ms = floor_ms
                self._sequence = -1
            if now > self._last_ms:
                self._last_ms = now
                self._sequence = 0
            else:
                # Same millisecond, or the clock went backwards: keep counting on the last one,
                # as far as that millisecond's layout allows.
                self._sequence += 1
                if self._sequence >> sequence_bits(self._last_ms):
                    self._last_ms += 1
                    self._sequence = 0
            return compose(self._last_ms, self._worker, self._sequence)


def compose(timestamp_ms: int, worker_id: int, sequence: int) -> int:
    """The id of ``(timestamp_ms, worker_id, sequence)`` in the layout of ``timestamp_ms``; a
    worker id or a sequence that layout cannot hold is a ``ValueError`` (a worker id above 1,023
    before ``WIDE_FROM_MS`` would spill into the timestamp)."""
    bits = sequence_bits(timestamp_ms)
    if not (0 <= sequence < 1 << bits and 0 <= worker_id < 1 << (TIMESTAMP_SHIFT - bits)):
        raise ValueError("worker id or sequence out of range for its timestamp's layout")
    return ((timestamp_ms - EPOCH_MS) << TIMESTAMP_SHIFT) | (worker_id << bits) | sequence


def decompose(snowflake: int) -> tuple[int, int, int]:
    """Return ``(timestamp_ms, worker_id, sequence)``, in the layout of the id's timestamp."""
    timestamp = (snowflake >> TIMESTAMP_SHIFT) + EPOCH_MS
    bits = sequence_bits(timestamp)
    below = snowflake & ((1 << TIMESTAMP_SHIFT) - 1)
    return timestamp, below >> bits, below & ((1 << bits) - 1)


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
