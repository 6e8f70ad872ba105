"""Short-lived account state in Redis: login throttling and per-session markers."""

from __future__ import annotations

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
