"""Window counters in Redis: the one mechanism behind request budgets and the login throttle.

A window starts at its first request and lasts ``window_ms``; at most ``limit`` requests are
counted in it. Taking a request is one Lua script, so it is one round trip and atomic: racing
requests cannot overshoot the limit, and the answer carries what the rate-limit headers need
(the count and the time left). A refused request is not counted, so a client that keeps
retrying while refused does not push its own window further.

Each call touches one key, so the script is safe on Redis Cluster whatever the key's slot.
Hand-written rather than the ``limits`` library: its Redis strategies answer only allowed or not,
so the headers would cost a second round trip (``get_window_stats``), its exact strategy (moving
window) keeps a list of ``limit`` timestamps per key and takes them from the client's clock, its
sliding window is an approximation, and none of them can give a request back, which the login
throttle needs (only failed logins count).
"""

from __future__ import annotations

from dataclasses import dataclass

from warble import keys
from warble.dal.redis import RedisClient

# take(key, limit, window_ms): {1 if counted else 0, requests counted in the window, ms until
# the window ends}. A Lua function, so the HTTP gate's script (warble.dal.account_state) counts
# with the very same lines.
TAKE_FUNCTION = """
local function take(key, limit, window_ms)
  local n = redis.call('INCR', key)
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then
    ttl = window_ms
    redis.call('PEXPIRE', key, ttl)
  end
  if n > limit then
    redis.call('DECR', key)
    return {0, n - 1, ttl}
  end
  return {1, n, ttl}
end
"""

# KEYS[1]: the window's counter. ARGV[1]: the limit; ARGV[2]: the window in ms.
_TAKE = TAKE_FUNCTION + "return take(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))\n"

# The count and the time left of a window, counting nothing: {count, ms until it ends}.
_PEEK = """
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
return {n, redis.call('PTTL', KEYS[1])}
"""

# Give a request back, only while its window exists: a DECR after the window expired would
# create a key of -1 with no TTL, a free request forever after.
_GIVE_BACK = """
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('DECR', KEYS[1]) end
return 0
"""


@dataclass(frozen=True)
class Taken:
    allowed: bool
    used: int  # requests counted in the window, this one included when allowed
    reset_ms: int  # until the window ends


class RedisWindowCounter:
    def __init__(self, redis: RedisClient) -> None:
        self._take = redis.register_script(_TAKE)
        self._peek = redis.register_script(_PEEK)
        self._give_back = redis.register_script(_GIVE_BACK)

    def take(self, key: str, limit: int, window_ms: int) -> Taken:
        allowed, used, reset_ms = self._take(keys=[key], args=[limit, window_ms])
        return Taken(bool(allowed), int(used), int(reset_ms))

    def peek(self, key: str) -> tuple[int, int]:
        """(requests counted in the window, ms until it ends) without counting one."""
        used, reset_ms = self._peek(keys=[key])
        return int(used), int(reset_ms)

    def give_back(self, key: str) -> None:
        self._give_back(keys=[key])

    # ---- the request budgets (warble.domain.rate_limits) -------------------------------------
    def take_user(self, user_id: int, limit: int, window_ms: int) -> Taken:
        return self.take(keys.user_budget(user_id), limit, window_ms)

    def take_location(self, user_id: int, limit: int, window_ms: int) -> Taken:
        return self.take(keys.location_budget(user_id), limit, window_ms)

    def take_reports(self, user_id: int, limit: int, window_ms: int) -> Taken:
        return self.take(keys.reports_budget(user_id), limit, window_ms)

    def give_back_report(self, user_id: int) -> None:
        self.give_back(keys.reports_budget(user_id))

    def take_address(self, budget: str, network: str, limit: int, window_ms: int) -> Taken:
        return self.take(keys.rate_limit(budget, network), limit, window_ms)

    def peek_address(self, budget: str, network: str) -> tuple[int, int]:
        return self.peek(keys.rate_limit(budget, network))
