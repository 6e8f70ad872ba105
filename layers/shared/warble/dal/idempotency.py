"""Idempotency keys in Redis: the first answer to a POST, replayed for 24 hours.

One key per (user, Idempotency-Key): ``{idem:<user_id>}:<sha256 of the key>`` holds either a
pending marker (taken with SET NX before the request runs, so two racing repeats cannot both
create) or the finished answer. Both carry the request's fingerprint, so a key reused for a
different request is recognised.
"""

from __future__ import annotations

import json
from typing import Any

from warble import keys
from warble.dal.redis import RedisClient

PENDING = "pending"


class IdempotencyStore:
    def __init__(self, redis: RedisClient, ttl_seconds: int, pending_seconds: int) -> None:
        self._redis = redis
        self._ttl = ttl_seconds
        self._pending = pending_seconds

    def begin(self, user_id: int, key: str, fingerprint: str) -> dict[str, Any] | None:
        """Take the key for this request (None), or what it holds: ``{"state": "pending" |
        "done", "fingerprint", "answer"?}``."""
        name = keys.idempotency(user_id, key)
        marker = json.dumps({"state": PENDING, "fingerprint": fingerprint})
        if self._redis.set(name, marker, nx=True, ex=self._pending):
            return None
        raw = self._redis.get(name)
        if raw is None:  # expired between the two calls: take it now
            return self.begin(user_id, key, fingerprint)
        held: dict[str, Any] = json.loads(raw)
        return held

    def finish(self, user_id: int, key: str, fingerprint: str, answer: dict[str, Any]) -> None:
        record = {"state": "done", "fingerprint": fingerprint, "answer": answer}
        self._redis.set(keys.idempotency(user_id, key), json.dumps(record), ex=self._ttl)

    def abandon(self, user_id: int, key: str) -> None:
        """The request did not succeed: a repeat may try again."""
        self._redis.delete(keys.idempotency(user_id, key))
