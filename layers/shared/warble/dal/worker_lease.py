"""Snowflake worker ids leased from Redis, so concurrent containers never share one.

A container claims a free id with SET NX PX and renews it lazily, on the ID path, once a second
has passed (Lambda freezes containers between invocations, so a background renewer
would not run). If a renewal finds the lease gone (the container was frozen past it and another
took the id), it claims a fresh id. The holder records its last renewal time under the id, and
the next holder starts its timestamps above that plus the renewal interval, so IDs stay unique
even when the two containers' clocks disagree a little.

Redis may lose every key (a failover to an empty replica): a holder from before then goes on
issuing IDs until its next renewal, while another container claims the same id and finds no
record of it. So the first claim after a loss writes when the records began again
(``{snowflake}:since``, no TTL), and a claim that finds no record of its id's last holder starts
above that plus the renewal interval, where every holder from before the loss has stopped.
"""

from __future__ import annotations

import random
import secrets

from warble import keys
from warble.dal.redis import UNAVAILABLE_ERRORS, RedisClient
from warble.ids import MAX_WORKER

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('SET', KEYS[2], ARGV[3], 'EX', 86400)
  return 1
end
return 0
"""

# KEYS: the id's last-renewal record, when the records began. ARGV: now. The previous holder's
# last renewal (false if none is recorded) and when the records began (now if they begin here).
_TAKE = """
local previous = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1], 'EX', 86400)
local since = redis.call('GET', KEYS[2])
if not since then
  redis.call('SET', KEYS[2], ARGV[1])
  since = ARGV[1]
end
return {previous, since}
"""


# How long a holder issues ids without checking its lease (at most a third of it): also how far
# ahead of its clock a claim must start after Redis lost the records, so kept short. The check
# is one script call a second on a container making ids, none on one that makes none. While
# Redis cannot be reached the holder goes on for a third of the lease from its last renewal
# (nobody can take the id sooner: it expires after the whole lease), checking once a second.
RENEW_EVERY_MS = 1_000


class WorkerIdExhausted(RuntimeError):
    pass


class RedisWorkerLease:
    def __init__(self, redis: RedisClient, lease_ms: int = keys.WORKER_LEASE_MS) -> None:
        self._redis = redis
        self._lease_ms = lease_ms
        self._renew_every = min(lease_ms // 3, RENEW_EVERY_MS)
        self._owner = secrets.token_hex(8)
        self._worker: int | None = None
        self._renewed_at = 0
        self._checked_at = 0  # the last renewal tried (it may have failed to reach Redis)
        self._renew = redis.register_script(_RENEW)
        self._take = redis.register_script(_TAKE)

    def current(self, now_ms: int) -> tuple[int, int]:
        # A clock that went backwards (negative elapsed) renews too: the lease's real age is
        # unknown then, and skipping renewal could let it lapse while ids are still issued.
        if self._worker is not None and 0 <= now_ms - self._checked_at < self._renew_every:
            return self._worker, 0
        if self._worker is not None:
            try:
                renewed = self._renew(
                    keys=[
                        keys.snowflake_worker(self._worker),
                        keys.snowflake_worker_last(self._worker),
                    ],
                    args=[self._owner, self._lease_ms, now_ms],
                )
            except UNAVAILABLE_ERRORS:
                if not 0 <= now_ms - self._renewed_at < self._lease_ms // 3:
                    raise
                self._checked_at = now_ms
                return self._worker, 0
            if renewed:
                self._renewed_at = self._checked_at = now_ms
                return self._worker, 0
        return self._claim(now_ms)

    def _claim(self, now_ms: int) -> tuple[int, int]:
        start = random.randrange(MAX_WORKER + 1)
        for offset in range(MAX_WORKER + 1):
            candidate = (start + offset) % (MAX_WORKER + 1)
            if self._redis.set(
                keys.snowflake_worker(candidate), self._owner, nx=True, px=self._lease_ms
            ):
                previous, since = self._take(
                    keys=[keys.snowflake_worker_last(candidate), keys.snowflake_since()],
                    args=[now_ms],
                )
                self._worker = candidate
                self._renewed_at = self._checked_at = now_ms
                # Without a record of the last holder, it may be one from before a loss.
                last = int(previous) if previous else int(since)
                return candidate, last + self._renew_every
        raise WorkerIdExhausted("all 1024 Snowflake worker ids are leased")

    def release(self) -> None:
        if self._worker is not None:
            self._redis.delete(keys.snowflake_worker(self._worker))
            self._worker = None
