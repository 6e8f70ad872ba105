"""A store that hangs rather than fails (here a table locked by another session) is answered
``503 unavailable`` with ``Retry-After`` before the function's timeout, not run into it (API
Gateway answers a timed-out function with a bare 500); the next request is served as usual
(warble.deadline)."""

from __future__ import annotations

import json
import time
from typing import Any

import psycopg
import pytest
from warble import services

from infra.local.events import HttpRequest, http_api_event
from tests.integration.test_redis_down import _function
from tests.support.lambda_context import Context

pytestmark = pytest.mark.integration


class ShortContext(Context):
    """A function with ``ms`` milliseconds left, counted from when it was made."""

    def __init__(self, ms: int) -> None:
        self._deadline = time.monotonic() + ms / 1000

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def _login(handler: Any, ms: int) -> tuple[int, dict[str, str], dict[str, Any]]:
    body = json.dumps({"login": "alice", "password": "password1", "device": "d"}).encode()
    request = HttpRequest(
        "POST", "/v1/auth/login", headers=[("content-type", "application/json")], body=body
    )
    answer = handler(
        http_api_event(request, route_key="POST /v1/auth/login", api_id="api"), ShortContext(ms)
    )
    headers = {k.lower(): v for k, v in answer.get("headers", {}).items()}
    return answer["statusCode"], headers, json.loads(answer["body"])


def test_a_hanging_store_is_a_503_before_the_timeout_and_the_next_request_is_served(
    pg, redis, moto, database
):
    services.accounts().signup("alice", "alice@example.com", "password1", None, "laptop")
    handler = _function("accounts").handler
    assert _login(handler, 3000)[0] == 200

    # given another session holding the users table (the login's read waits for it)
    holder = psycopg.connect(f"host=127.0.0.1 user=postgres dbname={database}")
    try:
        holder.execute("LOCK TABLE users IN ACCESS EXCLUSIVE MODE")

        # when a login comes with 1.5 s of its function's time left
        started = time.monotonic()
        status, headers, body = _login(handler, 1500)
        took = time.monotonic() - started

        # then it is a 503 with Retry-After, inside the function's time
        assert (status, body["error"]["code"]) == (503, "unavailable")
        assert int(headers["retry-after"]) >= 1
        assert took < 1.5
    finally:
        holder.rollback()
        holder.close()

    # and once the table is free, the same warm handler logs in on a new connection
    assert _login(handler, 3000)[0] == 200
