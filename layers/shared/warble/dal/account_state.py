"""Short-lived account state in Redis: login throttling, the session check's lookups, the
sessions seen since the last flush to PostgreSQL and the WebSocket connect tickets."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import msgspec

from warble import keys
from warble.dal.rate_limit import TAKE_FUNCTION
from warble.dal.redis import ReadBatch, RedisClient, scripted
from warble.domain.accounts.ports import GateAnswer, TicketClaim

if TYPE_CHECKING:
    from warble.domain import shared


# A failed login's attempt, reserved before the password check (issue 47 item 3, OWASP's
# "lock out by account and source"): one of the subject's failures from this address (the small
# budget), then, unless the address is one the subject logged in from, one of the subject's
# failures from anywhere (the large budget, which bounds guessing from many addresses). So five
# wrong passwords from one address lock that address out of the account, not its owner.
# KEYS: source failures, subject failures, known sources. ARGV: source limit, subject limit,
# window (ms), source. Returns {1, 0} (reserved) or {0, ms until the refusing window ends}.
_RESERVE = (
    TAKE_FUNCTION
    + """
local here = take(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[3]))
if here[1] == 0 then return {0, here[3]} end
if ARGV[4] ~= '' and redis.call('SISMEMBER', KEYS[3], ARGV[4]) == 1 then return {1, 0} end
local anywhere = take(KEYS[2], tonumber(ARGV[2]), tonumber(ARGV[3]))
if anywhere[1] == 0 then
  redis.call('DECR', KEYS[1])
  return {0, anywhere[3]}
end
return {1, 0}
"""
)

# A right password gives its attempt back (only failures count; a DECR only while the window
# exists, as warble.dal.rate_limit's give-back) and makes the address a known one.
# KEYS: as _RESERVE's. ARGV: source, known TTL (s).
_RELEASE = """
local known = ARGV[1] ~= '' and redis.call('SISMEMBER', KEYS[3], ARGV[1]) == 1
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('DECR', KEYS[1]) end
if not known and redis.call('EXISTS', KEYS[2]) == 1 then redis.call('DECR', KEYS[2]) end
if ARGV[1] ~= '' then
  redis.call('SADD', KEYS[3], ARGV[1])
  redis.call('EXPIRE', KEYS[3], tonumber(ARGV[2]))
end
return 0
"""


class LoginThrottle:
    """Failed logins per subject (an account, or the folded login of one that names no account;
    warble.domain.accounts) and client address (its network: an IPv6 one by its /64): window
    counters whose attempt is taken before the password check, so racing wrong passwords cannot
    get past the limit, and given back when the password was right, so only failures count.
    ``max_failures`` from one address lock that address out; ``max_account_failures`` from
    addresses the subject never logged in from lock those out (``_RESERVE``)."""

    def __init__(
        self,
        redis: RedisClient,
        max_failures: int,
        window_seconds: int,
        max_account_failures: int | None = None,
        known_seconds: int = 30 * 86_400,
    ) -> None:
        self._reserve = redis.register_script(_RESERVE)
        self._release = redis.register_script(_RELEASE)
        self._max = max_failures
        self._max_account = max_failures if max_account_failures is None else max_account_failures
        self._window_ms = window_seconds * 1000
        self._known_seconds = known_seconds

    @staticmethod
    def _keys(subject: str, source: str) -> list[str]:
        return [
            keys.login_source_failures(subject, source),
            keys.login_failures(subject),
            keys.login_known(subject),
        ]

    def reserve(self, subject: str, source: str = "") -> int:
        """Take an attempt; 0 when allowed, else the seconds until the window passes."""
        allowed, reset_ms = self._reserve(
            keys=self._keys(subject, source),
            args=[self._max, self._max_account, self._window_ms, source],
        )
        return 0 if int(allowed) else max(1, -(-int(reset_ms) // 1000))

    def release(self, subject: str, source: str = "") -> None:
        """A successful attempt gives back its reservation (only failures count), and its
        address becomes one the subject logged in from."""
        self._release(keys=self._keys(subject, source), args=[source, self._known_seconds])


# The session cached for a token, and whether its last_seen_at is due for a touch (at most once
# a minute): one call, both keys under the token's tag. Nothing is written for a token that has
# no cached session.
_LOOKUP = """
local cached = redis.call('GET', KEYS[1])
if not cached then return false end
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[1]) then return {cached, 1} end
return {cached, 0}
"""


# The HTTP gate for a token that names its user, in one call on the user's tag: the cached
# session and, only when it is live, its last-seen throttle and one request of the user's budget.
# A missing, revoked or expired session spends nothing: a forged token naming a user cannot spend
# that user's budget. The caller checks the session again (domain.accounts), so this check only
# decides the spending. KEYS: session, seen, budget. ARGV: seen TTL (s), now (ms), limit, window
# (ms). Returns false (not cached), {session} (not live), or {session, due, counted, used, ttl}.
_GATE = (
    TAKE_FUNCTION
    + """
