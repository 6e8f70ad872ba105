"""Discover's Redis side: the geo index split by cells, the per-user filter of people already
shown, and the swipe ledger of each pair (key names in ``warble.keys``).

**Geo index.** One GEO set per geohash cell (``{geo:<cell>}:users``,
``warble.domain.discover.geo``): a query pipelines one ``GEOSEARCH ... BYRADIUS ... ASC COUNT n``
per cell its circle covers and merges by distance. Nothing here is the truth: locations are stored
in DynamoDB first (``warble.dal.discover_table``) and ``DiscoverService.rebuild_index`` re-adds
them all.

**Seen filter.** A scalable Bloom filter (Almeida et al., 2007) per user, in ONE bitmap string
``{u:<id>}:seen`` (layer i at a fixed bit offset after the layers before it) plus a small hash of
its layer count and fill. Layer i holds ``n0 * 2**i`` people at error ``p0 / 2**i`` with
``p0 = error / 2``, so the sum over any number of layers stays below ``error`` (1%): as the
seen-set grows, new layers are bigger and tighter and the false-hide rate stays within 1%.
Positions are double hashing over SHA-1 of the id (Redis' ``redis.sha1hex``): ``h1 + j * h2``.

Why a bitmap in Lua rather than ``BF.*``: ElastiCache for Valkey has BF.* only from 8.1, local
Redis 7 has none, and the page needs "skip if swiped, skip if seen, else add" for a whole batch
of candidates in one atomic step, which a script does in one round trip on either. The filter,
the swiped set and the metadata share the user's hash tag, so the script is cluster-safe.

The filter is a cache too: every page's people are also stored durably (``SH#`` items,
``warble.dal.discover_table``) before the page is answered, and the meta hash's ``loaded`` field
says the filter holds them. A page that finds it missing (Redis lost the filter, or the filter
predates the field) gets ``{"seen"}``, and the service loads the stored pages into the filter
(mode ``load``) before taking any candidate, so nobody shown before comes back.

**Swipe ledger.** One hash per pair ``{sw:<low>:<high>}``, field = user id, value = that user's
swipe (``left``, ``right``, or ``right!`` for the right swipe that made the match). The script
sets mine only if absent (a first swipe stands) and reads theirs in the same step, so of two
right swipes arriving at once exactly one sees the other's and reports the match. The key
expires after 30 days; when it is missing the script asks for the pair's durable swipes
(``load``) and seeds them before deciding, so a lost or expired key loses no pending swipe.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from warble import keys
from warble.dal.redis import RedisClient
from warble.domain.discover.ports import FeedTake

# Redis' GEO commands take latitudes within +-85.05112878 (Web Mercator). API.md allows +-90:
# a point nearer a pole is indexed (and searched from) at that limit, so within ~550 km of a
# pole distances are approximate; its stored location keeps the true latitude.
GEO_MAX_LAT = 85.05112878
FEED_TTL_SECONDS = 600  # a queued candidate may have moved away after ten minutes
# A feed that ran dry (everyone within the radius shown) is asked again this soon, not in ten
# minutes: someone who arrives nearby meanwhile is shown on the next page after it (the seen
# filter still keeps everyone else from coming back).
FEED_DRY_RETRY_SECONDS = 15

# KEYS: bitmap, meta, swiped, feed list, feed meta, blocks hash (warble.dal.blocks).
# ARGV: mode, limit, n0, p0, query, ids...
# mode "page": take entries ("<id>:<km>", nearest first) off the user's feed list, skip swiped
#   and seen ones, add the others to the filter, stop after `limit` added. A feed built for
#   another query (moved, other radius) is dropped first. Returns {"ok", reached, count,
#   exhausted, entries...} (the feed's state, for a refill when it ran dry), or {"load"} when
#   the swiped set is not loaded (no "0" member), {"seen"} when the filter does not hold the
#   stored pages of people shown (no "loaded" field: lost), {"blocks"} when the blocks hash is
#   not loaded.
#   People on either side of a block with the user are skipped, and not marked shown.
# mode "add": add the ids to the filter (benchmarks, tests); mode "load": add them and mark the
# filter loaded (the stored pages); mode "check": how many are members.
_SEEN_SCRIPT = (
    f"local DRY = {FEED_DRY_RETRY_SECONDS}\n"
    + """
