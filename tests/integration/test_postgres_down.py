"""While PostgreSQL is unreachable (docs/reliability.md, the route table): routes that do not need
it keep answering (the home timeline, tweets, likes: DynamoDB and Redis, the session from its
cache), those that do answer ``503 unavailable`` with ``Retry-After`` and store nothing, and all
recover in the same warm handlers when it is back, without a restart.

PostgreSQL really goes away for the code: it reaches it through a TCP proxy this test cuts
(every connection dropped, new ones refused) and restores on the same port.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from warble import services

from tests.integration.test_redis_down import Caller, _unavailable
from tests.support.tcp_proxy import TcpProxy

pytestmark = pytest.mark.integration


@pytest.fixture
def outage(pg, redis, moto) -> Iterator[TcpProxy]:
    """The code's PostgreSQL is behind a proxy this test cuts and restores."""
    proxy = TcpProxy(("127.0.0.1", 5432))
    proxy.restore()
    saved = os.environ.get("DB_PORT")
    os.environ["DB_PORT"] = str(proxy.port)
    services.reset()
    try:
        yield proxy
    finally:
        proxy.cut()
        if saved is None:
            os.environ.pop("DB_PORT", None)
        else:
            os.environ["DB_PORT"] = saved
        services.reset()


def test_reads_of_dynamodb_and_redis_answer_writes_to_postgresql_refuse_and_all_recover(outage, pg):
    accounts = services.accounts()
    alice = accounts.signup("alice", "alice@example.com", "password1", None, "laptop")
    bob = accounts.signup("bob", "bob@example.com", "password1", None, "phone")
    services.graph().follow(alice.user["id"], bob.user["id"])
    tweet = services.tweets().post(bob.user["id"], "before the outage", None, [])
    call = Caller()
    home = "GET /v1/timeline/home", "/v1/timeline/home"
    status, page = call.http("tweets", *home, alice)
    assert status == 200
    assert call.http("accounts", "GET /v1/users/me", "/v1/users/me", alice)[0] == 200

    outage.cut()

    # Reads and writes of DynamoDB and Redis: the session and profiles from their caches.
    status, page = call.http("tweets", *home, alice)
    assert (status, [t["id"] for t in page["items"]]) == (200, [str(tweet.id)])
    one = "GET /v1/tweets/{tweet_id}", f"/v1/tweets/{tweet.id}"
    assert call.http("tweets", *one, alice)[0] == 200
    like = "PUT /v1/tweets/{tweet_id}/like", f"/v1/tweets/{tweet.id}/like"
    assert call.http("tweets", *like, alice) == (200, {"liked": True})
    post = "POST /v1/tweets", "/v1/tweets"
    assert call.http("tweets", *post, alice, {"text": "during the outage"})[0] == 201
    assert call.http("accounts", "GET /v1/users/me", "/v1/users/me", alice)[0] == 200
    # What PostgreSQL holds: 503 with Retry-After, nothing stored.
    patch = "PATCH /v1/users/me", "/v1/users/me"
    assert _unavailable(*call.http("accounts", *patch, alice, {"bio": "lost?"}), call.headers)
    login = "POST /v1/auth/login", "/v1/auth/login"
    credentials = {"login": "alice", "password": "password1", "device": "tablet"}
    assert _unavailable(*call.http("accounts", *login, None, credentials), call.headers)
    signup = "POST /v1/auth/signup", "/v1/auth/signup"
    carol = {"username": "carol", "email": "carol@example.com", "password": "password1"}
    assert _unavailable(*call.http("accounts", *signup, None, carol), call.headers)
    assert pg.execute("SELECT count(*) FROM users").fetchone()[0] == 2
    assert pg.execute("SELECT bio FROM users WHERE username = 'alice'").fetchone()[0] == ""

    outage.restore()  # back; the same warm handlers and clients

    status, me = call.http("accounts", *patch, alice, {"bio": "after"})
    assert (status, me["bio"]) == (200, "after")
    assert call.http("accounts", *login, None, credentials)[0] == 200
    assert call.http("accounts", *signup, None, carol)[0] == 201
