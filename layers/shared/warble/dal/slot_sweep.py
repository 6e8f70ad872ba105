"""The keys a cache's move left behind (``warble.dal.redis.CacheMove``), removed.

A slot moved to the new cache is never read again on its old one, but its keys stay there
until their TTLs end, and some keys have none. Whatever they held of an account deleted since
would outlive the deletion, which reaches a key through its slot's current cache only. After a
move, the operator runs this sweep on every primary of every cache (OperatorFunction's
``sweep_moved_slots``, infra/operator.py): it SCANs the node and UNLINKs each key whose slot is
now another cache's. It may run at any time: a slot not yet moved still belongs to its old
cache, and nothing writes a slot's keys to a cache before the slot is its.

A sweep goes a node at a time from a SCAN cursor, for as long as its caller allows, and
answers the cursor to go on from (0: the node is done), so a Lambda invocation can take a
share of a large node.
"""

from __future__ import annotations

import time

from redis.cluster import RedisCluster
from redis.crc import key_slot

from warble.dal.redis import RedisClient, SlotMap

SCAN_COUNT = 1000


def primaries(client: RedisClient) -> list[str]:
    """The names ("host:port") of every cache's primaries; none on a single cache."""
    manager = getattr(client, "nodes_manager", None)
    if not isinstance(manager, SlotMap):
        return []
    return sorted(
        node.name
        for cache in manager.caches
        for node in cache.nodes_cache.values()
        if node.server_type == "primary"
    )


def sweep(client: RedisClient, node_name: str, cursor: int, seconds: float) -> tuple[int, int]:
    """UNLINK the keys on ``node_name`` whose slot another cache now holds, from ``cursor``
    for about ``seconds``: (the cursor to go on from, 0 when the node is done; keys removed)."""
    assert isinstance(client, RedisCluster)
    manager = client.nodes_manager
    assert isinstance(manager, SlotMap)
    mine = next(cache for cache in manager.caches if node_name in cache.nodes_cache)
    node = client.get_redis_connection(mine.nodes_cache[node_name])
    ends, removed = time.monotonic() + seconds, 0
    while True:
        cursor, names = node.scan(cursor=cursor, count=SCAN_COUNT)
        now = time.time()
        gone = [
            name
            for name in names
            if manager.owner(key_slot(name.encode() if isinstance(name, str) else name), now)
            is not mine
        ]
        if gone:
            pipe = node.pipeline(transaction=False)
            for name in gone:
                pipe.unlink(name)  # one key a command: a node of a cluster refuses cross-slot
            removed += sum(pipe.execute())
        if cursor == 0 or time.monotonic() >= ends:
            return cursor, removed