local mode, limit = ARGV[1], tonumber(ARGV[2])
local n0, p0 = tonumber(ARGV[3]), tonumber(ARGV[4])
if mode == 'page' and redis.call('SISMEMBER', KEYS[3], '0') == 0 then
  return {'load'}
end
if mode == 'page' and redis.call('HEXISTS', KEYS[2], 'loaded') == 0 then
  return {'seen'}
end
if mode == 'page' and redis.call('HEXISTS', KEYS[6], '*') == 0 then
  return {'blocks'}
end
local function blocked(id)
  for _, kind in ipairs({'b', 'y'}) do
    local v = redis.call('HGET', KEYS[6], kind .. id)
    if v and string.sub(v, -1) == 'a' then return true end
  end
  return false
end
local layers = tonumber(redis.call('HGET', KEYS[2], 'layers') or '1')
local fill = tonumber(redis.call('HGET', KEYS[2], 'fill') or '0')
local LN2 = math.log(2)
local offs, ms, ks, ns = {}, {}, {}, {}
local function shape(i, off)
  local n = n0 * 2 ^ i
  local p = p0 / 2 ^ i
  ns[i] = n
  ms[i] = math.ceil(n * math.log(1 / p) / (LN2 * LN2))
  ks[i] = math.ceil(math.log(1 / p) / LN2)
  offs[i] = off
end
local off = 0
for i = 0, layers - 1 do shape(i, off); off = off + ms[i] end
local function hashes(id)
  local h = redis.sha1hex(id)
  return tonumber(string.sub(h, 1, 8), 16), tonumber(string.sub(h, 9, 16), 16)
end
local function member(h1, h2)
  for i = 0, layers - 1 do
    local hit = true
    for j = 0, ks[i] - 1 do
      if redis.call('GETBIT', KEYS[1], offs[i] + (h1 + j * h2) % ms[i]) == 0 then
        hit = false
        break
      end
    end
    if hit then return true end
  end
  return false
end
local function add(h1, h2)
  local i = layers - 1
  for j = 0, ks[i] - 1 do
    redis.call('SETBIT', KEYS[1], offs[i] + (h1 + j * h2) % ms[i], 1)
  end
  fill = fill + 1
  if fill >= ns[i] then
    shape(layers, offs[i] + ms[i])
    layers = layers + 1
    fill = 0
  end
end
if mode == 'check' then
  local members = 0
  for a = 7, #ARGV do
    if member(hashes(ARGV[a])) then members = members + 1 end
  end
  return members
end
local out = {}
if mode == 'add' or mode == 'load' then
  for a = 7, #ARGV do
    local h1, h2 = hashes(ARGV[a])
    if not member(h1, h2) then add(h1, h2) end
  end
  if mode == 'load' then redis.call('HSET', KEYS[2], 'loaded', 1) end
else
  if redis.call('HGET', KEYS[5], 'query') ~= ARGV[5] then
    redis.call('DEL', KEYS[4])
    redis.call('HSET', KEYS[5], 'query', ARGV[5], 'reached', -1, 'count', 0, 'exhausted', 0)
  end
  out = {'ok', '', '', ''}
  while #out - 4 < limit do
    local entry = redis.call('LPOP', KEYS[4])
    if not entry then break end
    local id = string.match(entry, '^[^:]+')
    if redis.call('SISMEMBER', KEYS[3], id) == 0 and not blocked(id) then
      local h1, h2 = hashes(id)
      if not member(h1, h2) then
        add(h1, h2)
        out[#out + 1] = entry
      end
    end
  end
  local state = redis.call('HMGET', KEYS[5], 'reached', 'count', 'exhausted')
  out[2], out[3], out[4] = state[1], state[2], state[3]
  redis.call('EXPIRE', KEYS[4], tonumber(ARGV[6]))
  if state[3] == '1' and redis.call('LLEN', KEYS[4]) == 0 then
    -- Dry: the feed ends within DRY seconds of running dry (LT: a page asked meanwhile does
    -- not push that back), and the next page then fetches the radius afresh.
    redis.call('EXPIRE', KEYS[5], DRY, 'LT')
  else
    redis.call('EXPIRE', KEYS[5], tonumber(ARGV[6]))
  end
end
redis.call('HSET', KEYS[2], 'layers', layers, 'fill', fill)
return out
"""
)

# KEYS: feed list, feed meta. ARGV: query, reached before, new reached, new count, exhausted,
# ttl, entries... Appends only if the feed is still the one the caller saw (another device may
# have refilled it meanwhile): a feed never holds a candidate twice from two refills.
_REFILL_SCRIPT = """
local state = redis.call('HMGET', KEYS[2], 'query', 'reached')
if state[1] ~= ARGV[1] or state[2] ~= ARGV[2] then return 0 end
for a = 7, #ARGV, 500 do
  redis.call('RPUSH', KEYS[1], unpack(ARGV, a, math.min(a + 499, #ARGV)))
end
redis.call('HSET', KEYS[2], 'reached', ARGV[3], 'count', ARGV[4], 'exhausted', ARGV[5])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[6]))
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[6]))
return 1
"""

# KEYS: pair hash. ARGV: me, direction, other, loaded ("1": seeds follow), my durable swipe,
# their durable swipe, ttl. Returns {"load"}, {"repeat", mine} or {"new", mine}.
_SWIPE_SCRIPT = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  if ARGV[4] ~= '1' then return {'load'} end
  if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], ARGV[1], ARGV[5]) end
  if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], ARGV[3], ARGV[6]) end
end
local mine = redis.call('HGET', KEYS[1], ARGV[1])
if mine then return {'repeat', mine} end
mine = ARGV[2]
if mine == 'right' and redis.call('HGET', KEYS[1], ARGV[3]) == 'right' then
  mine = 'right!'
end
redis.call('HSET', KEYS[1], ARGV[1], mine)
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[7]))
return {'new', mine}
"""


