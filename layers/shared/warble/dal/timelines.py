"""Home timelines and authors' recent tweets in Redis.

Both are sorted sets whose members are ``<tweet_id, 19 digits zero-padded>:<author_id>`` and
whose scores are all 0, so members sort lexicographically, which is numeric order of tweet id.
(Scores cannot carry 63-bit ids: a double holds 53 bits.) Pages are ZREVRANGEBYLEX from a member
bound, so a cursor pins a position; re-adding a member is a no-op, so a redelivered stream record
never duplicates an entry.

A home timeline also holds the sentinel member ``0``, which sorts below every tweet: the key
exists exactly when the timeline has been built. Pushes only go to built timelines (``XX``
semantics in Lua), so a user whose timeline expired (inactive for the TTL) costs the fan-out
one EXISTS, and their timeline is rebuilt when they come back. Trimming keeps the sentinel and
the newest ``cap`` tweets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from warble import keys
from warble.dal.hot import LOG_CHANGE, HotCache, added, dropped, held_sets, removed
from warble.dal.redis import ReadBatch, RedisClient, eval_pipelined, queued, written

if TYPE_CHECKING:
    from warble.domain import shared

SENTINEL = "0"

_PUSH_IF_BUILT = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[1], 0, ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[1], 1, -(tonumber(ARGV[2]) + 1))
return 1
"""


# KEYS: a home timeline; ARGV: ":<author>". One author's entries out (an unfollow), in one call.
_REMOVE_AUTHOR = """
local doomed = {}
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if string.sub(m, -#ARGV[1]) == ARGV[1] then doomed[#doomed + 1] = m end
end
for i = 1, #doomed, 500 do
  redis.call('ZREM', KEYS[1], unpack(doomed, i, math.min(i + 499, #doomed)))
end
return #doomed
"""


def _upper_bound(before_tweet_id: int | None) -> str:
    # Members of tweet id N are "<N>:<author>", which sort just above "<N>": "(<N>" excludes them.
    return "+" if before_tweet_id is None else f"({before_tweet_id:019d}"


