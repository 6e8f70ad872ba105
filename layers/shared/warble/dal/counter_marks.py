"""Counters touched since reconciliation last looked (``keys.counter_marks``), and where its
rolling sweep of the counters table stopped: what makes the ReconcileFunction incremental."""

from __future__ import annotations

from collections.abc import Collection

from warble import keys
from warble.dal.redis import RedisClient


class RedisCounterMarks:
    """``warble.domain.counters.ports.CounterMarks`` over ``keys.COUNTER_MARK_BUCKETS`` sets:
    a batch's keys added in one pipeline (a round trip per node), taken with SPOP a page at a
    time (a key marked again meanwhile waits for the next run)."""

    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis
        self._next_bucket = 0  # where ``take`` goes on, so every bucket is drained in turn

    def mark(self, counter_keys: Collection[str]) -> None:
        self._each_bucket(counter_keys, "sadd")

    def forget(self, counter_keys: Collection[str]) -> None:
        """Unmark them (an erased account's counters: nothing will mark them again)."""
        self._each_bucket(counter_keys, "srem")

    def _each_bucket(self, counter_keys: Collection[str], command: str) -> None:
        """``command`` (SADD or SREM) once per bucket set the keys fall in, in one pipeline."""
        by_bucket: dict[int, list[str]] = {}
        for key in counter_keys:
            by_bucket.setdefault(keys.counter_mark_bucket(key), []).append(key)
        if not by_bucket:
            return
        pipe = self._redis.pipeline(transaction=False)
        for bucket, members in by_bucket.items():
            getattr(pipe, command)(keys.counter_marks(bucket), *members)
        pipe.execute()

    def take(self, limit: int) -> list[str]:
        taken: list[str] = []
        for _ in range(keys.COUNTER_MARK_BUCKETS):
            bucket = self._next_bucket
            found = self._redis.spop(keys.counter_marks(bucket), limit - len(taken))
            taken += [str(k) for k in found or ()]  # type: ignore[union-attr]
            if len(taken) >= limit:
                return taken  # this bucket may hold more: start here next time
            self._next_bucket = (bucket + 1) % keys.COUNTER_MARK_BUCKETS
        return taken

    def sweep_cursor(self) -> str | None:
        found = self._redis.get(keys.COUNTER_SWEEP)
        return str(found) if found else None  # type: ignore[str-bytes-safe]

    def save_sweep_cursor(self, cursor: str | None) -> None:
        if cursor is None:
            self._redis.delete(keys.COUNTER_SWEEP)
        else:
            self._redis.set(keys.COUNTER_SWEEP, cursor)
