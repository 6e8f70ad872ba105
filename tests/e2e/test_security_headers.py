"""API.md "Headers" (issue 33 item 7): every API answer says nosniff, every one but the public
documents' says no-store (some hold a token or an email), the web client and Swagger UI carry a
Content-Security-Policy, and no token or password reaches the local stack's log."""

from __future__ import annotations

import time

import httpx
import pytest
from websockets.sync.client import connect

from tests.e2e.conftest import unique_name

pytestmark = pytest.mark.e2e

WAIT = 20


def test_every_answer_says_nosniff_and_private_ones_no_store(stack, new_user):
    name = unique_name("hd")
    with stack.client() as anonymous:
        signup = anonymous.post(
            "/v1/auth/signup",
            json={"username": name, "email": f"{name}@example.com", "password": "password1"},
        )
        login = anonymous.post("/v1/auth/login", json={"login": name, "password": "password1"})
        refused = anonymous.get("/v1/users/me")
        public = [anonymous.get(path) for path in ("/v1/health", "/v1/openapi.json", "/v1/docs")]
        unknown = anonymous.get("/v1/no/such/path")
    token = signup.json()["token"]
    with stack.client(token) as me:
        mine = me.get("/v1/users/me")
        patched = me.patch("/v1/users/me", json={"bio": "headers"})
        sessions = me.get("/v1/auth/sessions")
        bad = me.post("/v1/tweets", json={"text": ""})
    private = [signup, login, refused, mine, patched, sessions, bad]
    assert [a.status_code for a in private] == [201, 200, 401, 200, 200, 200, 400]
    for answer in [*private, *public, unknown]:
        assert answer.headers["x-content-type-options"] == "nosniff", answer.url
    for answer in private:
        assert answer.headers["cache-control"] == "no-store", answer.url
    for answer in public:
        assert "no-store" not in answer.headers.get("cache-control", ""), answer.url
    assert "script-src 'self'" in public[2].headers["content-security-policy"]


def test_the_web_client_carries_its_content_security_policy(stack):
    answer = httpx.get(stack.web, timeout=30)
    assert answer.status_code == 200 and answer.headers["x-content-type-options"] == "nosniff"
    directives = dict(
        part.strip().split(" ", 1) for part in answer.headers["content-security-policy"].split(";")
    )
    assert directives["default-src"] == "'none'"
    assert stack.http in directives["connect-src"] and stack.ws in directives["connect-src"]


def test_no_token_or_password_reaches_the_log(stack, new_user):
    password = f"pw-{unique_name('p')}"
    body, token = new_user("lg", password=password)
    with stack.client() as anonymous:
        login = anonymous.post(
            "/v1/auth/login", json={"login": body["user"]["username"], "password": password}
        )
        second = login.json()["token"]
        # a client that puts its token in a query string (as the WebSocket API asks)
        anonymous.get("/v1/users/me", params={"token": second})
    with connect(f"{stack.ws}/?token={token}", open_timeout=WAIT) as ws:
        ws.send('{"action": "ping"}')
        ws.recv(timeout=WAIT)
    lines = stack.output
    assert lines is not None
    deadline = time.monotonic() + WAIT
    while not any('"GET /v1/users/me?token=' in line for line in lines):
        assert time.monotonic() < deadline, "the request was never logged"
        time.sleep(0.1)
    logged = "".join(lines)
    # The token's secret part, after "wbl_<user id>_": split once more would cut it at an "_" of
    # its own (base64url has them), leaving a few characters any log line may hold by chance.
    for secret in (token, second, password, token.split("_", 2)[-1]):
        assert secret not in logged
