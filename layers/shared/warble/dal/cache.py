"""Cache-aside with fill leases, after Facebook's memcache leases.

The race it closes (seed 000): a reader misses, reads the old row, a writer commits and deletes
the cache key, then the reader writes the old row back, and the stale copy stays until its TTL.

Here a reader that misses takes a lease (a random token under the lease key, SET NX) *before* it
reads the database, and may fill the cache only while its token is still the lease (checked and
written atomically in Lua). A writer commits first and then deletes both the value and the lease,
so any reader that read before the commit has lost its lease and cannot fill. A reader that takes
the lease after the writer's delete reads after the commit, so it fills the new value. A reader
that finds the lease held by another simply reads the database and does not fill.

A cache holds one kind of value, read and dropped by its subject (a user id for profiles, a tweet
id for tweets): ``key`` names the subject's value and lease keys (``warble.keys``), so the rules
that use it never name a key.
"""

from __future__ import annotations

import contextlib
import json
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import msgspec

from warble import keys
from warble.dal.redis import (
    UNAVAILABLE_ERRORS,
    ReadBatch,
    RedisClient,
    eval_pipelined,
    mget,
    queued,
)

if TYPE_CHECKING:
    from warble.domain import shared

T = TypeVar("T")
K = TypeVar("K")

_FILL_IF_LEASED = """
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
  redis.call('DEL', KEYS[2])
  return 1
end
return 0
"""


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)


@dataclass(frozen=True, slots=True)
class Codec:
    """How a cache writes its values and reads them back. The default: every read decodes what
    it finds (a page of 20 tweets, their authors and counters: some 60 values), and msgspec
    decodes JSON to the same dicts and lists as ``json.loads`` in about a third of its time;
    writes stay ``json.dumps`` (``default=str``): they are rare, and JSON is JSON. A cache whose
    values have one known shape may read them with a typed decoder (``warble.dal.tweet_cache``)."""

    encode: Callable[[Any], str | bytes] = _dumps
    decode: Callable[[bytes | str], Any] = msgspec.json.Decoder().decode


JSON = Codec()


# Keys kept per cache and container: a warm container reads the same tweets, counters and
# authors page after page (a home page names 45), and a key's two strings cost more to make than
# a lookup; emptied when full, so it holds the subjects read most lately.
_KEYS_HELD = 4096


