"""While Redis is unreachable (docs/tweets.md, "While Redis is down"): reads answer from the stores,
writes are refused with 503 before anything is stored, and everything recovers when Redis comes
back, in the same warm handlers, without a restart.

Redis really goes away: a private redis-server is stopped (its port then refuses connections)
and started again, empty, on the same port.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
from warble import services
from warble.domain.accounts.answers import Principal

from infra.local.events import HttpRequest, http_api_event
from tests.conftest import CLUSTER_FIRST_PORT, ROOT, redis_pointed_at
from tests.integration.test_sample_events import Context
from tests.support.redis_cluster import start_cluster
from tests.support.redis_server import RedisServer

pytestmark = pytest.mark.integration


def _function(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"fn_down_{name}", ROOT / "functions" / name / "app.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def outage(pg, moto) -> Iterator[RedisServer]:
    """The code's Redis is a private server this test stops and starts."""
    server = RedisServer()
    server.start()
    with redis_pointed_at(server.url, cluster=False):
        yield server
        server.stop()


class Caller:
    """Invokes HTTP functions in process with the event API Gateway sends (no authorizer: the
    bearer token travels in the Authorization header to the handler)."""

    def __init__(self) -> None:
        self.functions = {name: _function(name) for name in ("accounts", "tweets")}
        self.headers: dict[str, str] = {}

    def http(
        self,
        function: str,
        route: str,
        path: str,
        who: Any = None,
        body: dict[str, Any] | None = None,
    ) -> tuple[int, dict[str, Any]]:
        method = route.split(" ")[0]
        raw = json.dumps(body).encode() if body is not None else b""
        headers = [("content-type", "application/json")]
        if who is not None:
            headers.append(("authorization", f"Bearer {who.token}"))
        request = HttpRequest(method, path, headers=headers, body=raw)
        event = http_api_event(request, route_key=route, api_id="api")
        answer = self.functions[function].handler(event, Context())
        self.headers = {name.lower(): value for name, value in answer.get("headers", {}).items()}
        return answer["statusCode"], json.loads(answer.get("body") or "null")


def _unavailable(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> bool:
    """API.md's 503: its code, and (where the caller passes the headers) a Retry-After."""
    if headers is not None and not headers.get("retry-after", "").isdigit():
        return False
    return status == 503 and body["error"]["code"] == "unavailable"


def test_reads_degrade_writes_refuse_and_everything_recovers_without_a_restart(outage, pg):
    accounts = services.accounts()
    alice = accounts.signup("alice", "alice@example.com", "password1", None, "laptop")
    uid = alice.user["id"]
    phone = accounts.login("alice", "password1", "phone")
    accounts.revoke(Principal(uid, alice.session.id), phone.session.id)
    tweet = services.tweets().post(uid, "before the outage", None, [])
    call = Caller()
    assert call.http("accounts", "GET /v1/users/me", "/v1/users/me", alice)[0] == 200

    outage.stop()

    # Reads: sessions, profiles and tweets from PostgreSQL and DynamoDB.
    verdict = services.accounts().authenticate(alice.token)  # the session cache degrades to PG
    assert verdict is not None and verdict[0].user_id == uid
    status, me = call.http("accounts", "GET /v1/users/me", "/v1/users/me", alice)
    assert (status, me["username"], me["email"]) == (200, "alice", "alice@example.com")
    status, other = call.http("accounts", "GET /v1/users/{user_id}", f"/v1/users/{uid}", alice)
    assert (status, other["username"]) == (200, "alice")
    tweet_path, tweets_path = f"/v1/tweets/{tweet.id}", f"/v1/users/{uid}/tweets"
    status, read = call.http("tweets", "GET /v1/tweets/{tweet_id}", tweet_path, alice)
    assert (status, read["text"]) == (200, "before the outage")
    status, mine = call.http("tweets", "GET /v1/users/{user_id}/tweets", tweets_path, alice)
    assert (status, [t["id"] for t in mine["items"]]) == (200, [tweet.id])
    # A revoked session stays out: its row in PostgreSQL says so.
    status, body = call.http("accounts", "GET /v1/users/me", "/v1/users/me", phone)
    assert (status, body["error"]["code"]) == (401, "unauthorized")
    # No degraded answer: the home timeline lives in Redis.
    home = call.http("tweets", "GET /v1/timeline/home", "/v1/timeline/home", alice)
    assert _unavailable(*home, call.headers)

    # Writes: 503 and nothing stored.
    patch = {"bio": "written during the outage"}
    assert _unavailable(*call.http("accounts", "PATCH /v1/users/me", "/v1/users/me", alice, patch))
    post = {"text": "during the outage"}
    assert _unavailable(*call.http("tweets", "POST /v1/tweets", "/v1/tweets", alice, post))
    assert int(call.headers["retry-after"]) >= 1
    login = {"login": "alice", "password": "password1", "device": "tablet"}
    status, body = call.http("accounts", "POST /v1/auth/login", "/v1/auth/login", None, login)
    assert _unavailable(status, body)  # the failed-login throttle cannot be kept: no login
    assert pg.execute("SELECT bio FROM users WHERE id = %s", (uid,)).fetchone()[0] == ""
    assert pg.execute("SELECT count(*) FROM sessions").fetchone()[0] == 2
    status, mine = call.http("tweets", "GET /v1/users/{user_id}/tweets", tweets_path, alice)
    assert (status, len(mine["items"])) == (200, 1)

    outage.start()  # back, empty (every cache lost); the same warm handlers and clients

    status, me = call.http("accounts", "PATCH /v1/users/me", "/v1/users/me", alice, patch)
    assert (status, me["bio"]) == (200, "written during the outage")
    status, posted = call.http("tweets", "POST /v1/tweets", "/v1/tweets", alice, post)
    assert (status, posted["text"]) == (201, "during the outage")
    status, session = call.http("accounts", "POST /v1/auth/login", "/v1/auth/login", None, login)
    assert status == 200 and session["token"]
    assert call.http("tweets", "GET /v1/timeline/home", "/v1/timeline/home", alice)[0] == 200
    for _ in range(2):  # the revoked session is read again from PostgreSQL
        status, body = call.http("accounts", "GET /v1/users/me", "/v1/users/me", phone)
        assert (status, body["error"]["code"]) == (401, "unauthorized")


def test_a_cluster_that_cannot_be_reached_is_a_503_with_retry_after(pg, moto):
    # given a Redis Cluster the code uses, and a user with a tweet
    cluster = start_cluster(CLUSTER_FIRST_PORT + 5)  # beside this worker's own cluster
    try:
        with redis_pointed_at(cluster.url, cluster=True):
            accounts = services.accounts()
            alice = accounts.signup("alice", "alice@example.com", "password1", None, "laptop")
            services.tweets().post(alice.user["id"], "before the outage", None, [])
            call = Caller()
            assert (
                call.http("tweets", "GET /v1/timeline/home", "/v1/timeline/home", alice)[0] == 200
            )

            # when every node of the cluster is gone (redis-py's cluster client then raises
            # RedisClusterException, outside RedisError)
            cluster.stop()

            # then a read that needs the cache and a write both answer 503 with Retry-After
            home = call.http("tweets", "GET /v1/timeline/home", "/v1/timeline/home", alice)
            assert _unavailable(*home, call.headers)
            post = {"text": "during the outage"}
            assert _unavailable(
                *call.http("tweets", "POST /v1/tweets", "/v1/tweets", alice, post), call.headers
            )
    finally:
        cluster.stop()
