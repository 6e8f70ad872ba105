"""Short-lived account state in Redis: login throttling and the session check's lookups."""

from __future__ import annotations

import json
from typing import Any

from warble import keys
from warble.dal.rate_limit import RedisWindowCounter
from warble.dal.redis import RedisClient


class LoginThrottle:
    """Failed logins per login name: a window counter (warble.dal.rate_limit) whose attempt is
    taken before the password check, so racing wrong passwords cannot get past the limit, and
    given back when the password was right, so only failures count."""

    def __init__(self, redis: RedisClient, max_failures: int, window_seconds: int) -> None:
        self._counter = RedisWindowCounter(redis)
        self._max = max_failures
        self._window_ms = window_seconds * 1000

    def reserve(self, login: str) -> int:
        """Take an attempt; 0 when allowed, else the seconds until the window passes."""
        taken = self._counter.take(keys.login_failures(login), self._max, self._window_ms)
        return 0 if taken.allowed else max(1, -(-taken.reset_ms // 1000))

    def release(self, login: str) -> None:
        """A successful attempt gives back its reservation: only failures count."""
        self._counter.give_back(keys.login_failures(login))


# The session cached for a token, and whether its last_seen_at is due for a touch (at most once
# a minute): one call, both keys under the token's tag. Nothing is written for a token that has
# no cached session.
_LOOKUP = """
local cached = redis.call('GET', KEYS[1])
if not cached then return false end
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[1]) then return {cached, 1} end
return {cached, 0}
"""


class SessionLookups:
    """The session check's Redis part in one round trip (the cache fills and invalidations
    are the leased cache's, warble.dal.cache)."""

    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis
        self._lookup = redis.register_script(_LOOKUP)

    def cached(self, token_hash_hex: str) -> tuple[dict[str, Any], bool] | None:
        """(the cached session record, due for a touch), or None when it is not cached."""
        found = self._lookup(
            keys=[keys.session(token_hash_hex).value, keys.session_seen(token_hash_hex)],
            args=[keys.SEEN_THROTTLE_SECONDS],
        )
        if not found:
            return None
        record, due = found
        return json.loads(record), bool(int(due))

    def due_for_touch(self, token_hash_hex: str) -> bool:
        seen = keys.session_seen(token_hash_hex)
        return bool(self._redis.set(seen, "1", nx=True, ex=keys.SEEN_THROTTLE_SECONDS))
