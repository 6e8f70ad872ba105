"""A cluster client whose default node died (a primary's failover) goes on serving pipelines
of scripts (warble.dal.redis.KeysAskedLocally): redis-py sent ``COMMAND GETKEYS`` to the
default node for every script in a pipeline, so a worker whose default node was the dead
primary failed every such pipeline after its replica took over (docs/reliability.md,
cache-failover)."""

from __future__ import annotations

import pytest
from redis.cluster import PRIMARY, ClusterNode, RedisCluster
from warble import services

from tests.support.redis_server import free_port

pytestmark = [pytest.mark.integration, pytest.mark.redis]


def _getkeys_calls(client: RedisCluster) -> int:
    stats = client.info("commandstats", target_nodes=RedisCluster.PRIMARIES)
    return sum(
        int(node_stats.get("cmdstat_command|getkeys", {}).get("calls", 0))
        for node_stats in stats.values()
    )


def test_pipelined_scripts_name_their_keys_without_the_default_node(redis, redis_backend):
    if redis_backend != "cluster":
        pytest.skip("a single node has no default node to lose")
    client = services.container().redis
    script = client.register_script("redis.call('SET', KEYS[1], ARGV[1]) return ARGV[1]")
    script(keys=["{dn}:a"], args=["0"])  # loaded on the node that holds {dn}
    before = _getkeys_calls(redis)

    # given the client's default node is a primary that died
    port = free_port()
    dead = ClusterNode("127.0.0.1", port, server_type=PRIMARY)
    dead.redis_connection = type(client.get_default_node().redis_connection)(
        host="127.0.0.1", port=port, socket_connect_timeout=0.5, decode_responses=True
    )
    client.nodes_manager.default_node = dead

    # when a pipeline runs a script, as the stores send one
    pipe = client.pipeline(transaction=False)
    pipe.execute_command("EVALSHA", script.sha, 1, "{dn}:a", "1")
    pipe.get("{dn}:a")
    answers = pipe.execute()

    # then it is answered, the script's keys named without asking any node
    assert answers == ["1", "1"]
    assert _getkeys_calls(redis) == before
