"""Hot keys held in the function for a moment (issue 30): the keys every reader of a big account
or of the system list reads, which one Redis shard cannot serve at 100M daily users (the system
list a million times a second, the top celebrity's recent tweets half a million).

A ``HotCache`` keeps what a container read of such a key for ``seconds`` (HOT_KEY_CACHE_MS, set
by the template's ScaleProfile: 1 s from 1M daily users up, 0 on dev stacks and in the tests), so
a key sees at most one read a second from each warm container, whatever the traffic. What it
costs: a system notification or a celebrity's new tweet counts and shows up to that long late in
another container (seed 001 allows 5 s for a tweet to reach timelines). A container's own writes
to a key drop its copy.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable
from typing import Any

_MISSING = object()
# Past this many held keys, a put first drops the expired ones (a container that read many
# celebrities' sets in the last second keeps them; the rest go).
_PRUNE_AT = 4096


class HotCache:
    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._seconds = seconds
        self._clock = clock
        self._held: dict[str, tuple[float, Any]] = {}

    def get(self, key: str) -> Any:
        """The value held for ``key``, or ``MISSING`` (never read, or read too long ago)."""
        found = self._held.get(key)
        if found is None:
            return _MISSING
        if self._clock() >= found[0]:
            del self._held[key]
            return _MISSING
        return found[1]

    def put(self, key: str, value: Any) -> None:
        now = self._clock()
        if len(self._held) >= _PRUNE_AT:
            self._held = {k: v for k, v in self._held.items() if v[0] > now}
        self._held[key] = (now + self._seconds, value)

    def drop(self, key: str) -> None:
        self._held.pop(key, None)


MISSING = _MISSING


def hot_cache(milliseconds: int) -> HotCache | None:
    """The container's hot-key cache, or None when HOT_KEY_CACHE_MS is 0."""
    return HotCache(milliseconds / 1000) if milliseconds > 0 else None


def held_sets(redis: Any, hot: HotCache, names: list[str]) -> dict[str, list[str]]:
    """Whole sorted sets of score 0 (members in string order; empty: the key is missing), from
    ``hot`` or, for the rest, one pipeline of ZRANGE whose answers ``hot`` then holds."""
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
