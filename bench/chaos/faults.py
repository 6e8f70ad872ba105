"""The faults of issue 40, each done to a ChaosStack's own stores and undone: ``inject`` starts
it, ``restore`` ends it and returns when the store was back (``time.time()``)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx
import psycopg
import redis

from bench.chaos.stack import DB_NAME, ChaosStack

FAULTS_PATH = "/_warble/faults"  # the local moto server's DynamoDB fault switch (branch faults)
DYNAMO_FAULTS = {"throttle": 0.1, "internal_error": 0.01}


class SwitchMissing(RuntimeError):
    """The local runtime has no such fault switch (yet): the scenario reports it, not a row."""


@dataclass(frozen=True)
class Fault:
    name: str
    what: str
    seconds: float  # how long the store stays faulty
    inject: Callable[[ChaosStack], None]
    restore: Callable[[ChaosStack], float]
    cluster: bool = False  # needs the stack on a Redis Cluster


def _pause(stack: ChaosStack) -> None:
    assert stack.redis is not None and stack.redis.pid is not None
    os.kill(stack.redis.pid, signal.SIGSTOP)


def _resume(stack: ChaosStack) -> float:
    assert stack.redis is not None and stack.redis.pid is not None
    os.kill(stack.redis.pid, signal.SIGCONT)
    return time.time()


def _flush(stack: ChaosStack) -> None:
    assert stack.redis is not None
    with redis.Redis.from_url(stack.redis.url) as client:
        client.flushall()


def _now(_: ChaosStack) -> float:
    return time.time()


def _kill_primary(stack: ChaosStack) -> None:
    """SIGKILL a primary (not the seed node the functions were given): the cluster promotes
    its replica itself, after cluster-node-timeout."""
    assert stack.cluster is not None
    stack.cluster.kill_primary()


def _promoted(stack: ChaosStack) -> float:
    assert stack.cluster is not None
    stack.cluster.wait_for_primaries()
    return time.time()


def _terminate_backends(_: ChaosStack) -> None:
    """A writer failover as the functions see it: every connection of the stack's own database
    dropped (other databases' connections are left alone)."""
    with psycopg.connect(host="127.0.0.1", port=5432, user="postgres", autocommit=True) as pg:
        pg.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()",
            (DB_NAME,),
        )


def _cut(stack: ChaosStack) -> None:
    stack.proxy.cut()


def _reopen(stack: ChaosStack) -> float:
    stack.proxy.restore()
    return time.time()


def _throttle(stack: ChaosStack) -> None:
    answer = httpx.put(f"{stack.moto}{FAULTS_PATH}", json=DYNAMO_FAULTS, timeout=10)
    if answer.status_code in (404, 405, 501):  # no such route on this moto server
        raise SwitchMissing(f"switch not available (PUT {FAULTS_PATH}: {answer.status_code})")
    answer.raise_for_status()


def _unthrottle(stack: ChaosStack) -> float:
    httpx.delete(f"{stack.moto}{FAULTS_PATH}", timeout=10).raise_for_status()
    return time.time()


FAULTS = [
    Fault("cache-pause", "the cache stops answering 10 s (SIGSTOP)", 10, _pause, _resume),
    Fault("cache-flush", "the cache loses everything (FLUSHALL)", 0, _flush, _now),
    Fault(
        "cache-failover",
        "a cache primary dies, its replica takes over",
        0,
        _kill_primary,
        _promoted,
        cluster=True,
    ),
    Fault(
        "pg-terminate",
        "PostgreSQL connections dropped (pg_terminate_backend)",
        0,
        _terminate_backends,
        _now,
    ),
    Fault("pg-down", "PostgreSQL down 30 s (its proxy cut)", 30, _cut, _reopen),
    Fault("ddb-throttle", "DynamoDB throttles 10%, fails 1%", 20, _throttle, _unthrottle),
]
