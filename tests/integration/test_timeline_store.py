"""Home timelines in Redis, on one node and on the cluster: the pipelined Lua fan-out, backfill,
pages, and a script cache flushed on every node in the middle of a fan-out."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis as redis_lib
from redis.cluster import RedisCluster
from warble import keys, services
from warble.dal.timelines import SENTINEL, TimelineStore
from warble.domain.timelines.service import entry

pytestmark = [pytest.mark.integration, pytest.mark.redis]


def _nodes(client: redis_lib.Redis | RedisCluster) -> list[redis_lib.Redis]:
    """A client per primary: SCRIPT FLUSH and SCRIPT EXISTS are per node."""
    if isinstance(client, RedisCluster):
        return [client.get_redis_connection(node) for node in client.get_primaries()]
    return [client]


@pytest.fixture
def store(redis) -> TimelineStore:
    # The container's client is the code's own: a RedisCluster when the test runs on the cluster.
    client = services.container().redis
    assert isinstance(client, RedisCluster) == isinstance(redis, RedisCluster)
    return TimelineStore(client, cap=5, recent_cap=5, ttl_seconds=600, chunk=50)


def test_fan_out_reaches_built_timelines_only_and_trims_to_the_cap(store, redis):
    built = list(range(1, 201))
    for user_id in built:
        store.start_rebuild(user_id)
    everyone = built + list(range(1001, 1101))  # 100 users whose timeline is not built
    for tweet_id in range(10, 17):
        assert store.push(everyone, entry(7, tweet_id)) == len(built)
    newest_first = [entry(7, t) for t in range(16, 11, -1)]
    for user_id in (1, 57, 200):
        assert store.page(user_id, None, 10) == newest_first
        assert redis.zcard(keys.home_timeline(user_id)) == 1 + 5  # the sentinel and the cap
    assert all(not redis.exists(keys.home_timeline(u)) for u in range(1001, 1101))


def test_backfill_removal_and_rebuild(store, redis):
    assert store.add(3, [entry(9, 1)]) is False  # not built: nothing created
    assert not redis.exists(keys.home_timeline(3))
    store.start_rebuild(3)
    store.finish_rebuild(3, [entry(8, 2)])
    assert store.add(3, [entry(9, 1), entry(9, 4)]) is True
    assert store.page(3, None, 10) == [entry(9, 4), entry(8, 2), entry(9, 1)]
    assert store.page(3, 4, 10) == [entry(8, 2), entry(9, 1)]
    store.remove_author(3, 9)
    store.remove([3], entry(8, 2))
    assert redis.zrange(keys.home_timeline(3), 0, -1) == [SENTINEL]


def test_a_script_cache_flushed_on_every_node_mid_fan_out_loses_no_push(
    store, redis, redis_backend
):
    """The fan-out pipelines its Lua in chunks of 50; before each new chunk every node forgets
    every script (as after a failover or SCRIPT FLUSH). Each chunk must load the script again
    and deliver to every built timeline, none twice. On the cluster only: it is this worker's
    own, while the single node is shared by every worker, whose scripts a flush would break."""
    if redis_backend == "single":
        pytest.skip("SCRIPT FLUSH runs on this worker's private cluster only")
    users = list(range(1, 301))
    for user_id in users:
        store.start_rebuild(user_id)
    nodes = _nodes(redis)
    flushes = 0

    def flushing_between_chunks() -> Iterator[int]:
        nonlocal flushes
        for user_id in users:
            if user_id % 50 == 1:
                for node in nodes:
                    node.script_flush()
                    assert node.script_exists(store._push.sha) == [False]
                flushes += 1
            yield user_id

    assert store.push(flushing_between_chunks(), entry(7, 42)) == len(users)
    assert flushes == 6
    for user_id in users:
        assert redis.zrange(keys.home_timeline(user_id), 0, -1) == [SENTINEL, entry(7, 42)]
    for node in nodes:  # each chunk loaded it again where it was needed
        assert node.script_exists(store._push.sha) == [True]

    for node in nodes:  # and a backfill (one pipeline of one timeline's entries) as well
        node.script_flush()
    assert store.add(5, [entry(8, 43), entry(8, 44)]) is True
    assert store.page(5, None, 10) == [entry(8, 44), entry(8, 43), entry(7, 42)]