class LeasedCache(Generic[K]):
    def __init__(
        self,
        redis: RedisClient,
        ttl_seconds: int,
        key: Callable[[K], keys.CacheKey],
        lease_ms: int = keys.LEASE_MS,
        codec: Codec = JSON,
    ) -> None:
        self._redis = redis
        self._encode = codec.encode
        self._decode = codec.decode
        self._key = key
        self._ttl = ttl_seconds
        self._lease_ms = lease_ms
        self._fill = redis.register_script(_FILL_IF_LEASED)
        self._keys: dict[K, keys.CacheKey] = {}

    def _made_key(self, subject: K) -> keys.CacheKey:
        """The subject's key, made and kept (``_KEYS_HELD``)."""
        if len(self._keys) >= _KEYS_HELD:
            self._keys.clear()
        key = self._keys[subject] = self._key(subject)
        return key

    def get(self, subject: K) -> Any | None:
        """The cached value; None on a miss, and while Redis is unreachable (the caller then
        reads the source of truth, as on any miss)."""
        return self._get(self._key(subject))

    def _get(self, key: keys.CacheKey) -> Any | None:
        try:
            raw = self._redis.get(key.value)
        except UNAVAILABLE_ERRORS:
            return None
        return None if raw is None else self._decode(raw)

    def get_many(self, subjects: Sequence[K]) -> list[Any | None]:
        """One MGET on a single node; one per slot group on a cluster (see ``dal.redis.mget``)."""
        if not subjects:
            return []
        raws = mget(self._redis, [self._key(s).value for s in subjects])
        return [None if raw is None else self._decode(raw) for raw in raws]

    def batch(self) -> ReadBatch:
        return ReadBatch(self._redis)

    def get_many_or_load(
        self, subjects: Sequence[K], loader: Callable[[list[int]], list[Any | None]]
    ) -> list[Any | None]:
        """One MGET; the misses (by index) are leased in one pipeline and loaded in one call.
        With Redis unreachable, everything is loaded from the source (and nothing filled)."""
        batch = self.batch()
        read = self.get_many_later(batch, subjects, loader)
        batch.run()
        return read()

    def get_many_later(
        self,
        batch: shared.ReadBatch,
        subjects: Sequence[K],
        loader: Callable[[list[int]], list[Any | None]],
        fill: bool = True,
    ) -> Callable[[], list[Any | None]]:
        """``get_many_or_load`` with its MGET queued in ``batch``: the reader loads the misses.
        ``fill=False`` loads them without leasing or filling (no round trip but the MGET: a
        stream consumer's reads, which no reader is waiting to find cached)."""
        held = self._keys.get
        cache_keys = [held(s) or self._made_key(s) for s in subjects]
        read = queued(batch).mget([k.value for k in cache_keys])

        def values() -> list[Any | None]:
            try:
                raws = read()
            except UNAVAILABLE_ERRORS:
                return loader(list(range(len(cache_keys))))
            found = [None if raw is None else self._decode(raw) for raw in raws]
            if not fill:
                missing = [i for i, value in enumerate(found) if value is None]
                for index, value in zip(missing, loader(missing) if missing else [], strict=True):
                    found[index] = value
                return found
            return self._load_misses(cache_keys, found, loader)

        return values

    def _load_misses(
        self,
        cache_keys: list[keys.CacheKey],
        values: list[Any | None],
        loader: Callable[[list[int]], list[Any | None]],
    ) -> list[Any | None]:
        missing = [i for i, value in enumerate(values) if value is None]
        if not missing:
            return values
        tokens = [secrets.token_hex(16) for _ in missing]
        pipe = self._redis.pipeline(transaction=False)
        for index, token in zip(missing, tokens, strict=True):
            pipe.set(cache_keys[index].lease, token, nx=True, px=self._lease_ms)
        try:
            leased = pipe.execute()
        except UNAVAILABLE_ERRORS:  # gone since the MGET: load, fill nothing
            leased = [False] * len(missing)
        loaded = loader(missing)
        fills: list[tuple[list[str], list[Any]]] = []
        for index, token, got, value in zip(missing, tokens, leased, loaded, strict=True):
            values[index] = value
            if got and value is not None:
                key = cache_keys[index]
                payload = self._encode(value)
                fills.append(([key.value, key.lease], [token, payload, self._ttl]))
        if fills:  # one round trip for every fill (each still checks its own lease)
            with contextlib.suppress(*UNAVAILABLE_ERRORS):
                eval_pipelined(self._redis, self._fill, fills)
        return values

    def get_or_load(self, subject: K, loader: Callable[[], T | None]) -> T | Any | None:
        """The cached value, else the loaded one (filled under a lease). With Redis unreachable
        the read falls back to the source of truth: a cache outage costs latency, not answers."""
        key = self._key(subject)
        try:
            cached = self._get(key)
            if cached is not None:
                return cached
            token = self._lease(key)
        except UNAVAILABLE_ERRORS:
            return loader()
        value = loader()
        if token is not None and value is not None:
            self._fill_quietly(key, token, value)
        return value

    def _fill_quietly(self, key: keys.CacheKey, token: str, value: Any) -> None:
        """A read's fill: if Redis went away since the lease, the answer stands unfilled (the
        lease expires by itself)."""
        with contextlib.suppress(*UNAVAILABLE_ERRORS):
            self._fill_leased(key, token, value)

    def lease(self, subject: K) -> str | None:
        return self._lease(self._key(subject))

    def _lease(self, key: keys.CacheKey) -> str | None:
        token = secrets.token_hex(16)
        if self._redis.set(key.lease, token, nx=True, px=self._lease_ms):
            return token
        return None

    def fill(self, subject: K, token: str, value: Any) -> bool:
        return self._fill_leased(self._key(subject), token, value)

    def _fill_leased(self, key: keys.CacheKey, token: str, value: Any) -> bool:
        payload = self._encode(value)
        return bool(self._fill(keys=[key.value, key.lease], args=[token, payload, self._ttl]))

    def fill_missing(self, entries: Sequence[tuple[K, Any]]) -> None:
        """Cache values just read from the source of truth, where nothing is cached yet.

        Only for values whose one change is deletion by tombstone: SET NX never overwrites a
        tombstone, and a tombstone always overwrites, so a late fill cannot resurrect anything.
        """
        if not entries:
            return
        pipe = self._redis.pipeline(transaction=False)
        for subject, value in entries:
            payload = self._encode(value)
            pipe.set(self._key(subject).value, payload, nx=True, ex=self._ttl)
        with contextlib.suppress(*UNAVAILABLE_ERRORS):  # only an optimisation of later reads
            pipe.execute()

    def tombstone(self, subject: K, marker: Any, ttl_seconds: int) -> None:
        """Replace the value with ``marker`` and void the fill lease (one slot, one MULTI)."""
        key = self._key(subject)
        pipe = self._redis.pipeline(transaction=True)
        pipe.set(key.value, self._encode(marker), ex=ttl_seconds)
        pipe.delete(key.lease)
        pipe.execute()

    def invalidate(self, subject: K) -> None:
        """Call after the database commit. Both keys share a hash tag: one DEL, one slot."""
        key = self._key(subject)
        self._redis.delete(key.value, key.lease)

    def invalidate_many(self, subjects: Sequence[K]) -> None:
        """``invalidate`` for many keys in one pipelined round trip (one DEL per slot)."""
        if not subjects:
            return
        pipe = self._redis.pipeline(transaction=False)
        for key in map(self._key, subjects):
            # A raw DEL: a cluster pipeline refuses ``delete`` of several keys even in one slot
            # (and routes the raw command by the keys' slot, refusing keys in different slots).
            pipe.execute_command("DEL", key.value, key.lease)
        pipe.execute()
