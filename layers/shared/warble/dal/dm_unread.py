"""Unread direct messages per user in Redis: the ``dm_unread`` hash (``keys.dm_unread``).

Field = conversation id, value = that conversation's unread count for the user; plus one
marker field ``BUILT`` (value 0, so the sum of HVALS is the total) that tells "built, and no
other conversation has unread messages" from "missing". The durable truth is each membership's
``unread`` counter in DynamoDB (``warble.dal.conversations``); this hash is a cache of it that
the notifications feature sums for ``message`` without touching DynamoDB.

- A message raises its recipient's field by one, only in a built hash (a missing one would
  otherwise look built with a single conversation in it);
- reading a conversation deletes its field;
- a missing hash (first use, eviction, a lost node) is rebuilt from the memberships by
  ``ConversationService.unread_counts``, which writes every nonzero counter and the marker.
"""

from __future__ import annotations

from warble import keys
from warble.dal.redis import RedisClient

BUILT = "built"

# Raise a conversation's count only where the hash is built (KEYS[1] the hash, ARGV[1] field).
_INCREMENT_IF_BUILT = """
if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 then
  return redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
end
return -1
"""


class UnreadMessageCache:
    """The store behind ``warble.domain.ports.UnreadMessages``."""

    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis
        self._increment = redis.register_script(_INCREMENT_IF_BUILT)

    def counts(self, user_id: int) -> dict[int, int] | None:
        """Unread counts by conversation (nonzero ones), or None when the hash is missing."""
        raw = self._redis.hgetall(keys.dm_unread(user_id))
        if BUILT not in raw:
            return None
        return {int(k): int(v) for k, v in raw.items() if k != BUILT and int(v) > 0}

    def fill(self, user_id: int, counts: dict[int, int]) -> None:
        """Replace the hash with ``counts`` (one MULTI: a reader never sees it half built)."""
        key = keys.dm_unread(user_id)
        mapping: dict[str, int] = {BUILT: 0, **{str(c): n for c, n in counts.items() if n > 0}}
        with self._redis.pipeline(transaction=True) as pipe:
            pipe.delete(key)
            pipe.hset(key, mapping=mapping)  # type: ignore[arg-type]
            pipe.execute()

    def increment(self, user_id: int, conversation_id: int) -> None:
        self._increment(keys=[keys.dm_unread(user_id)], args=[str(conversation_id), BUILT])

    def clear(self, user_id: int, conversation_id: int) -> None:
        self._redis.hdel(keys.dm_unread(user_id), str(conversation_id))