class GeoIndex:
    """Located users by cell, and each user's own location (cached)."""

    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis

    def place(
        self,
        user_id: int,
        lat: float,
        lon: float,
        cell: str,
        old_cell: str | None,
        own: tuple[float, float],
    ) -> None:
        """Add to the new cell at (lat, lon), then leave the old one (a reader in between may
        see both: the query keeps one per id), and cache the user's ``own`` location (where
        their own queries start)."""
        pipe = self._redis.pipeline(transaction=False)
        pipe.geoadd(keys.geo_cell(cell), (lon, _geo_lat(lat), str(user_id)))
        if old_cell is not None and old_cell != cell:
            pipe.zrem(keys.geo_cell(old_cell), str(user_id))
        pipe.set(keys.location(user_id), f"{own[0]},{own[1]}", ex=keys.LOCATION_CACHE_SECONDS)
        pipe.execute()

    def place_many(self, entries: Iterable[tuple[int, float, float, str]]) -> None:
        """Bulk GEOADD (seeding, rebuilding): one pipeline, one GEOADD per cell."""
        by_cell: dict[str, list[Any]] = {}
        for user_id, lat, lon, cell in entries:
            by_cell.setdefault(cell, []).extend((lon, _geo_lat(lat), str(user_id)))
        pipe = self._redis.pipeline(transaction=False)
        for cell, values in by_cell.items():
            pipe.geoadd(keys.geo_cell(cell), values)
        pipe.execute()

    def cached_location(self, user_id: int) -> tuple[float, float] | None:
        raw = self._redis.get(keys.location(user_id))
        if raw is None:
            return None
        lat, lon = str(raw).split(",")
        return float(lat), float(lon)

    def cache_location(self, user_id: int, lat: float, lon: float) -> None:
        self._redis.set(keys.location(user_id), f"{lat},{lon}", ex=keys.LOCATION_CACHE_SECONDS)

    def nearby(
        self, cells: Sequence[str], lat: float, lon: float, radius_km: float, count: int
    ) -> list[list[tuple[int, float]]]:
        """Per cell, up to ``count`` (user id, km) within the radius, nearest first."""
        pipe = self._redis.pipeline(transaction=False)
        for cell in cells:
            pipe.geosearch(
                keys.geo_cell(cell), longitude=lon, latitude=_geo_lat(lat), radius=radius_km,
                unit="km",
                sort="ASC", count=count, withdist=True,
            )  # fmt: skip
        return [[(int(m), float(d)) for m, d in found] for found in pipe.execute()]