local cached = redis.call('GET', KEYS[1])
if not cached then return false end
local ok, record = pcall(cjson.decode, cached)
if not ok or type(record) ~= 'table' or record['revoked'] ~= false
   or type(record['expires_at_ms']) ~= 'number'
   or record['expires_at_ms'] <= tonumber(ARGV[2]) then
  return {cached}
end
local due = 0
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[1]) then due = 1 end
local taken = take(KEYS[3], tonumber(ARGV[3]), tonumber(ARGV[4]))
return {cached, due, taken[1], taken[2], taken[3]}
"""
)


# The cached session, decoded on every request's gate: msgspec's decoder gives json.loads's
# dict in a fraction of its time.
_decode_record = msgspec.json.Decoder().decode


class SessionLookups:
    """The session check's Redis part in one round trip (the cache fills and invalidations
    are the leased cache's, warble.dal.cache)."""

    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis
        self._lookup = redis.register_script(_LOOKUP)
        self._gate = redis.register_script(_GATE)

    def gate_later(
        self,
        batch: shared.ReadBatch,
        user_id: int,
        token_hash: bytes,
        now_ms: int,
        limit: int,
        window_ms: int,
    ) -> Callable[[], GateAnswer | None]:
        """The gate's script queued in ``batch`` (the request's first round trip); its reader
        gives None when the session is not cached."""
        digest = token_hash.hex()
        call_keys = [
            keys.session(digest, user_id).value,
            keys.session_seen(digest, user_id),
            keys.user_budget(user_id),
        ]
        args = [keys.SEEN_THROTTLE_SECONDS, now_ms, limit, window_ms]
        read = scripted(batch, self._gate, call_keys, args)

        def answer() -> GateAnswer | None:
            found = read()
            if not found:
                return None
            record = _decode_record(found[0])
            if len(found) == 1:
                return GateAnswer(record)
            _, due, counted, used, ttl = found
            return GateAnswer(record, bool(int(due)), (bool(int(counted)), int(used), int(ttl)))

        return answer

    def batch(self) -> ReadBatch:
        return ReadBatch(self._redis)

    def cached(
        self, token_hash: bytes, user_id: int | None = None
    ) -> tuple[dict[str, Any], bool] | None:
        """(the cached session record, due for a touch), or None when it is not cached."""
        digest = token_hash.hex()
        found = self._lookup(
            keys=[keys.session(digest, user_id).value, keys.session_seen(digest, user_id)],
            args=[keys.SEEN_THROTTLE_SECONDS],
        )
        if not found:
            return None
        record, due = found
        return json.loads(record), bool(int(due))

    def due_for_touch(self, token_hash: bytes, user_id: int | None = None) -> bool:
        seen = keys.session_seen(token_hash.hex(), user_id)
        return bool(self._redis.set(seen, "1", nx=True, ex=keys.SEEN_THROTTLE_SECONDS))


class RedisLastSeen:
    """``warble.domain.accounts.ports.LastSeen``: sessions seen, in ``keys.LAST_SEEN_BUCKETS``
    sorted sets (member: the session id, score: when it was seen, only ever raised), taken by
    the flush a page at a time (ZPOPMIN: a session seen again meanwhile waits for the next)."""

    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis

    def note(self, session_id: int, at: float) -> None:
        self._redis.zadd(keys.last_seen_bucket(session_id), {str(session_id): at}, gt=True)

    def take(self, limit: int) -> Iterator[list[tuple[int, float]]]:
        for bucket in range(keys.LAST_SEEN_BUCKETS):
            key = keys.last_seen_bucket(bucket)
            while True:
                page: list[tuple[str, float]] = list(self._redis.zpopmin(key, limit))  # type: ignore[arg-type]
                if not page:
                    break
                yield [(int(member), float(score)) for member, score in page]
                if len(page) < limit:
                    break


class RedisSocketTickets:
    """``warble.domain.accounts.ports.SocketTickets``: a ticket's claim as a string under the
    user's tag (``keys.socket_ticket``), expiring with the ticket, taken with GETDEL: one
    command, so of two racing connects with one ticket exactly one finds it."""

    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis

    def put(self, ticket_hash: bytes, claim: TicketClaim, ttl_ms: int) -> None:
        record = {
            "session_id": claim.session_id,
            "session": claim.token_hash.hex(),
            "names_user": claim.names_user,
            "expires_at_ms": claim.expires_at_ms,
        }
        key = keys.socket_ticket(claim.user_id, ticket_hash.hex())
        self._redis.set(key, json.dumps(record), px=max(1, ttl_ms))

    def take(self, ticket_hash: bytes, user_id: int) -> TicketClaim | None:
        found = self._redis.getdel(keys.socket_ticket(user_id, ticket_hash.hex()))
        if found is None:
            return None
        record = json.loads(found)
        return TicketClaim(
            user_id=user_id,
            session_id=int(record["session_id"]),
            token_hash=bytes.fromhex(record["session"]),
            names_user=bool(record["names_user"]),
            expires_at_ms=int(record["expires_at_ms"]),
        )
