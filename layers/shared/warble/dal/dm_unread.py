"""Unread direct messages per user in Redis: the ``dm_unread`` hash (``keys.dm_unread``).

Field = conversation id, value = that conversation's unread count for the user; plus one
marker field ``BUILT`` (value 0, so the sum of HVALS is the total) that tells "built, and no
other conversation has unread messages" from "missing". The durable truth is each membership's
``unread`` counter in DynamoDB (``warble.dal.conversations``); this hash is a cache of it that
the notifications feature sums for ``message`` without touching DynamoDB.

- A message raises its recipient's field by one, only in a built hash (a missing one would
  otherwise look built with a single conversation in it);
- reading a conversation deletes its field;
- a missing hash (first use, eviction, a lost node) is rebuilt from the memberships, under a
  lease taken before they are read: every change above voids it, so a rebuild that read the
  memberships before a message or a read cannot store that stale answer (the next read
  rebuilds again).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from warble import keys
from warble.dal.redis import RedisClient

BUILT = "built"

# KEYS: the hash, its lease; ARGV: field, marker. Raise a conversation's count only where the
# hash is built; any change voids a rebuild under way.
_INCREMENT_IF_BUILT = """
redis.call('DEL', KEYS[2])
if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 then
  return redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
end
return -1
"""

# KEYS: the hash, its lease; ARGV: field.
_CLEAR = """
redis.call('DEL', KEYS[2])
return redis.call('HDEL', KEYS[1], ARGV[1])
"""

# KEYS: the hash, its lease; ARGV: the lease token, then field/value pairs (the marker first).
_FILL = """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1
"""


class UnreadMessageCache:
    """The store behind ``warble.domain.conversations.ports.UnreadMessages``."""

    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis
        self._increment = redis.register_script(_INCREMENT_IF_BUILT)
        self._clear = redis.register_script(_CLEAR)
        self._fill = redis.register_script(_FILL)

    def counts(self, user_id: int) -> dict[int, int] | None:
        """Unread counts by conversation (nonzero ones), or None when the hash is missing."""
        raw = self._redis.hgetall(keys.dm_unread(user_id))
        if BUILT not in raw:
            return None
        return {int(k): int(v) for k, v in raw.items() if k != BUILT and int(v) > 0}

    def rebuild(self, user_id: int, load: Callable[[], dict[int, int]]) -> dict[int, int]:
        """Read the counts from the memberships (``load``) and store them if nothing changed
        since the lease was taken. Answers what it read either way."""
        lease = keys.dm_unread_lease(user_id)
        token = secrets.token_hex(16)
        self._redis.set(lease, token, px=keys.LEASE_MS)
        counts = {c: n for c, n in load().items() if n > 0}
        args: list[str | int] = [token, BUILT, 0]
        for conversation_id, n in counts.items():
            args += [conversation_id, n]
        self._fill(keys=[keys.dm_unread(user_id), lease], args=args)
        return counts

    def increment(self, user_id: int, conversation_id: int) -> None:
        self._increment(
            keys=[keys.dm_unread(user_id), keys.dm_unread_lease(user_id)],
            args=[str(conversation_id), BUILT],
        )

    def clear(self, user_id: int, conversation_id: int) -> None:
        self._clear(
            keys=[keys.dm_unread(user_id), keys.dm_unread_lease(user_id)],
            args=[str(conversation_id)],
        )
