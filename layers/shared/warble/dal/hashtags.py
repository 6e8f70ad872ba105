"""Hashtag timelines in DynamoDB and trends in Redis.

``HashtagsTable``: partition key ``pk = <tag>#<shard>`` (S), sort key ``sk = <tweet id>`` (N,
Snowflake), ``author_id``: a tag's page is one Query of its partition in reverse sort order, the
shape of the tweets table (seed 001). Written only by the tweets stream's consumer
(``HashtagService.tweets_changed``), a batch's puts and deletes in BatchWriteItem calls of 25
(DynamoDB's cap). A tag's shard count, when it is more than one, is the item ``pk = <tag>``,
``sk = 0``, ``shards``; Redis holds a copy (``{ht:<tag>}:shards``) that writers and readers read
in their pipelines, so a page costs no extra DynamoDB read.

Why shards: a partition takes about 1,000 writes a second, and split-for-heat cannot help a key
range whose writes all land at its end (ever-growing Snowflakes). So a tag that runs hot is
written over 2, 4, ... 64 partitions (the rule is ``warble.domain.hashtags.service``) and a page
merges their Queries. Shard counts only grow and Redis gets the new count after DynamoDB, so a
reader always reads every partition any writer used.
"""

from __future__ import annotations

import contextlib
import heapq
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pynamodb.attributes import NumberAttribute, UnicodeAttribute
from pynamodb.exceptions import UpdateError
from pynamodb.models import Model

from warble import keys
from warble.dal.dynamo import batch_write, bind
from warble.dal.redis import UNAVAILABLE_ERRORS, ReadBatch, RedisClient, queued
from warble.domain import shared
from warble.domain.hashtags.ports import TagUse
from warble.settings import Settings, get_settings

MAX_PARALLEL_QUERIES = 8

# Never lowers the count: a late writer that read an older count cannot undo a split.
_RAISE = """
local held = tonumber(redis.call('GET', KEYS[1]) or '0')
if held < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
  return tonumber(ARGV[1])
end
return held
"""


class HashtagItem(Model):
    class Meta:
        table_name = "hashtags"  # replaced from settings on first use
        region = "us-east-1"

    pk = UnicodeAttribute(hash_key=True)
    sk = NumberAttribute(range_key=True)
    author_id = NumberAttribute(null=True)
    shards = NumberAttribute(null=True)


def partition(tag: str, shard: int) -> str:
    return f"{tag}#{shard}"


def import_use(settings: Settings, use: TagUse) -> tuple[str, dict[str, Any]]:
    """A tag's timeline entry on its first shard (the seed, infra/local/seed.py)."""
    item = HashtagItem(partition(use.tag, 0), use.tweet_id, author_id=use.author_id)
    return settings.hashtags_table, item.serialize()