class SeenFilter:
    """The per-user scalable Bloom filter of people shown, the exact set of people swiped, and
    the feed of candidates fetched but not yet offered (seed 003's feed cache)."""

    def __init__(
        self, redis: RedisClient, capacity: int, error: float, feed_ttl: int = FEED_TTL_SECONDS
    ) -> None:
        self._redis = redis
        self._script = redis.register_script(_SEEN_SCRIPT)
        self._refill = redis.register_script(_REFILL_SCRIPT)
        self._n0 = capacity
        self._p0 = error / 2  # layer errors p0, p0/2, p0/4, ... sum below `error`
        self._feed_ttl = feed_ttl

    def _run(self, user_id: int, mode: str, limit: int, args: Sequence[int | str]) -> Any:
        user_keys = [
            keys.seen_filter(user_id), keys.seen_meta(user_id), keys.swiped(user_id),
            keys.feed(user_id), keys.feed_meta(user_id), keys.memberships("blocks", user_id).value,
        ]  # fmt: skip
        return self._script(keys=user_keys, args=[mode, limit, self._n0, self._p0, *args])

    def take(self, user_id: int, query: str, limit: int) -> FeedTake | str:
        """Up to ``limit`` feed entries not swiped, not shown before and not across a block,
        now marked shown, in one atomic step; ``"swiped"`` when the swiped set must be loaded
        first (``load_swiped``), ``"seen"`` when the people shown must be (``load_shown``),
        ``"blocks"`` when the user's blocks hash must be."""
        answer = self._run(user_id, "page", limit, [query, self._feed_ttl])
        if answer[0] == "load":
            return "swiped"
        if answer[0] in ("seen", "blocks"):
            return str(answer[0])
        entries = [(int(uid), float(km)) for uid, km in (e.split(":") for e in answer[4:])]
        return FeedTake(entries, float(answer[1]), int(answer[2]), answer[3] == "1")

    def refill(
        self,
        user_id: int,
        query: str,
        before: float,
        entries: Sequence[tuple[int, float]],
        reached: float,
        count: int,
        exhausted: bool,
    ) -> bool:
        """Queue the next candidates (nearest first); False if another request did it first."""
        args: list[str | int] = [query, _num(before), _num(reached), count, int(exhausted)]
        args += [self._feed_ttl, *(f"{uid}:{_num(km)}" for uid, km in entries)]
        done = self._refill(keys=[keys.feed(user_id), keys.feed_meta(user_id)], args=args)
        return bool(done)

    def add(self, user_id: int, ids: Sequence[int | str]) -> None:
        self._run(user_id, "add", 0, ["", 0, *ids])

    def load_shown(self, user_id: int, ids: Sequence[int]) -> None:
        """The people shown before (the stored pages) into the filter, in one call, which then
        counts as loaded."""
        self._run(user_id, "load", 0, ["", 0, *ids])

    def count_members(self, user_id: int, ids: Sequence[int | str]) -> int:
        return int(self._run(user_id, "check", 0, ["", 0, *ids]))

    def size_bytes(self, user_id: int) -> int:
        """Bytes of the bitmap (Redis' own string; the meta hash adds ~100 bytes)."""
        return int(self._redis.strlen(keys.seen_filter(user_id)))

    def load_swiped(self, user_id: int, swiped: Iterable[int]) -> None:
        self._redis.sadd(keys.swiped(user_id), "0", *[str(s) for s in swiped])

    def add_swiped(self, user_id: int, other: int) -> None:
        self._redis.sadd(keys.swiped(user_id), str(other))


def _geo_lat(lat: float) -> float:
    return max(-GEO_MAX_LAT, min(GEO_MAX_LAT, lat))


def _num(value: float) -> str:
    """A distance as the scripts store and compare it (repr: round-trips exactly)."""
    return "-1" if value < 0 else repr(float(value))


class SwipeLedger:
    """Each pair's swipes in one hash, decided by one script per swipe."""

    def __init__(self, redis: RedisClient, ttl_seconds: int = keys.SWIPE_PAIR_TTL_SECONDS) -> None:
        self._script = redis.register_script(_SWIPE_SCRIPT)
        self._ttl = ttl_seconds

    def swipe(
        self, me: int, other: int, direction: str, durable: tuple[str, str] | None = None
    ) -> tuple[str, str]:
        """("new" | "repeat", my swipe) or ("load", "") when the pair key is missing and
        ``durable`` (my and their stored swipes, "" for none) was not given."""
        loaded, mine, theirs = ("1", *durable) if durable is not None else ("0", "", "")
        answer = self._script(
            keys=[keys.swipe_pair(me, other)],
            args=[me, direction, other, loaded, mine, theirs, self._ttl],
        )
        return str(answer[0]), str(answer[1]) if len(answer) > 1 else ""