class TimelineStore:
    def __init__(
        self,
        redis: RedisClient,
        cap: int,
        recent_cap: int,
        ttl_seconds: int,
        chunk: int = 500,
        hot: HotCache | None = None,
    ) -> None:
        self._redis = redis
        # Authors' recent sets held in the function (warble.dal.hot): a celebrity's is read by
        # every follower's home read.
        self._hot = hot
        self._cap = cap
        self._recent_cap = recent_cap
        self._ttl = ttl_seconds
        self._chunk = chunk
        self._push = redis.register_script(_PUSH_IF_BUILT)
        self._remove_author = redis.register_script(_REMOVE_AUTHOR)
        self._log_change = redis.register_script(LOG_CHANGE)

    def _changed_later(self, writes: shared.Writes, change: str) -> None:
        """A change of a celebrity's set, written to the log after it (warble.dal.hot)."""
        written(writes).script(
            self._log_change, [keys.celebrity_log(), keys.celebrity_seq()], [change]
        )

    def _changed(self, author_id: int, change: str) -> None:
        self._log_change(keys=[keys.celebrity_log(), keys.celebrity_seq()], args=[change])
        self._drop_recent(author_id)

    # ---- a stream batch's writes, queued in stream order (WriteBatch) ------------------------
    def push_later(self, writes: shared.Writes, user_ids: Iterable[int], entry: str) -> None:
        """``push``: ``entry`` into each built timeline among ``user_ids``."""
        for user_id in user_ids:
            written(writes).script(self._push, [keys.home_timeline(user_id)], [entry, self._cap])

    def remove_later(self, writes: shared.Writes, user_ids: Iterable[int], entry: str) -> None:
        for user_id in user_ids:
            written(writes).add("ZREM", keys.home_timeline(user_id), entry)

    def remember_recent_later(
        self, writes: shared.Writes, author_id: int, entry: str, celebrity: bool
    ) -> None:
        """The author's recent set, and a celebrity's set on the celebrities' tag too (each only
        if built: a set made from one new tweet would look complete)."""
        for key in (keys.author_recent(author_id),) + (
            (keys.celebrity_recent(author_id),) if celebrity else ()
        ):
            written(writes).script(self._push, [key], [entry, self._recent_cap])
        if celebrity:
            name = keys.celebrity_recent(author_id)
            self._changed_later(writes, added(name, entry, self._recent_cap))

    def forget_recent_later(self, writes: shared.Writes, author_id: int, entry: str) -> None:
        written(writes).add("ZREM", keys.author_recent(author_id), entry)
        written(writes).add("ZREM", keys.celebrity_recent(author_id), entry)
        self._changed_later(writes, removed(keys.celebrity_recent(author_id), entry))

    def add_later(self, writes: shared.Writes, user_id: int, entries: list[str]) -> None:
        """``add``: a backfill into a built timeline."""
        key = keys.home_timeline(user_id)
        for entry in entries:
            written(writes).script(self._push, [key], [entry, self._cap])

    def remove_author_later(self, writes: shared.Writes, user_id: int, author_id: int) -> None:
        written(writes).script(
            self._remove_author, [keys.home_timeline(user_id)], [f":{author_id}"]
        )

    def forget_celebrities_later(self, writes: shared.Writes, user_id: int) -> None:
        written(writes).add("DEL", keys.home_celebrities(user_id))

    def mark_celebrity_later(self, writes: shared.Writes, author_id: int, big: bool) -> None:
        """The author's tweets are now treated the other way: its set on the celebrities' tag
        goes (pushes skipped it while the author was small; a read fills it afresh)."""
        written(writes).add("SET", keys.celebrity_mark(author_id), "1" if big else "0")
        written(writes).add("DEL", keys.celebrity_recent(author_id))
        self._changed_later(writes, dropped(keys.celebrity_recent(author_id)))

    def celebrity_marks_later(
        self, batch: shared.ReadBatch, author_ids: list[int]
    ) -> Callable[[], dict[int, bool | None]]:
        """Each author's mark (``keys.celebrity_mark``): None where the fan-out never set it."""
        queue = queued(batch)
        reads = {a: queue.add("GET", keys.celebrity_mark(a)) for a in author_ids}
        return lambda: {a: None if (v := read()) is None else v == "1" for a, read in reads.items()}

    def recent_later(
        self, batch: shared.ReadBatch, author_ids: list[int], limit: int
    ) -> Callable[[], dict[int, list[str] | None]]:
        """Each author's newest ``limit`` entries, or None where the set is not built."""
        batch = queued(batch)
        reads = [
            (
                batch.add("EXISTS", keys.author_recent(a)),
                batch.add(
                    "ZREVRANGEBYLEX", keys.author_recent(a), "+", f"({SENTINEL}", "LIMIT", 0, limit
                ),
            )
            for a in author_ids
        ]

        def recent() -> dict[int, list[str] | None]:
            return {
                a: (list(entries()) if built() else None)
                for a, (built, entries) in zip(author_ids, reads, strict=True)
            }

        return recent

    # ---- fan-out (stream consumer) ---------------------------------------------------------
    def push(self, user_ids: Iterable[int], entry: str) -> int:
        """Add ``entry`` to every built timeline among ``user_ids``, pipelined in chunks."""
        pushed = 0
        batch: list[int] = []
        for user_id in user_ids:
            batch.append(user_id)
            if len(batch) >= self._chunk:
                pushed += self._push_chunk(batch, entry)
                batch = []
        if batch:
            pushed += self._push_chunk(batch, entry)
        return pushed

    def _push_chunk(self, user_ids: list[int], entry: str) -> int:
        calls = [([keys.home_timeline(user_id)], [entry, self._cap]) for user_id in user_ids]
        return sum(int(result) for result in eval_pipelined(self._redis, self._push, calls))

    def remove(self, user_ids: Iterable[int], entry: str) -> None:
        batch: list[int] = []
        for user_id in user_ids:
            batch.append(user_id)
            if len(batch) >= self._chunk:
                self._remove_chunk(batch, entry)
                batch = []
        if batch:
            self._remove_chunk(batch, entry)

    def _remove_chunk(self, user_ids: list[int], entry: str) -> None:
        pipe = self._redis.pipeline(transaction=False)
        for user_id in user_ids:
            pipe.zrem(keys.home_timeline(user_id), entry)
        pipe.execute()

    def remember_recent(self, author_id: int, entry: str, celebrity: bool = False) -> None:
        """The author's newest tweets (read for celebrities, backfills and rebuilds). Only a
        built set takes pushes: one made from a single new tweet would look complete."""
        self._push(keys=[keys.author_recent(author_id)], args=[entry, self._recent_cap])
        if celebrity:
            name = keys.celebrity_recent(author_id)
            self._push(keys=[name], args=[entry, self._recent_cap])
            self._changed(author_id, added(name, entry, self._recent_cap))

    def forget_recent(self, author_id: int, entry: str) -> None:
        self._redis.zrem(keys.author_recent(author_id), entry)
        self._redis.zrem(keys.celebrity_recent(author_id), entry)
        self._changed(author_id, removed(keys.celebrity_recent(author_id), entry))

    def _drop_recent(self, author_id: int) -> None:
        if self._hot is not None:
            self._hot.drop(keys.celebrity_recent(author_id))

    def _held_recent(self, hot: HotCache, author_ids: list[int]) -> dict[int, list[str]]:
        names = {author: keys.celebrity_recent(author) for author in author_ids}
        held = held_sets(self._redis, hot, list(names.values()))
        return {author: held[name] for author, name in names.items()}

    def recent_built(self, author_ids: list[int], celebrity: bool = False) -> dict[int, bool]:
        """Which of these authors' sets are built: their recent sets, or with ``celebrity``
        their sets on the celebrities' tag (held a moment in the function where it holds)."""
        if celebrity and self._hot is not None:
            held = self._held_recent(self._hot, author_ids)
            return {author: bool(members) for author, members in held.items()}
        name = keys.celebrity_recent if celebrity else keys.author_recent
        pipe = self._redis.pipeline(transaction=False)
        for author_id in author_ids:
            pipe.exists(name(author_id))
        return {a: bool(found) for a, found in zip(author_ids, pipe.execute(), strict=True)}

    def fill_recent(self, author_id: int, entries: list[str], celebrity: bool = False) -> None:
        key = (keys.celebrity_recent if celebrity else keys.author_recent)(author_id)
        pipe = self._redis.pipeline(transaction=True)
        pipe.zadd(key, {SENTINEL: 0, **dict.fromkeys(entries, 0)})
        pipe.zremrangebyrank(key, 1, -(self._recent_cap + 1))
        pipe.execute()
        if celebrity:
            self._changed(author_id, dropped(key))

    # ---- follow / unfollow -----------------------------------------------------------------
    def add(self, user_id: int, entries: list[str]) -> bool:
        """Backfill into a built timeline; False if it is not built (it will be rebuilt)."""
        if not entries:
            return True
        key = keys.home_timeline(user_id)
        calls = [([key], [entry, self._cap]) for entry in entries]
        return sum(int(r) for r in eval_pipelined(self._redis, self._push, calls)) > 0

    def remove_author(self, user_id: int, author_id: int) -> None:
        key = keys.home_timeline(user_id)
        suffix = f":{author_id}"
        doomed = [str(m) for m in self._redis.zrange(key, 0, -1) if str(m).endswith(suffix)]
        if doomed:
            self._redis.zrem(key, *doomed)

    # ---- reading ---------------------------------------------------------------------------
    def page(self, user_id: int, before_tweet_id: int | None, limit: int) -> list[str] | None:
        """Newest-first members below the bound, or None when the timeline is not built.
        Reading also renews the timeline's TTL: it lives while its owner is active."""
        pipe = self._page_pipeline(user_id, before_tweet_id, limit)
        built, entries, _ = pipe.execute()
        return list(entries) if built else None

    def _page_pipeline(self, user_id: int, before_tweet_id: int | None, limit: int) -> Any:
        key = keys.home_timeline(user_id)
        pipe = self._redis.pipeline(transaction=False)
        pipe.exists(key)
        pipe.zrevrangebylex(key, _upper_bound(before_tweet_id), f"({SENTINEL}", 0, limit)
        pipe.expire(key, self._ttl)
        return pipe

    def batch(self) -> ReadBatch:
        return ReadBatch(self._redis)

    def home_page_later(
        self, batch: shared.ReadBatch, user_id: int, before_tweet_id: int | None, limit: int
    ) -> Callable[[], tuple[list[str] | None, list[int] | None]]:
        """``page`` and ``followed_celebrities`` queued in ``batch`` (one slot: the reader's tag),
        which the home read shares with the gate and the reader's blocks and mutes."""
        key = keys.home_timeline(user_id)
        queue = queued(batch)
        built = queue.add("EXISTS", key)
        entries = queue.add(
            "ZREVRANGEBYLEX", key, _upper_bound(before_tweet_id), f"({SENTINEL}", "LIMIT", 0, limit
        )
        queue.add("EXPIRE", key, self._ttl)
        celebrities = queue.add("GET", keys.home_celebrities(user_id))

        def page() -> tuple[list[str] | None, list[int] | None]:
            return (list(entries()) if built() else None), _celebrity_list(celebrities())

        return page

    def recent_pages(
        self,
        author_ids: list[int],
        before_tweet_id: int | None,
        limit: int,
        celebrity: bool = False,
    ) -> dict[int, list[str]]:
        """Each author's newest entries below the bound: from their recent sets, or with
        ``celebrity`` from their sets on the celebrities' tag."""
        if celebrity and self._hot is not None:
            upper = None if before_tweet_id is None else f"{before_tweet_id:019d}"
            return {
                author: [
                    m for m in reversed(members) if m != SENTINEL and (upper is None or m < upper)
                ][:limit]
                for author, members in self._held_recent(self._hot, author_ids).items()
            }
        name = keys.celebrity_recent if celebrity else keys.author_recent
        pipe = self._redis.pipeline(transaction=False)
        for author_id in author_ids:
            pipe.zrevrangebylex(
                name(author_id),
                _upper_bound(before_tweet_id),
                f"({SENTINEL}",
                0,
                limit,
            )
        return dict(zip(author_ids, (list(r) for r in pipe.execute()), strict=True))

    def start_rebuild(self, user_id: int) -> None:
        """Create the timeline (sentinel only) *before* reading the sources, so that fan-out
        pushes arriving during the rebuild land in it instead of being skipped."""
        key = keys.home_timeline(user_id)
        pipe = self._redis.pipeline(transaction=True)
        pipe.zadd(key, {SENTINEL: 0})
        pipe.expire(key, self._ttl)
        pipe.execute()

    def finish_rebuild(self, user_id: int, entries: list[str]) -> None:
        key = keys.home_timeline(user_id)
        pipe = self._redis.pipeline(transaction=True)
        if entries:
            pipe.zadd(key, dict.fromkeys(entries, 0))
        pipe.zremrangebyrank(key, 1, -(self._cap + 1))
        pipe.expire(key, self._ttl)
        pipe.execute()

    def followed_celebrities(self, user_id: int) -> list[int] | None:
        return _celebrity_list(self._redis.get(keys.home_celebrities(user_id)))

    def remember_celebrities(self, user_id: int, celebrities: list[int], ttl: int) -> None:
        self._redis.set(keys.home_celebrities(user_id), ",".join(map(str, celebrities)), ex=ttl)

    def forget_celebrities(self, user_id: int) -> None:
        self._redis.delete(keys.home_celebrities(user_id))


def _celebrity_list(raw: Any) -> list[int] | None:
    return None if raw is None else [int(x) for x in str(raw).split(",") if x]
