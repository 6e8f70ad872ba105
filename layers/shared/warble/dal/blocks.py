"""Each user's blocks and mutes in Redis: one versioned hash beside the following set.

``{u:<id>}:blocks`` (warble.keys.memberships("blocks", id)) holds, for its owner, fields
``b<other>`` (the owner blocks other), ``y<other>`` (other blocks the owner) and ``m<other>``
(the owner mutes other), each valued ``<seq 19 digits><a|r>`` exactly as the membership hashes
(warble.dal.memberships): a change applies only if newer, so the write path and the graph
stream's consumer both apply every change, in any order and any number of times; ``*`` marks
the hash loaded (floor 0: it is complete). A missing hash is rebuilt from the owner's ``R#``
records (one Query) under a fill lease that every change voids.

Both sides of a block are in memory: the blocker's ``b`` and the blocked user's ``y``, so a
reader needs only their own hash (one HGETALL or HMGET, sent in the pipeline of the read it
filters).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from warble import keys
from warble.dal.memberships import LOADED, VersionedHashes
from warble.dal.redis import UNAVAILABLE_ERRORS, RedisClient, queued
from warble.domain.blocks.ports import Shield

if TYPE_CHECKING:
    from warble.domain import shared

KIND = "blocks"

# KEYS: a blocks hash. Its members held present as a flat list (kind letter + id), after a
# first element that says whether the hash is loaded (0 / 1): for a caller's Lua-only pipeline.
HIDDEN_SCRIPT = """
if redis.call('HEXISTS', KEYS[1], '*') == 0 then return {0} end
local out = {1}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if all[i] ~= '*' and string.sub(all[i + 1], -1) == 'a' then out[#out + 1] = all[i] end
end
return out
"""


def shield_of(fields: Iterable[str]) -> Shield:
    """``b<id>`` / ``y<id>`` / ``m<id>`` fields held present -> a Shield (``*`` is skipped)."""
    found: dict[str, list[str]] = {"b": [], "y": [], "m": [], LOADED: []}
    for field in fields:
        found[field[0]].append(field[1:])
    b, y, m = (frozenset(map(int, found[kind])) for kind in "bym")
    return Shield(b, y, m)


def hidden_answer(answer: list[str | int]) -> Shield | None:
    """``HIDDEN_SCRIPT``'s answer: the Shield, or None when the hash is not loaded."""
    if not answer or int(answer[0]) == 0:
        return None
    return shield_of(str(field) for field in answer[1:])


class BlockSets(VersionedHashes):
    """The blocks hashes of every user (``warble.domain.blocks.ports.BlockSets``)."""

    def __init__(self, redis: RedisClient, ttl_seconds: int) -> None:
        super().__init__(redis, ttl_seconds)
        self.hidden_script = redis.register_script(HIDDEN_SCRIPT)

    def key(self, owner: int) -> str:
        return keys.memberships(KIND, owner).value

    def read_later(self, batch: shared.ReadBatch, owner: int) -> Callable[[], Shield | None]:
        """Queue one HGETALL; its reader gives the owner's Shield, or None if the hash is not
        loaded (or Redis is unreachable)."""
        read = queued(batch).add("HGETALL", self.key(owner))

        def shield() -> Shield | None:
            try:
                held = read()
            except UNAVAILABLE_ERRORS:
                return None
            if not held or LOADED not in held:
                return None
            return shield_of(f for f, v in held.items() if v[-1] == "a")

        return shield

    def check_later(
        self, batch: shared.ReadBatch, owner: int, others: Iterable[int]
    ) -> Callable[[], Shield | None]:
        """Queue one HMGET of the owner's fields about ``others``: a Shield restricted to them,
        or None if the hash is not loaded."""
        fields = [f"{kind}{other}" for other in dict.fromkeys(others) for kind in "bym"]
        read = queued(batch).add("HMGET", self.key(owner), LOADED, *fields)

        def shield() -> Shield | None:
            try:
                floor, *values = read()
            except UNAVAILABLE_ERRORS:
                return None
            if floor is None:
                return None
            return shield_of(
                f for f, v in zip(fields, values, strict=True) if v and str(v)[-1] == "a"
            )

        return shield

    def rebuild(self, owner: int, load: Callable[[], list[tuple[str, int, int]]]) -> Shield:
        """Read the owner's records (``load``: (kind, other, seq)) and store them under the
        fill lease; the hash is complete (floor 0)."""

        def fields() -> tuple[dict[str, int], int]:
            return {f"{kind}{other}": seq for kind, other, seq in load()}, 0

        stored, _ = self._rebuild(keys.memberships(KIND, owner), fields)
        return shield_of(stored)

    def apply(self, owner: int, kind: str, other: int, seq: int, present: bool) -> None:
        """One change (kind ``b``, ``y`` or ``m``), idempotent and order-free."""
        self._change(keys.memberships(KIND, owner), f"{kind}{other}", seq, present)

    def apply_later(
        self, writes: shared.Writes, owner: int, kind: str, other: int, seq: int, present: bool
    ) -> None:
        """``apply`` queued in a stream batch's writes."""
        self._change_later(writes, keys.memberships(KIND, owner), f"{kind}{other}", seq, present)