class DynamoHashtagIndex:
    """``warble.domain.hashtags.ports.HashtagIndex``."""

    def __init__(self, redis: RedisClient, settings: Settings | None = None) -> None:
        settings = settings or get_settings()
        self._redis = redis
        self._settings = settings
        self._raise = redis.register_script(_RAISE)
        self._bound = False

    def _bind(self) -> None:
        if not self._bound:
            s = self._settings
            bind(s.aws_region, [(HashtagItem, s.hashtags_table)])
            self._bound = True

    def batch(self) -> ReadBatch:
        return ReadBatch(self._redis)

    def shards_later(self, batch: shared.ReadBatch, tag: str) -> Callable[[], int]:
        read = queued(batch).add("GET", keys.hashtag_shards(tag))

        def shards() -> int:
            try:
                held = read()
            except UNAVAILABLE_ERRORS:
                held = None
            return int(held) if held is not None else self._reload([tag])[tag]

        return shards

    def route(self, uses: dict[str, int], now_ms: int) -> dict[str, tuple[int, int]]:
        """Each tag's shard count and its uses in this minute, with ``uses`` counted: one
        pipeline (GET, INCRBY, EXPIRE per tag); counts Redis lost come back from the table."""
        minute = now_ms // 60_000
        batch = ReadBatch(self._redis)
        reads: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {}
        for tag, count in uses.items():
            minute_key = keys.hashtag_rate(tag, minute)
            reads[tag] = (
                batch.add("GET", keys.hashtag_shards(tag)),
                batch.add("INCRBY", minute_key, count),
            )
            batch.add("EXPIRE", minute_key, keys.HASHTAG_RATE_SECONDS)
        batch.run()
        answer: dict[str, tuple[int, int]] = {}
        lost: list[str] = []
        for tag, (shards, rate) in reads.items():
            held, counted = shards(), rate()
            if held is None:
                lost.append(tag)
            answer[tag] = (int(held or 1), int(counted))
        if lost:
            for tag, shards_now in self._reload(lost).items():
                answer[tag] = (shards_now, answer[tag][1])
        return answer

    def _reload(self, tags: list[str]) -> dict[str, int]:
        """Shard counts from the table (absent: 1), copied back to Redis."""
        self._bind()
        found = {tag: 1 for tag in tags}
        for item in HashtagItem.batch_get([(tag, 0) for tag in tags]):
            found[str(item.pk)] = int(item.shards or 1)
        with contextlib.suppress(*UNAVAILABLE_ERRORS):
            for tag, shards in found.items():
                self._held(tag, shards)
        return found

    def _held(self, tag: str, shards: int) -> int:
        """Redis's copy raised to ``shards`` (never lowered); the count it holds now."""
        args = [shards, keys.HASHTAG_SHARDS_SECONDS]
        return int(self._raise(keys=[keys.hashtag_shards(tag)], args=args))

    def split(self, tag: str, shards: int) -> int:
        """Raise the tag's shard count to ``shards`` (never lower it): the table first, then
        Redis. Returns the count now held."""
        self._bind()
        meta = HashtagItem(tag, 0)
        with contextlib.suppress(UpdateError):  # another writer raised it as far already
            meta.update(
                actions=[HashtagItem.shards.set(shards)],
                condition=HashtagItem.shards.does_not_exist() | (HashtagItem.shards < shards),
            )
        return self._held(tag, shards)

    def write(self, puts: list[tuple[TagUse, int]], deletes: list[tuple[TagUse, int]]) -> int:
        """Puts and deletes in BatchWriteItem calls of 25 (unprocessed items resent with backoff).
        Idempotent: a put writes the same item again, a delete of what is gone is a no-op."""
        if not puts and not deletes:
            return 0
        self._bind()
        with batch_write(HashtagItem) as batch:
            for use, shard in puts:
                batch.save(
                    HashtagItem(partition(use.tag, shard), use.tweet_id, author_id=use.author_id)
                )
            for use, shard in deletes:
                batch.delete(HashtagItem(partition(use.tag, shard), use.tweet_id))
        return len(puts) + len(deletes)

    def page(self, tag: str, shards: int, before: int | None, limit: int) -> list[tuple[int, int]]:
        """``(author_id, tweet_id)`` of the tag's newest ``limit`` entries below ``before``: one
        Query per shard (at once when there are several), merged newest first."""
        self._bind()

        def query(shard: int) -> list[tuple[int, int]]:
            condition = HashtagItem.sk < before if before is not None else None
            return [
                (int(item.author_id or 0), int(item.sk))
                for item in HashtagItem.query(
                    partition(tag, shard), condition, scan_index_forward=False, limit=limit
                )
            ]

        if shards <= 1:
            return query(0)
        with ThreadPoolExecutor(min(shards, MAX_PARALLEL_QUERIES)) as pool:
            pages = list(pool.map(query, range(shards)))
        merged = heapq.merge(*pages, key=lambda entry: entry[1], reverse=True)
        return list(merged)[:limit]


