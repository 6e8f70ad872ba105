"""The Redis client: built by the composition root (``warble.services``) on first use, and
reused while the container is warm."""

from __future__ import annotations

from typing import TypeAlias

import redis
from redis.cluster import RedisCluster

from warble.settings import Settings

RedisClient: TypeAlias = "redis.Redis | RedisCluster"

# Connection failures a handler turns into 503 unavailable.
UNAVAILABLE_ERRORS: tuple[type[Exception], ...] = (redis.ConnectionError, redis.TimeoutError)


def connect(settings: Settings) -> RedisClient:
    options = {"decode_responses": True, "socket_timeout": 2.0, "socket_connect_timeout": 2.0}
    if settings.redis_cluster:
        return RedisCluster.from_url(settings.redis_url, **options)
    return redis.Redis.from_url(settings.redis_url, health_check_interval=30, **options)


def mget(client: RedisClient, names: list[str]) -> list[str | None]:
    """MGET of keys that may live in different slots.

    A single node answers one MGET. On a cluster, MGET across slots is refused (CROSSSLOT), so
    the cluster client's ``mget_nonatomic`` splits the keys by slot and pipelines one MGET per
    slot group. Callers never rely on atomicity across the keys.
    """
    values = (
        client.mget_nonatomic(names) if isinstance(client, RedisCluster) else client.mget(names)
    )
    return [None if value is None else str(value) for value in values]
