"""Unread notification counts in Redis (``warble.domain.notifications.ports.UnreadStore``),
apart from the table (``warble.dal.notifications``): a warm unread-counts read builds this store
and not the table's, so a cold container does not import pynamodb and botocore to answer it.

Redis (``warble.keys``): per user, a hash of read positions (and the ``built`` marker), one
sorted set of unread ids per type, and a rebuild lease, all under the user's tag ``{u:<id>}``,
the DM feature's ``dm_unread`` hash too, and the home timeline and its read position; the
shared system list ``{sys}:notifications``; the celebrities' sets under ``{cel}``. Ids are
19-digit zero-padded strings in Redis, so string order is id order (a double score cannot hold
a 63-bit id).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from warble import keys
from warble.dal.blocks import HIDDEN_SCRIPT, hidden_answer
from warble.dal.hot import HotCache, count_above, held_sets
from warble.dal.redis import ReadBatch, RedisClient, queued, scripted
from warble.domain.notifications.ports import Snapshot

if TYPE_CHECKING:
    from warble.domain import shared

STORED_TYPES = ("follow", "like", "reply", "mention", "retweet", "match")
POSITION_TYPES = (*STORED_TYPES, "system", "home")


def padded(value: int) -> str:
    return f"{value:019d}"


# ---- Redis ------------------------------------------------------------------------------------
# KEYS: positions hash, one unread set per stored type, dm_unread. One call: every count of the
# user's own tag; the DM sum is false (nil) when dm_unread is not built.
_USER_COUNTS = """
local out = {redis.call('HGET', KEYS[1], 'built') or false,
             redis.call('HGET', KEYS[1], 'system') or false}
