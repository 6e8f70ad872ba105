"""Hot keys held in the function for a moment (issue 30): the keys every reader of a big account
or of the system list reads, which one Redis shard cannot serve at 100M daily users (the system
list a million times a second, the top celebrity's recent tweets half a million).

A ``HotCache`` keeps what a container read of such a key for ``seconds`` (HOT_KEY_CACHE_MS, set
by the template's ScaleProfile: 1 s from 1M daily users up, 0 on dev stacks and in the tests), so
a key sees at most one read a second from each warm container, whatever the traffic. What it
costs: a system notification or a celebrity's new tweet counts and shows up to that long late in
another container (seed 001 allows 5 s for a tweet to reach timelines). A container's own writes
to a key drop its copy.

The celebrities' sets (``keys.celebrity_recent``, all on one tag: one node serves every follower's
read of them) are held another way, or that node would take a read of every held set from every
container every second. Every change of one is written, numbered, to ``keys.celebrity_log``
(``log_change``: an entry added, one removed, or the set dropped); a container reads the log once
a window (one pipeline, answering only the changes since it last looked: a few dozen a second at
the event) and applies them to the sets it holds. So a held set is never read again while the
log holds, and a celebrity's new tweet still counts and shows within the window. The changes are
idempotent, so applying one that a set's read already had changes nothing. The log keeps its
newest ``LOG_KEPT`` changes of the last ``LOG_KEPT_MS`` (so the ids it names, a deleted
account's too, are gone from it within 10 s): a container that finds a gap (it looked too long
ago) drops every set, and every ``RESYNC_SECONDS`` it drops them anyway (a bound on what a change
written outside the log could hold back).
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable
from typing import Any

from warble import keys

_MISSING = object()
# Past this many held keys, a put first drops the expired ones (a container that read many
# celebrities' sets in the last second keeps them; the rest go).
_PRUNE_AT = 4096
# Past this many held celebrities' sets, a put drops the tenth held longest.
_LOGGED_AT = 20_000
LOG_KEPT = 10_000
# A change stays in the log this long, and the log itself no longer than that after its last
# change: the ids it names (a deleted account's included) are gone from it within 10 s.
LOG_KEPT_MS = 10_000
# Changes are read from this long before the newest seen (a new primary's clock may lag).
_CLOCK_SLACK_MS = 1_000
RESYNC_SECONDS = 3600.0  # an hour: a bound on a change written outside the log

# KEYS: the celebrities' log and its number; ARGV[1]: the change ("add <cap> <set> <entry>",
# "rem <set> <entry>" or "drop <set>"), written "<number> <change>" at the server's time in ms.
# The log keeps its newest LOG_KEPT changes of the last LOG_KEPT_MS.
LOG_CHANGE = f"""
local n = redis.call('INCR', KEYS[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, n .. ' ' .. ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - {LOG_KEPT_MS}))
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -{LOG_KEPT + 1})
redis.call('PEXPIRE', KEYS[1], {LOG_KEPT_MS})
return n
"""


def added(name: str, entry: str, cap: int) -> str:
    """The change ``entry`` into the built set ``name``, which keeps its newest ``cap``."""
    return f"add {cap} {name} {entry}"


def removed(name: str, entry: str) -> str:
    return f"rem {name} {entry}"


def dropped(name: str) -> str:
    """The set was deleted or filled afresh: holders read it again."""
    return f"drop {name}"


def _apply(sets: dict[str, Any], change: str) -> None:
    """One change of the log to the held sets (members in string order, the sentinel first)."""
    op, _, rest = change.partition(" ")
    if op == "add":
        cap, name, entry = rest.split(" ")
        members = sets.get(name)
        if members:  # built: a set made from one new tweet would look complete
            at = bisect.bisect_left(members, entry)
            if at == len(members) or members[at] != entry:
                members.insert(at, entry)
                del members[1 : max(1, len(members) - int(cap))]
    elif op == "rem":
        name, entry = rest.split(" ")
        members = sets.get(name)
        if members:
            at = bisect.bisect_left(members, entry)
            if at < len(members) and members[at] == entry:
                del members[at]
    else:
        sets.pop(rest, None)


def _logged(key: str) -> bool:
    return key.startswith(keys.CELEBRITY_TAG)


class HotCache:
    def __init__(
        self,
        seconds: float,
        clock: Callable[[], float] = time.monotonic,
        reader: Any = None,
    ) -> None:
        self._seconds = seconds
        self._clock = clock
        # The client its reads go through (the log, the sets it fills): one that reads from the
        # shards' replicas (warble.dal.redis.connect), so that every container's copies cost the
        # primaries nothing; None: the caller's client.
        self.reader = reader
        self._held: dict[str, tuple[float, Any]] = {}
        # The celebrities' sets, kept by the log, and where this container is in it (None: not
        # yet looked), when it looks next, and when it drops them all.
        self._sets: dict[str, Any] = {}
        self._position: int | None = None
        self._since: float | None = None  # the newest change's time seen (ms, the server's)
        self._look_at = float("-inf")
        self._resync_at = clock() + RESYNC_SECONDS

    def follow_log(self, redis: Any) -> None:
        """Once a window: apply the changes of the celebrities' sets since the last look to the
        held ones (one pipeline: the log's number, its oldest change and the changes since)."""
        now = self._clock()
        if now < self._look_at:
            return
        self._look_at = now + self._seconds
        if now >= self._resync_at:
            self._sets.clear()
            self._resync_at = now + RESYNC_SECONDS
        pipe = redis.pipeline(transaction=False)
        pipe.get(keys.celebrity_seq())
        pipe.zrange(keys.celebrity_log(), 0, 0)
        since = "-inf" if self._since is None else self._since - _CLOCK_SLACK_MS
        pipe.zrangebyscore(keys.celebrity_log(), since, "+inf", withscores=True)
        number, oldest, changed = pipe.execute()
        last, position = int(number or 0), self._position
        first = int(str(oldest[0]).partition(" ")[0]) if oldest else None
        if (
            position is None
            or last < position  # the number was lost
            or (first is None and last > position)  # changes it has not seen expired
            or (first is not None and first > position + 1)  # a gap: it looked too long ago
        ):
            self._sets.clear()
        else:
            numbered = sorted(
                (int(n), change)
                for member, _ in changed
                for n, _, change in [str(member).partition(" ")]
            )
            for n, change in numbered:
                if n > position:
                    _apply(self._sets, change)
        if changed:
            self._since = max(float(score) for _, score in changed)
        self._position = last

    def get(self, key: str) -> Any:
        """The value held for ``key``, or ``MISSING`` (never read, or read too long ago; for a
        celebrity's set, dropped by the log since it was read)."""
        if _logged(key):
            return self._sets.get(key, _MISSING)
        found = self._held.get(key)
        if found is None:
            return _MISSING
        if self._clock() >= found[0]:
            del self._held[key]
            return _MISSING
        return found[1]

    def put(self, key: str, value: Any) -> None:
        if _logged(key):
            if len(self._sets) >= _LOGGED_AT:
                for name in list(self._sets)[: _LOGGED_AT // 10]:
                    del self._sets[name]
            self._sets[key] = value
            return
        now = self._clock()
        if len(self._held) >= _PRUNE_AT:
            self._held = {k: v for k, v in self._held.items() if v[0] > now}
        self._held[key] = (now + self._seconds, value)

    def drop(self, key: str) -> None:
        self._held.pop(key, None)
        self._sets.pop(key, None)


MISSING = _MISSING


def hot_cache(milliseconds: int, reader: Any = None) -> HotCache | None:
    """The container's hot-key cache, or None when HOT_KEY_CACHE_MS is 0."""
    return HotCache(milliseconds / 1000, reader=reader) if milliseconds > 0 else None


def held_sets(redis: Any, hot: HotCache, names: list[str]) -> dict[str, list[str]]:
    """Whole sorted sets of score 0 (members in string order; empty: the key is missing), from
    ``hot`` or, for the rest, one pipeline of ZRANGE whose answers ``hot`` then holds (read
    through ``hot``'s reader where it has one)."""
    redis = hot.reader or redis
    if any(_logged(name) for name in names):
        hot.follow_log(redis)
    out: dict[str, list[str]] = {}
    missing = []
    for name in names:
        found = hot.get(name)
        if found is MISSING:
            missing.append(name)
        else:
            out[name] = found
    if missing:
        pipe = redis.pipeline(transaction=False)
        for name in missing:
            pipe.zrange(name, 0, -1)
        for name, members in zip(missing, pipe.execute(), strict=True):
            out[name] = [str(m) for m in members]
            hot.put(name, out[name])
    return out


def count_above(members: list[str], bound: str) -> int:
    """ZLEXCOUNT key (<bound> + on a set held by ``held_sets``."""
    return len(members) - bisect.bisect_right(members, bound)
