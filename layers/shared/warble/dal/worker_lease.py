"""Snowflake worker ids leased from Redis, so concurrent containers never share one.

A container claims a free id with SET NX PX and renews it lazily, on the ID path, once a third of
the lease has passed (Lambda freezes containers between invocations, so a background renewer
would not run). If a renewal finds the lease gone (the container was frozen past it and another
took the id), it claims a fresh id. The holder records its last renewal time under the id, and
the next holder starts its timestamps above that plus the renewal interval, so IDs stay unique
even when the two containers' clocks disagree a little.
"""

from __future__ import annotations

import random
import secrets

from warble import keys
from warble.dal.redis import RedisClient
from warble.ids import MAX_WORKER

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('SET', KEYS[2], ARGV[3], 'EX', 86400)
  return 1
end
return 0
"""


class WorkerIdExhausted(RuntimeError):
    pass


class RedisWorkerLease:
    def __init__(self, redis: RedisClient, lease_ms: int = keys.WORKER_LEASE_MS) -> None:
        self._redis = redis
        self._lease_ms = lease_ms
        self._renew_every = lease_ms // 3
        self._owner = secrets.token_hex(8)
        self._worker: int | None = None
        self._renewed_at = 0
        self._renew = redis.register_script(_RENEW)

    def current(self, now_ms: int) -> tuple[int, int]:
        # A clock that went backwards (negative elapsed) renews too: the lease's real age is
        # unknown then, and skipping renewal could let it lapse while ids are still issued.
        if self._worker is not None and 0 <= now_ms - self._renewed_at < self._renew_every:
            return self._worker, 0
        if self._worker is not None and self._renew(
            keys=[keys.snowflake_worker(self._worker), keys.snowflake_worker_last(self._worker)],
            args=[self._owner, self._lease_ms, now_ms],
        ):
            self._renewed_at = now_ms
            return self._worker, 0
        return self._claim(now_ms)

    def _claim(self, now_ms: int) -> tuple[int, int]:
        start = random.randrange(MAX_WORKER + 1)
        for offset in range(MAX_WORKER + 1):
            candidate = (start + offset) % (MAX_WORKER + 1)
            if self._redis.set(
                keys.snowflake_worker(candidate), self._owner, nx=True, px=self._lease_ms
            ):
                previous = self._redis.getset(keys.snowflake_worker_last(candidate), now_ms)
                self._redis.expire(keys.snowflake_worker_last(candidate), 86_400)
                self._worker = candidate
                self._renewed_at = now_ms
                floor = int(previous) + self._renew_every if previous else 0
                return candidate, floor
        raise WorkerIdExhausted("all 1024 Snowflake worker ids are leased")

    def release(self) -> None:
        if self._worker is not None:
            self._redis.delete(keys.snowflake_worker(self._worker))
            self._worker = None
