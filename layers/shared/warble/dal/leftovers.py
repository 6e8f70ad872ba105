"""What Redis holds of a deleted account, or derived from it, removed by the deletion workflow
(``warble.domain.deletion.ports.RedisLeftovers``; keys named in ``warble.keys``).

Every write is a pipeline without a transaction, one command per hash tag (a DEL of several
keys only ever names keys of one tag), so it works on Redis Cluster as on one node.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from warble import clock, keys
from warble.dal.counter_marks import RedisCounterMarks
from warble.dal.hashtags import RedisTrends
from warble.dal.hot import LOG_CHANGE, dropped
from warble.dal.redis import RedisClient
from warble.dal.unread import padded
from warble.domain.counters.ports import tweet_counter, user_counter
from warble.domain.deletion.ports import Places, Unread

# Keys read per SCAN call when a user's parametrised keys are looked for.
_SCAN_COUNT = 1000


class RedisErasure:
    def __init__(self, redis: RedisClient, trends: RedisTrends) -> None:
        self._redis = redis
        self._trends = trends
        self._log_change = redis.register_script(LOG_CHANGE)

    def _pipeline(self) -> Any:
        return self._redis.pipeline(transaction=False)

    def related_changed(self, others: Sequence[int]) -> None:
        if not others:
            return
        pipe = self._pipeline()
        for other in dict.fromkeys(others):
            pipe.delete(*keys.related_keys(other))
            pipe.delete(keys.home_celebrities(other))
        pipe.execute()

    def tweets_gone(self, author_id: int, tweet_ids: Sequence[int]) -> None:
        """The tweets' cached copies and counts (after their items went, so a fill that read
        them before has its lease voided and one after finds nothing)."""
        pipe = self._pipeline()
        for tweet_id in tweet_ids:
            cached, counted = keys.tweet(tweet_id), keys.tweet_counts(tweet_id)
            pipe.delete(cached.value, cached.lease, counted.value, counted.lease)
        entries = [f"{t:019d}:{author_id}" for t in tweet_ids]
        pipe.zrem(keys.author_recent(author_id), *entries)
        pipe.zrem(keys.celebrity_recent(author_id), *entries)
        pipe.execute()
        self._log_change(
            keys=[keys.celebrity_log(), keys.celebrity_seq()],
            args=[dropped(keys.celebrity_recent(author_id))],
        )

    def flags_changed(self, users: Sequence[int]) -> None:
        if not users:
            return
        pipe = self._pipeline()
        for user in dict.fromkeys(users):
            liked, retweeted = keys.memberships("liked", user), keys.memberships("retweeted", user)
            pipe.delete(liked.value, liked.lease, retweeted.value, retweeted.lease)
        pipe.execute()

    def unread_gone(self, unread: Sequence[Unread]) -> None:
        if not unread:
            return
        pipe = self._pipeline()
        for gone in unread:
            pipe.zrem(keys.notif_unread(gone.recipient, gone.kind), padded(gone.notification_id))
        pipe.execute()

    def conversations_gone(self, finished: Sequence[tuple[int, int]]) -> None:
        """The other participant's unread count of each conversation (the hash stays built:
        its other conversations' counts are right)."""
        if not finished:
            return
        pipe = self._pipeline()
        for conversation, other in finished:
            pipe.hdel(keys.dm_unread(other), str(conversation))
            pipe.delete(keys.dm_unread_lease(other))
        pipe.execute()

    def places_gone(self, user_id: int, places: Places) -> None:
        pipe = self._pipeline()
        for cell in dict.fromkeys(places.cells):
            pipe.zrem(keys.geo_cell(cell), str(user_id))
        for other in dict.fromkeys([*places.swiped, *places.matched]):
            pipe.delete(keys.swipe_pair(user_id, other))
        for other in dict.fromkeys(places.matched):
            pipe.srem(keys.swiped(other), str(user_id))
        pipe.execute()

    def counter_marks_gone(self, user_id: int | None, tweet_ids: Sequence[int]) -> None:
        marked = [user_counter(user_id)] if user_id is not None else []
        marked += [tweet_counter(tweet_id) for tweet_id in tweet_ids]
        RedisCounterMarks(self._redis).forget(marked)

    def forget_user(self, user_id: int) -> int:
        """The user's fixed keys, then whatever else its tags hold (sessions, unread sets of
        each type, rate windows, searches, idempotency answers), and its trend uses."""
        pipe = self._pipeline()
        for group in keys.user_keys(user_id):
            pipe.delete(*group)
        gone = sum(int(n) for n in pipe.execute())
        for pattern in keys.user_key_patterns(user_id):
            found = list(self._matching(pattern))
            pipe = self._pipeline()
            for start in range(0, len(found), 500):
                pipe.delete(*found[start : start + 500])
            gone += sum(int(n) for n in pipe.execute())
        gone += self._trends.forget_author(user_id, clock.epoch_ms())
        return gone

    def _matching(self, pattern: str) -> Iterator[str]:
        """The keys of one hash tag matching ``pattern``: on a cluster only the node that holds
        the tag's slot is scanned; on one node, its whole keyspace."""
        if hasattr(self._redis, "get_node_from_key"):
            node = self._redis.get_node_from_key(pattern)
            yield from self._redis.scan_iter(match=pattern, count=_SCAN_COUNT, target_nodes=node)
        else:
            yield from self._redis.scan_iter(match=pattern, count=_SCAN_COUNT)

    # ---- the chain's place ---------------------------------------------------------------------
    def chain_position(self, user_id: int) -> tuple[int, int] | None:
        held = self._redis.hmget(keys.deletion_chain(user_id), ["n", "at"])
        if not held or held[0] is None:
            return None
        return int(held[0]), int(held[1] or 0)

    def chain_advanced(self, user_id: int, n: int) -> None:
        key = keys.deletion_chain(user_id)
        pipe = self._redis.pipeline(transaction=True)
        pipe.hset(key, mapping={"n": n, "at": clock.epoch_ms()})
        pipe.expire(key, keys.DELETION_CHAIN_SECONDS)
        pipe.execute()

    def chain_finished(self, user_id: int) -> None:
        self._redis.delete(keys.deletion_chain(user_id))
