"""Short-lived account state in Redis: login throttling and per-session markers."""

from __future__ import annotations

from warble import keys
from warble.dal.redis import RedisClient

# Reserve one attempt atomically: concurrent wrong passwords cannot slip past the limit.
# Returns the attempt number, or minus the seconds left when the limit is reached.
_RESERVE = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
if n > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  local ttl = redis.call('TTL', KEYS[1])
  if ttl < 1 then ttl = 1 end
  return -ttl
end
return n
"""

# Give a reservation back, only while the window's key exists: a DECR after the window expired
# would create a key of -1 with no TTL, a free attempt forever after.
_RELEASE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('DECR', KEYS[1]) end
return 0
"""


class LoginThrottle:
    def __init__(self, redis: RedisClient, max_failures: int, window_seconds: int) -> None:
        self._redis = redis
        self._max = max_failures
        self._window = window_seconds
        self._reserve = redis.register_script(_RESERVE)
        self._release = redis.register_script(_RELEASE)

    def reserve(self, login: str) -> int:
        """Take an attempt; 0 when allowed, else the seconds until the window passes."""
        result = int(
            self._reserve(keys=[keys.login_failures(login)], args=[self._max, self._window])
        )
        return 0 if result > 0 else -result

    def release(self, login: str) -> None:
        """A successful attempt gives back its reservation: only failures count."""
        self._release(keys=[keys.login_failures(login)])


class SessionMarkers:
    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis

    def mark_revoked(self, session_id: int, ttl_seconds: int) -> None:
        self._redis.set(keys.session_revoked(session_id), "1", ex=ttl_seconds)

    def check(self, session_id: int) -> tuple[bool, bool]:
        """Return ``(revoked, due_for_touch)`` in one round trip (both keys share a tag)."""
        pipe = self._redis.pipeline(transaction=False)
        pipe.exists(keys.session_revoked(session_id))
        pipe.set(keys.session_seen(session_id), "1", nx=True, ex=keys.SEEN_THROTTLE_SECONDS)
        revoked, touched = pipe.execute()
        return bool(revoked), bool(touched)