# ---- trends -------------------------------------------------------------------------------------
# One script on one hash tag: each use of a tag is a window member "<tweet>:<author>:<tag>"
# scored with its time; adding one that is new (ZADD NX) or removing one that is there (ZREM)
# changes the counts, so a redelivered record counts nothing twice and a delete of an unknown
# or expired use changes nothing. Expiry pops the uses older than the window, oldest first, at
# most ARGV[3] per call (every call expires, the writes and the reads). ``rank`` scores a tag
# authors * 2^26 + uses, so ZREVRANGEBYSCORE from 2 * 2^26 lists exactly the tags of at least
# two authors, by authors then uses.
_TRENDS = """
local SCALE = 67108864
local function bump(tag, author, delta)
  local uses = redis.call('HINCRBY', KEYS[2], tag, delta)
  local mine = redis.call('HINCRBY', KEYS[4], author .. ':' .. tag, delta)
  if delta > 0 and mine == 1 then redis.call('HINCRBY', KEYS[3], tag, 1) end
  if delta < 0 and mine <= 0 then
    redis.call('HDEL', KEYS[4], author .. ':' .. tag)
    redis.call('HINCRBY', KEYS[3], tag, -1)
  end
  if uses <= 0 then
    redis.call('HDEL', KEYS[2], tag)
    redis.call('HDEL', KEYS[3], tag)
    redis.call('ZREM', KEYS[5], tag)
  else
    local authors = tonumber(redis.call('HGET', KEYS[3], tag) or '0')
    local score = authors * SCALE + math.min(uses, SCALE - 1)
    redis.call('ZADD', KEYS[5], string.format('%.0f', score), tag)
  end
end
local function parts(member)
  local i = string.find(member, ':', 1, true)
  local j = string.find(member, ':', i + 1, true)
  return string.sub(member, i + 1, j - 1), string.sub(member, j + 1)
end
local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[2],
  'LIMIT', 0, tonumber(ARGV[3]))
for _, member in ipairs(old) do
  redis.call('ZREM', KEYS[1], member)
  local author, tag = parts(member)
  bump(tag, author, -1)
end
local op = ARGV[1]
if op == 'apply' then
  local added = tonumber(ARGV[4])
  local at = 5
  for _ = 1, added do
    local member, when = ARGV[at], tonumber(ARGV[at + 1])
    if when >= tonumber(ARGV[2]) and redis.call('ZADD', KEYS[1], 'NX', when, member) == 1 then
      local author, tag = parts(member)
      bump(tag, author, 1)
    end
    at = at + 2
  end
  while at <= #ARGV do
    if redis.call('ZREM', KEYS[1], ARGV[at]) == 1 then
      local author, tag = parts(ARGV[at])
      bump(tag, author, -1)
    end
    at = at + 1
  end
  return #old
elseif op == 'top' then
  return redis.call('ZREVRANGEBYSCORE', KEYS[5], '+inf', 2 * SCALE, 'WITHSCORES',
    'LIMIT', 0, tonumber(ARGV[4]))
elseif op == 'forget' then
  local gone = 0
  local pattern = ':' .. ARGV[4] .. ':'
  for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    local i = string.find(member, ':', 1, true)
    if string.sub(member, i, i + #pattern - 1) == pattern then
      redis.call('ZREM', KEYS[1], member)
      local author, tag = parts(member)
      bump(tag, author, -1)
      gone = gone + 1
    end
  end
  return gone
end
return #old
"""

SCALE = 1 << 26
EXPIRE_PER_CALL = 10_000


def _member(use: TagUse) -> str:
    return f"{use.tweet_id}:{use.author_id}:{use.tag}"


class RedisTrends:
    """``warble.domain.hashtags.ports.TrendCounts``: the last hour's uses, exact.

    Everything is under one hash tag (``{trends}``), so one node holds it: right at this size,
    and the place where 12k tweets a second would change the design (docs/search.md: per-minute
    buckets of HyperLogLogs, 0.81% error on author counts, and no exact removal of a deleted
    tweet's author)."""

    def __init__(self, redis: RedisClient, window_ms: int) -> None:
        self._redis = redis
        self._window_ms = window_ms
        self._script = redis.register_script(_TRENDS)

    def _call(self, now_ms: int, op: str, *args: Any) -> Any:
        cutoff = now_ms - self._window_ms
        return self._script(keys=keys.TRENDS_KEYS, args=[op, cutoff, EXPIRE_PER_CALL, *args])

    def apply(self, added: list[tuple[TagUse, int]], removed: list[TagUse], now_ms: int) -> None:
        args: list[Any] = [len(added)]
        for use, at_ms in added:
            args += [_member(use), at_ms]
        args += [_member(use) for use in removed]
        self._call(now_ms, "apply", *args)

    def top(self, now_ms: int, count: int) -> list[tuple[str, int, int]]:
        """``(tag, uses, authors)`` of the tags of at least two authors, by authors then uses."""
        flat = self._call(now_ms, "top", count)
        found = []
        for tag, score in zip(flat[0::2], flat[1::2], strict=True):
            value = int(float(score))
            found.append((str(tag), value % SCALE, value // SCALE))
        return found

    def forget_author(self, author_id: int, now_ms: int) -> int:
        return int(self._call(now_ms, "forget", author_id))
