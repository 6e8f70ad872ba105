"""A cache that stops answering (a paused server: it takes connections and never replies) costs a
request at most half of what is left of its deadline per command (warble.dal.redis,
``command_window``): the command fails as a Redis error while the route still has time for its
fallback (the session and profile read from PostgreSQL), instead of the deadline's own 503. And
a healthy cache keeps its retry: a dropped connection is made again within the command."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import redis as redis_lib
from warble import services
from warble.dal.redis import send_pipelined
from warble.deadline import answering_within

from infra.local.events import HttpRequest, http_api_event
from tests.conftest import CLUSTER_FIRST_PORT, redis_pointed_at
from tests.integration.test_deadline import ShortContext
from tests.integration.test_redis_down import _function
from tests.support.redis_cluster import start_cluster
from tests.support.redis_server import RedisServer

pytestmark = pytest.mark.integration


@contextmanager
def paused(pids: list[int]) -> Iterator[None]:
    """The servers stopped (SIGSTOP) inside: their ports still take connections."""
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


@pytest.fixture
def node(pg, moto) -> Iterator[RedisServer]:
    """The code's Redis is a private single server this test pauses."""
    server = RedisServer()
    server.start()
    try:
        with redis_pointed_at(server.url, cluster=False):
            yield server
    finally:
        server.stop()


def _me(token: str, ms: int) -> tuple[int, dict[str, str], dict[str, Any], float]:
    """GET /v1/users/me through the accounts function, with ``ms`` of its time left: the
    answer's status, headers and body, and the seconds it took."""
    request = HttpRequest("GET", "/v1/users/me", headers=[("authorization", f"Bearer {token}")])
    event = http_api_event(request, route_key="GET /v1/users/me", api_id="api")
    handler = _function("accounts").handler
    started = time.monotonic()
    answer = handler(event, ShortContext(ms))
    took = time.monotonic() - started
    headers = {k.lower(): v for k, v in answer.get("headers", {}).items()}
    return answer["statusCode"], headers, json.loads(answer["body"]), took


def test_a_command_on_a_paused_cache_gives_up_within_half_the_time_left(node):
    # given the code's client, warm
    client = services.container().redis
    client.set("k", "v")

    with paused([node.pid]):  # type: ignore[list-item]
        # when a command is sent with 1 s of the function's time left (the deadline rings
        # 200 ms before it)
        started = time.monotonic()
        with answering_within(ShortContext(1000)), pytest.raises(redis_lib.TimeoutError):
            client.get("k")

        # then it fails as a Redis timeout after half of the 0.8 s left (0.4 s), before the
        # deadline's alarm (which would raise DeadlineExceeded at 0.8 s)
        assert time.monotonic() - started < 0.7


def test_a_route_with_a_fallback_answers_from_it_while_the_cache_is_paused(node):
    # given a signed-up user whose session and profile the cache holds
    alice = services.accounts().signup("alice", "alice@example.com", "password1", None, "laptop")
    assert _me(alice.token, 3000)[0] == 200

    with paused([node.pid]):  # type: ignore[list-item]
        # when she reads her profile with 1.5 s of the function's time left
        status, _, body, took = _me(alice.token, 1500)

    # then it is answered from PostgreSQL, inside the function's time
    assert (status, body.get("username")) == (200, "alice")
    assert took < 1.5


def test_a_paused_cluster_is_a_fallback_or_a_503_before_the_deadline(pg, moto):
    cluster = start_cluster(CLUSTER_FIRST_PORT + 5)  # beside this worker's own cluster
    try:
        with redis_pointed_at(cluster.url, cluster=True):
            accounts = services.accounts()
            alice = accounts.signup("alice", "alice@example.com", "password1", None, "laptop")
            assert _me(alice.token, 3000)[0] == 200

            # when every node stops answering (redis-py's cluster client, left alone, waits
            # for each node in turn: 8 s for a GET)
            with paused([process.pid for process in cluster.processes]):
                status, _, body, took = _me(alice.token, 3000)

            # then the profile is read from PostgreSQL, before the deadline
            assert (status, body.get("username")) == (200, "alice")
            assert took < 3.0
    finally:
        cluster.stop()


def test_a_dropped_connection_is_made_again_within_the_command(node):
    # given the code's client, its batch connection made
    client = services.container().redis
    client.set("k", "v")
    assert send_pipelined(client, [("GET", "k")]) == ["v"]

    # when the server drops it (a node restarting, an idle connection closed)
    with redis_lib.Redis.from_url(node.url) as admin:
        for info in admin.client_list():
            if info.get("cmd") in {"get", "mget"}:
                admin.client_kill_filter(_id=info["id"])

    # then the next batch is answered: retried on a new connection
    with answering_within(ShortContext(1000)):
        assert send_pipelined(client, [("GET", "k")]) == ["v"]
