"""The held keys (warble.dal.hot: the celebrities' sets and their log, the system list) are read
through a client of the shards' replicas: every container's copies cost the primaries
nothing. On a cluster of three primaries with a replica each."""

from __future__ import annotations

import pytest
import redis as redis_lib
from warble import keys

from tests.support.waiting import eventually

pytestmark = [pytest.mark.integration, pytest.mark.cluster]


def test_held_keys_are_read_from_the_shards_replicas(monkeypatch):
    """The container's held keys (the celebrities' sets and their log) are read through a client
    of the shards' replicas: every container's copies cost the primaries nothing."""
    from warble.dal.timelines import TimelineStore
    from warble.services import Container
    from warble.settings import Settings

    from tests.conftest import CLUSTER_FIRST_PORT
    from tests.support.redis_cluster import start_cluster

    cluster = start_cluster(CLUSTER_FIRST_PORT + 320, replicas=1)
    container = None
    try:
        # The replicas are in the slots map once they have synced with their primaries.
        with cluster.nodes()[0] as seed:
            listed = lambda: all(len(r) > 3 for r in seed.execute_command("CLUSTER SLOTS"))  # noqa: E731
            eventually(listed, "the replicas in CLUSTER SLOTS", 30)
        settings = Settings(redis_url=cluster.url, redis_cluster=True, hot_key_cache_ms=1000)
        container = Container(settings)
        hot = container.hot
        assert hot is not None and hot.reader is not None
        writer = TimelineStore(container.redis, cap=800, recent_cap=100, ttl_seconds=60)
        reader = TimelineStore(container.redis, cap=800, recent_cap=100, ttl_seconds=60,
                               hot=hot)  # fmt: skip
        celebrity = 9_000_003
        writer.fill_recent(celebrity, [f"{celebrity * 10:019d}:{celebrity}"], celebrity=True)
        key = keys.celebrity_recent(celebrity)
        primary = container.redis.get_node_from_key(key)
        with redis_lib.Redis(host=primary.host, port=primary.port) as node:
            node.wait(1, 2000)  # the fill has reached the replica

        def served(role: str) -> int:
            total = 0
            for node in cluster.nodes():
                with node:
                    if node.info("replication")["role"] != role:
                        continue
                    stats = node.info("commandstats")
                    total += sum(stats.get(f"cmdstat_{c}", {}).get("calls", 0)
                                 for c in ("zrange", "zrangebyscore", "get"))  # fmt: skip
            return total

        before = {role: served(role) for role in ("master", "slave")}
        pages = reader.recent_pages([celebrity], None, 10, celebrity=True)
        assert pages[celebrity] == [f"{celebrity * 10:019d}:{celebrity}"]
        after = {role: served(role) for role in ("master", "slave")}
        assert after["slave"] - before["slave"] >= 2  # the log's reads and the set's ZRANGE
        assert after["master"] == before["master"]
    finally:
        if container is not None:
            container.close()
        cluster.stop()