for i = 2, #KEYS - 1 do out[#out + 1] = redis.call('ZCARD', KEYS[i]) end
local sum = false
if redis.call('HEXISTS', KEYS[#KEYS], 'built') == 1 then
  sum = 0
  for _, v in ipairs(redis.call('HVALS', KEYS[#KEYS])) do sum = sum + (tonumber(v) or 0) end
end
out[#out + 1] = sum
return out
"""

# KEYS: home timeline, home read position, followed celebrities; ARGV: the user's id. Counts the
# timeline's entries above the position that are not the user's own, and how many of them each
# author has (flat: author, n, ...), so the reader can take out the blocked and muted ones.
_HOME_COUNT = """
local pos = redis.call('GET', KEYS[2])
local built = redis.call('EXISTS', KEYS[1])
local celebs = redis.call('GET', KEYS[3])
local count = 0
local per = {}
local authors = {}
if pos and built == 1 then
  local suffix = ':' .. ARGV[1]
  for _, m in ipairs(redis.call('ZRANGEBYLEX', KEYS[1], '(' .. pos .. ';', '+')) do
    if string.sub(m, -#suffix) ~= suffix then
      count = count + 1
      local author = string.match(m, ':(%d+)$')
      if per[author] == nil then
        per[author] = 0
        authors[#authors + 1] = author
      end
      per[author] = per[author] + 1
    end
  end
end
local flat = {}
for _, a in ipairs(authors) do
  flat[#flat + 1] = a
  flat[#flat + 1] = per[a]
end
return {pos or false, built, count, celebs or false, flat}
"""

# KEYS: positions hash, the type's unread set, the rebuild lease; ARGV: type, id, cap.
_ADD = """
if redis.call('HEXISTS', KEYS[1], 'built') == 0 then
  redis.call('DEL', KEYS[3])
  return -1
end
local pos = redis.call('HGET', KEYS[1], ARGV[1])
if pos and pos >= ARGV[2] then return 0 end
local added = redis.call('ZADD', KEYS[2], 0, ARGV[2])
if added == 1 then redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -(tonumber(ARGV[3]) + 1)) end
return added
"""

# KEYS: positions hash, one unread set per type in ARGV[2..]; ARGV[1]: the new position. Each
# position moves to the newest id counted if that is higher (so nothing counted stays unread
# behind a zero count), never backwards.
_MARK_READ = """
if redis.call('HEXISTS', KEYS[1], 'built') == 0 then return false end
local out = {}
for i = 2, #ARGV do
  local pos = ARGV[1]
  local top = redis.call('ZREVRANGEBYLEX', KEYS[i], '+', '-', 'LIMIT', 0, 1)[1]
  if top and top > pos then pos = top end
  local old = redis.call('HGET', KEYS[1], ARGV[i])
  if old and old > pos then pos = old end
  redis.call('HSET', KEYS[1], ARGV[i], pos)
  redis.call('DEL', KEYS[i])
  out[#out + 1] = pos
end
return out
"""

# KEYS: positions hash, lease, one unread set per type; ARGV: token, then per type:
# name, position, n, n ids. Fills only while the lease is held.
_FILL = """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[2])
local a = 2
for k = 3, #KEYS do
  redis.call('HSET', KEYS[1], ARGV[a], ARGV[a + 1])
  redis.call('DEL', KEYS[k])
  local n = tonumber(ARGV[a + 2])
  for j = 1, n do redis.call('ZADD', KEYS[k], 0, ARGV[a + 2 + j]) end
  a = a + 3 + n
end
while a <= #ARGV do
  redis.call('HSET', KEYS[1], ARGV[a], ARGV[a + 1])
  a = a + 2
end
redis.call('HSET', KEYS[1], 'built', '1')
return 1
"""

# KEYS: the system list; ARGV: an id. Only a built list takes it (a rebuild reads the table).
_ADD_SYSTEM = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('ZADD', KEYS[1], 0, ARGV[1])
"""

SENTINEL = "0"
RATE_KEY_SECONDS = 2 * 3600  # outlives any window (a minute by default)


class RedisUnread:
    """``warble.domain.notifications.ports.UnreadStore``: the counts, in at most two round trips."""

    def __init__(
        self,
        redis: RedisClient,
        cap: int,
        lease_ms: int = keys.LEASE_MS,
        hot: HotCache | None = None,
    ) -> None:
        self._redis = redis
        # The system list and the celebrities' recent sets held in the function
        # (warble.dal.hot): every unread poll reads the one and its reader's celebrities' others.
        self._hot = hot
        self.cap = cap
        self._lease_ms = lease_ms
        self._user_counts = redis.register_script(_USER_COUNTS)
        self._home_count = redis.register_script(_HOME_COUNT)
        self._hidden = redis.register_script(HIDDEN_SCRIPT)
        self._add = redis.register_script(_ADD)
        self._mark = redis.register_script(_MARK_READ)
        self._fill = redis.register_script(_FILL)
        self._add_system = redis.register_script(_ADD_SYSTEM)

    def batch(self) -> ReadBatch:
        return ReadBatch(self._redis)

    # ---- the consumer ---------------------------------------------------------------------
    def admit(self, recipient: int, window: int, cap: int) -> bool:
        key = keys.notif_rate(recipient, window)
        pipe = self._redis.pipeline(transaction=False)
        pipe.incr(key)
        pipe.expire(key, RATE_KEY_SECONDS)
        stored, _ = pipe.execute()
        return int(stored) <= cap

    def release(self, recipient: int, window: int) -> None:
        self._redis.decr(keys.notif_rate(recipient, window))

    # ---- the consumer, a batch at a time (queued in the batch's round trips) -----------------
    def admit_later(
        self, batch: shared.ReadBatch, recipient: int, window: int, wanted: int
    ) -> Callable[[], int]:
        """Take ``wanted`` places under the recipient's cap for this window; the reader gives
        the places taken in the window so far, these included."""
        key = keys.notif_rate(recipient, window)
        taken = queued(batch).add("INCRBY", key, wanted)
        queued(batch).add("EXPIRE", key, RATE_KEY_SECONDS)
        return lambda: int(taken())

    def release_later(
        self, batch: shared.ReadBatch, recipient: int, window: int, places: int
    ) -> None:
        queued(batch).add("DECRBY", keys.notif_rate(recipient, window), places)

    def add_later(
        self, batch: shared.ReadBatch, recipient: int, kind: str, notification_id: int
    ) -> Callable[[], int]:
        """``add`` queued in ``batch``."""
        read = scripted(
            batch, self._add,
            [keys.notif_positions(recipient), keys.notif_unread(recipient, kind),
             keys.notif_lease(recipient)],
            [kind, padded(notification_id), self.cap],
        )  # fmt: skip
        return lambda: int(read())

    def snapshots_later(
        self, batch: shared.ReadBatch, user_ids: list[int]
    ) -> Callable[[], dict[int, Snapshot]]:
        """``snapshot`` of several users: their round trips 1 queued in ``batch``, and their
        round trips 2 sent together by the reader (one pipeline for all of them)."""
        firsts = {u: self._first_later(batch, u) for u in dict.fromkeys(user_ids)}

        def snapshots() -> dict[int, Snapshot]:
            snaps = {u: first() for u, first in firsts.items()}
            if not snaps:
                return {}
            pipe = self._redis.pipeline(transaction=False)
            sizes = {u: self._second(pipe, u, snap) for u, snap in snaps.items()}
            answers = pipe.execute()
            at = 0
            for u, snap in snaps.items():
                self._settle(snap, answers[at : at + sizes[u]])
                at += sizes[u]
            return snaps

        return snapshots

    def add(self, recipient: int, kind: str, notification_id: int) -> int:
        return int(
            self._add(
                keys=[keys.notif_positions(recipient), keys.notif_unread(recipient, kind),
                      keys.notif_lease(recipient)],
                args=[kind, padded(notification_id), self.cap],
            )
        )  # fmt: skip

    # ---- reading the counts ---------------------------------------------------------------
    def snapshot(self, user_id: int) -> Snapshot:
        """Round trip 1: the user's own counts, the DM hash, the home count and the followed
        celebrities. Round trip 2 (one pipeline): the system list above the user's position and
        each celebrity's recent tweets above the home position."""
        batch = ReadBatch(self._redis)
        read = self.snapshot_later(batch, user_id)
        batch.run()
        return read()

    def snapshot_later(self, batch: shared.ReadBatch, user_id: int) -> Callable[[], Snapshot]:
        """``snapshot`` with round trip 1 queued in ``batch`` (three read-only scripts: in the
        gate's round trip when the HTTP skeleton sends them with it); its reader sends round
        trip 2."""
        first = self._first_later(batch, user_id)

        def snapshot() -> Snapshot:
            snap = first()
            pipe = self._redis.pipeline(transaction=False)
            self._second(pipe, user_id, snap)
            self._settle(snap, pipe.execute())
            return snap

        return snapshot

    def _first_later(self, batch: shared.ReadBatch, user_id: int) -> Callable[[], Snapshot]:
        """Round trip 1 (the user's own counts, the DM hash, the home count, the followed
        celebrities, the blocks hash) queued in ``batch``."""
        calls = [
            (
                self._user_counts,
                [keys.notif_positions(user_id)]
                + [keys.notif_unread(user_id, kind) for kind in STORED_TYPES]
                + [keys.dm_unread(user_id)],
                [],
            ),
            (
                self._home_count,
                [keys.home_timeline(user_id), keys.home_read(user_id),
                 keys.home_celebrities(user_id)],
                [user_id],
            ),
            (self._hidden, [keys.memberships("blocks", user_id).value], []),
        ]  # fmt: skip
        readers = [scripted(batch, script, call_keys, args) for script, call_keys, args in calls]
        return lambda: self._first(user_id, *(read() for read in readers))

    def _first(self, user_id: int, mine: Any, home: Any, shield: Any) -> Snapshot:
        snap = Snapshot(
            built=mine[0] is not None,
            counts={kind: int(n) for kind, n in zip(STORED_TYPES, mine[2:-1], strict=True)},
            system_position=None if mine[1] is None else int(mine[1]),
            message=None if mine[-1] is None else int(mine[-1]),
            home_position=None if home[0] is None else int(home[0]),
            home_built=bool(home[1]),
            home=int(home[2]),
            celebrities=None if home[3] is None else [int(x) for x in str(home[3]).split(",") if x],
        )
        held = hidden_answer(shield)
        if held is not None:
            snap.hidden = held.hidden
            per_author = home[4] or []
            snap.home -= sum(
                int(n)
                for author, n in zip(per_author[::2], per_author[1::2], strict=True)
                if int(author) in held.hidden
            )
        return snap

    def _second(self, pipe: Any, user_id: int, snap: Snapshot) -> int:
        """Round trip 2 queued in ``pipe`` (the system list above the user's position, each
        followed celebrity's recent tweets above the home position); how many commands."""
        system_from = snap.system_position if snap.system_position is not None else user_id
        celebrities = snap.celebrities or [] if snap.home_position is not None else []
        celebrities = [c for c in celebrities if c not in (snap.hidden or ())]
        if self._hot is not None:  # counted here from the held sets: nothing queued
            self._held_counts(self._hot, snap, padded(system_from), celebrities)
            return 0
        pipe.exists(keys.system_notifications())
        pipe.zlexcount(keys.system_notifications(), f"({padded(system_from)}", "+")
        for celebrity in celebrities:
            pipe.exists(keys.celebrity_recent(celebrity))
            pipe.zlexcount(
                keys.celebrity_recent(celebrity), f"({padded(snap.home_position or 0)};", "+"
            )
        snap.celebrities_unbuilt = celebrities  # the checked ones, until _settle
        return 2 + 2 * len(celebrities)

    def _settle(self, snap: Snapshot, answers: list[Any]) -> None:
        if self._hot is not None:
            return  # _second counted from the held sets
        snap.system = int(answers[1]) if answers[0] else None
        built, counted = answers[2::2], answers[3::2]
        snap.home += sum(int(n) for n in counted)
        snap.celebrities_unbuilt = [
            c for c, b in zip(snap.celebrities_unbuilt, built, strict=True) if not b
        ]

    def _held_counts(
        self, hot: HotCache, snap: Snapshot, system_from: str, celebrities: list[int]
    ) -> None:
        """Round trip 2 from the whole sets, held a moment in the function (a round trip only
        for those not held): the system list above the user's position, each celebrity's
        tweets above the home position."""
        system = keys.system_notifications()
        recent = {c: keys.celebrity_recent(c) for c in celebrities}
        held = held_sets(self._redis, hot, [system, *recent.values()])
        snap.system = count_above(held[system], system_from) if held[system] else None
        home_from = f"{padded(snap.home_position or 0)};"
        snap.home += sum(count_above(held[name], home_from) for name in recent.values())
        snap.celebrities_unbuilt = [c for c, name in recent.items() if not held[name]]

    def positions(self, user_id: int) -> dict[str, int] | None:
        raw = self._redis.hgetall(keys.notif_positions(user_id))
        if not raw or "built" not in raw:
            return None
        return {k: int(v) for k, v in raw.items() if k in POSITION_TYPES}

    # ---- rebuilding after a flush ---------------------------------------------------------
    def lease(self, user_id: int) -> str | None:
        token = secrets.token_hex(8)
        taken = self._redis.set(keys.notif_lease(user_id), token, nx=True, px=self._lease_ms)
        return token if taken else None

    def fill(
        self, user_id: int, token: str, positions: dict[str, int], unread: dict[str, list[int]]
    ) -> bool:
        args: list[str | int] = [token]
        for kind in STORED_TYPES:
            ids = unread.get(kind, [])
            args += [kind, padded(positions[kind]), len(ids), *(padded(i) for i in ids)]
        args += ["system", padded(positions["system"])]
        filled = self._fill(
            keys=[keys.notif_positions(user_id), keys.notif_lease(user_id)]
            + [keys.notif_unread(user_id, kind) for kind in STORED_TYPES],
            args=args,
        )
        self._redis.set(keys.home_read(user_id), padded(positions["home"]))
        return bool(filled)

    def rebuild_system(self, load: Callable[[], list[int]]) -> None:
        """Create the list (sentinel) before reading the table, so a notification posted
        meanwhile lands in it; adding an id twice is a no-op."""
        key = keys.system_notifications()
        self._redis.zadd(key, {SENTINEL: 0})
        ids = load()
        if ids:
            self._redis.zadd(key, {padded(i): 0 for i in ids})
        self._drop_system()

    # ---- writes from requests -------------------------------------------------------------
    def mark_read(self, user_id: int, kinds: list[str], position: int) -> dict[str, int] | None:
        moved = self._mark(
            keys=[keys.notif_positions(user_id)] + [keys.notif_unread(user_id, k) for k in kinds],
            args=[padded(position), *kinds],
        )
        if moved is None:
            return None
        return {kind: int(value) for kind, value in zip(kinds, moved, strict=True)}

    def set_home_position(self, user_id: int, position: int) -> None:
        self._redis.set(keys.home_read(user_id), padded(position))

    def add_system(self, notification_id: int) -> None:
        self._add_system(keys=[keys.system_notifications()], args=[padded(notification_id)])
        self._drop_system()

    def _drop_system(self) -> None:
        if self._hot is not None:
            self._hot.drop(keys.system_notifications())
