"""Versioned membership sets in Redis: who a user follows, what they liked, what they retweeted.

One hash per owner and kind (warble.keys.memberships). Field ``*`` marks the hash as loaded and
holds its floor (19 digits): the hash knows every member whose version is at or above the floor
(the following set has floor 0: it is complete, as the follow limit bounds it). Every other
field is a member id, valued with the version of its latest change, ``<seq 19 digits><a|r>``:
``a`` added, ``r`` removed (a tombstone). A follow or a like mints ``seq`` (a Snowflake), and
its removal carries the same ``seq``, so versions order every change of one member:
(seq, added) < (seq, removed) < (a later seq, added).

A change is applied only if its version is greater than the one held (``_APPLY``), so the write
path and the stream consumer can both apply every change, in any order and any number of times,
and the hash converges to the table. A change applies only to a loaded hash; a missing hash is
rebuilt from DynamoDB on a read under a fill lease (``_FILL``), which every change voids, so a
fill that read the table before a change cannot store what it read (the reader still answers
with it, as any read concurrent with a write may).
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from warble import keys
from warble.dal.redis import UNAVAILABLE_ERRORS, ReadBatch, RedisClient, queued, written
from warble.domain.shared import Held

if TYPE_CHECKING:
    from warble.domain import shared

LOADED = "*"

_APPLY = """
redis.call('DEL', KEYS[2])
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local held = redis.call('HGET', KEYS[1], ARGV[1])
if held and held >= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
"""

_FILL = """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[1], '*', ARGV[3], unpack(ARGV, 4))
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""


def version(seq: int, present: bool) -> str:
    return f"{seq:019d}{'a' if present else 'r'}"


class VersionedHashes:
    """What every versioned hash shares (these and warble.dal.blocks'): the leased fill of a
    rebuild, and the apply-if-newer of one change."""

    def __init__(self, redis: RedisClient, ttl_seconds: int) -> None:
        self._redis = redis
        self._ttl = ttl_seconds
        self._apply = redis.register_script(_APPLY)
        self._fill = redis.register_script(_FILL)

    def batch(self) -> ReadBatch:
        return ReadBatch(self._redis)

    def _rebuild(
        self, key: keys.CacheKey, load: Callable[[], tuple[Mapping[Any, int], int]]
    ) -> tuple[Mapping[Any, int], int]:
        """``load`` the fields (field -> seq) and the floor and store them, under a lease taken
        before the read: a change committed after the read voids the lease, so this fill cannot
        hide it. Answers what it read either way."""
        token = secrets.token_hex(16)
        try:
            leased = self._redis.set(key.lease, token, nx=True, px=keys.LEASE_MS)
        except UNAVAILABLE_ERRORS:
            leased = False
        fields, floor = load()
        if leased:
            args: list[str | int] = [token, self._ttl, f"{floor:019d}"]
            for field, seq in fields.items():
                args += [str(field), version(seq, True)]
            with contextlib.suppress(*UNAVAILABLE_ERRORS):
                self._fill(keys=[key.value, key.lease], args=args)
        return fields, floor

    def _change_later(
        self, writes: shared.Writes, key: keys.CacheKey, field: str | int, seq: int, present: bool
    ) -> None:
        """``_change`` queued in a stream batch's writes (they raise if Redis fails)."""
        written(writes).script(self._apply, [key.value, key.lease], [field, version(seq, present)])

    def _change(self, key: keys.CacheKey, field: str | int, seq: int, present: bool) -> None:
        """One change, after its commit (write path) or from the stream: idempotent and
        order-free. With Redis unreachable it is left to the other path (or the hash's TTL)."""
        with contextlib.suppress(*UNAVAILABLE_ERRORS):
            self._apply(keys=[key.value, key.lease], args=[field, version(seq, present)])


class MembershipSets(VersionedHashes):
    """One kind of membership hash (``following``, ``liked``, ``retweeted``) for every owner."""

    def __init__(self, redis: RedisClient, kind: str, ttl_seconds: int) -> None:
        super().__init__(redis, ttl_seconds)
        self._kind = kind

    def check_later(
        self, batch: shared.ReadBatch, owner: int, members: Iterable[int]
    ) -> Callable[[], Held | None]:
        """Queue one HMGET; its reader gives the members held present, or None if the hash is
        not loaded (or Redis is unreachable)."""
        wanted = list(dict.fromkeys(members))
        read = queued(batch).add(
            "HMGET", keys.memberships(self._kind, owner).value, LOADED, *wanted
        )

        def held() -> Held | None:
            try:
                floor, *values = read()
            except UNAVAILABLE_ERRORS:
                return None
            if floor is None:
                return None
            present = {m for m, v in zip(wanted, values, strict=True) if v and v[-1] == "a"}
            return Held(int(floor), frozenset(present))

        return held

    def rebuild(self, owner: int, load: Callable[[], tuple[dict[int, int], int]]) -> Held:
        """Read the owner's members from the table (``load``: member -> seq, and the floor) and
        store them under the fill lease (``_rebuild``)."""
        members, floor = self._rebuild(keys.memberships(self._kind, owner), load)
        return Held(floor, frozenset(members))

    def apply(self, owner: int, member: int, seq: int, present: bool) -> None:
        self._change(keys.memberships(self._kind, owner), member, seq, present)

    def apply_later(
        self, writes: shared.Writes, owner: int, member: int, seq: int, present: bool
    ) -> None:
        self._change_later(writes, keys.memberships(self._kind, owner), member, seq, present)

    def members_later(self, batch: shared.ReadBatch, owner: int) -> Callable[[], Held | None]:
        """Queue one HGETALL: every member held present, or None if the hash is not loaded."""
        read = queued(batch).add("HGETALL", keys.memberships(self._kind, owner).value)

        def held() -> Held | None:
            fields = read()
            if not fields or LOADED not in fields:
                return None
            present = frozenset(int(m) for m, v in fields.items() if m != LOADED and v[-1] == "a")
            return Held(int(fields[LOADED]), present)

        return held
