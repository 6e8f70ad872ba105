"""Accounts over real HTTP and WebSocket against the local runtime (issue 2's walk-through)."""

from __future__ import annotations

import json
import re
import threading

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.e2e.conftest import unique_name

pytestmark = pytest.mark.e2e


def _error(answer: httpx.Response, status: int, code: str) -> dict:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert "Traceback" not in answer.text
    return body["error"]


def test_a_client_signs_up_logs_in_twice_manages_sessions_and_edits_its_profile(stack):
    name = unique_name("walk")
    with stack.client() as anon:
        # sign up
        signup = anon.post(
            "/v1/auth/signup",
            json={
                "username": name,
                "email": f"{name}@Example.com",
                "password": "s3cret-pass",
                "display_name": "Walker",
            },
        )
        assert signup.status_code == 201, signup.text
        body = signup.json()
        user = body["user"]
        assert user["username"] == name and user["email"] == f"{name}@example.com"
        assert user["display_name"] == "Walker" and isinstance(user["id"], str)
        assert body["token"] and body["session_id"] and body["expires_at"].endswith("Z")

        # log in from two devices
        phone = anon.post(
            "/v1/auth/login",
            json={"login": name.upper(), "password": "s3cret-pass", "device": "phone"},
        )
        laptop = anon.post(
            "/v1/auth/login",
            json={"login": f"{name}@example.com", "password": "s3cret-pass", "device": "laptop"},
        )
        assert phone.status_code == laptop.status_code == 200
        phone_token, laptop_token = phone.json()["token"], laptop.json()["token"]

    with stack.client(phone_token) as as_phone, stack.client(laptop_token) as as_laptop:
        # the laptop token works (and the gateway now caches its authorizer verdict)
        assert as_laptop.get("/v1/users/me").status_code == 200

        # list sessions and revoke the laptop's
        sessions = as_phone.get("/v1/auth/sessions").json()["items"]
        assert {s["device"] for s in sessions} == {"", "phone", "laptop"}
        assert [s["current"] for s in sessions].count(True) == 1
        current = next(s for s in sessions if s["current"])
        assert current["device"] == "phone"
        laptop_session = next(s for s in sessions if s["device"] == "laptop")
        assert (
            as_phone.delete(f"/v1/auth/sessions/{laptop_session['session_id']}").status_code == 204
        )

        # the revoked token gets 401 on its very next request
        _error(as_laptop.get("/v1/users/me"), 401, "unauthorized")
        remaining = as_phone.get("/v1/auth/sessions").json()["items"]
        assert laptop_session["session_id"] not in {s["session_id"] for s in remaining}

        # edit the profile and read it back
        patched = as_phone.patch(
            "/v1/users/me", json={"display_name": "New Name", "bio": "hello there"}
        )
        assert patched.status_code == 200, patched.text
        assert patched.json()["bio"] == "hello there"
        me = as_phone.get("/v1/users/me").json()
        assert (me["display_name"], me["bio"]) == ("New Name", "hello there")
        by_id = as_phone.get(f"/v1/users/{user['id']}").json()
        assert (
            by_id["bio"] == "hello there" and "email" not in by_id and "relationship" not in by_id
        )
        by_name = as_phone.get(f"/v1/users/by-username/{name.upper()}").json()
        assert by_name["id"] == user["id"]
        # An empty display name is a value (0 to 50 characters), and reads back as written.
        assert (
            as_phone.patch("/v1/users/me", json={"display_name": ""}).json()["display_name"] == ""
        )
        assert as_phone.get("/v1/users/me").json()["display_name"] == ""

        # logout: that token is refused from then on
        assert as_phone.post("/v1/auth/logout").status_code == 204
        _error(as_phone.get("/v1/users/me"), 401, "unauthorized")


def test_another_user_sees_relationship_and_cannot_touch_my_sessions(stack, new_user):
    alice, alice_token = new_user("alice")
    _, bob_token = new_user("bob")
    with stack.client(bob_token) as bob, stack.client(alice_token) as as_alice:
        seen = bob.get(f"/v1/users/{alice['user']['id']}").json()
        assert seen["relationship"] == "none" and "email" not in seen
        _error(bob.delete(f"/v1/auth/sessions/{alice['session_id']}"), 404, "not_found")
        assert as_alice.get("/v1/users/me").status_code == 200


def test_tokens_are_required(stack):
    # given no Authorization header at all (API.md: a missing token), or one without a token
    for headers in (
        {},
        {"Authorization": ""},
        {"Authorization": "Bearer"},
        {"Authorization": "Basic eA=="},
    ):
        with httpx.Client(base_url=stack.http, headers=headers, timeout=30) as anon:
            # then every authenticated route answers API.md's 401, not API Gateway's own body
            for method, path in (("GET", "/v1/users/me"), ("POST", "/v1/tweets"),
                                 ("DELETE", "/v1/auth/sessions/1")):  # fmt: skip
                answer = anon.request(
                    method, path, json={"text": "hi"} if method == "POST" else None
                )
                _error(answer, 401, "unauthorized")
                assert answer.json()["error"]["message"]
    for token in ("garbage", "wbl_" + "A" * 43):
        with stack.client(token) as bad:
            _error(bad.get("/v1/users/me"), 401, "unauthorized")
            _error(bad.get("/v1/auth/sessions"), 401, "unauthorized")


def test_bad_input_gets_clear_4xx_and_writes_nothing(stack, new_user):
    _, token = new_user()
    name = unique_name("bad")
    with stack.client() as anon, stack.client(token) as me:
        error = _error(
            anon.post(
                "/v1/auth/signup",
                json={"username": "no spaces!", "email": "nope", "password": "short"},
            ),
            400,
            "validation_error",
        )
        assert {d["field"] for d in error["details"]} == {"username", "email", "password"}
        _error(
            anon.post(
                "/v1/auth/signup",
                content=b"{not json",
                headers={"content-type": "application/json"},
            ),
            400,
            "validation_error",
        )
        _error(
            anon.post(
                "/v1/auth/signup",
                json={
                    "username": name,
                    "email": f"{name}@x.io",
                    "password": "p" * 8,
                    "pad": "x" * 70_000,
                },
            ),
            413,
            "payload_too_large",
        )
        _error(me.patch("/v1/users/me", json={"bio": "x" * 161}), 400, "validation_error")
        _error(me.patch("/v1/users/me", json=["not", "an", "object"]), 400, "validation_error")
        _error(anon.get("/v1/nothing/here"), 404, "not_found")
        _error(anon.put("/v1/health"), 405, "method_not_allowed")
        # RFC 9110: a 405 lists the methods the path serves.
        wrong_method = me.patch("/v1/timeline/home")
        _error(wrong_method, 405, "method_not_allowed")
        assert wrong_method.headers["allow"] == "GET"
        assert anon.put("/v1/health").headers["allow"] == "GET"
        _error(anon.post("/v1/openapi.json"), 405, "method_not_allowed")
        _error(anon.delete("/v1/docs"), 405, "method_not_allowed")
        bad_utf8 = _error(
            anon.post(
                "/v1/auth/login",
                content=b'{"login": "\xff\xfe", "password": "12345678"}',
                headers={"content-type": "application/json"},
            ),
            400,
            "validation_error",
        )
        assert bad_utf8["details"][0]["field"] == "body"
        nulls = _error(me.patch("/v1/users/me", json={"bio": None}), 400, "validation_error")
        assert [d["field"] for d in nulls["details"]] == ["bio"]  # absent, or a string
        # a malformed id is a 400, as the OpenAPI document's pattern says (issue 18)
        _error(me.get("/v1/users/12345678901234567890123"), 400, "validation_error")
        _error(me.get("/v1/users/not-a-number"), 400, "validation_error")
        # nothing was written for the rejected sign-ups
        _error(me.get(f"/v1/users/by-username/{name}"), 404, "not_found")


def test_duplicate_usernames_and_emails_conflict(stack, new_user):
    body, _ = new_user("dup")
    name = body["user"]["username"]
    with stack.client() as anon:
        _error(
            anon.post(
                "/v1/auth/signup",
                json={
                    "username": name.upper(),
                    "email": f"x{name}@example.com",
                    "password": "password1",
                },
            ),
            409,
            "username_taken",
        )
        _error(
            anon.post(
                "/v1/auth/signup",
                json={
                    "username": "x" + name[:14],
                    "email": f"{name.upper()}@EXAMPLE.COM",
                    "password": "password1",
                },
            ),
            409,
            "email_taken",
        )


def test_login_throttle_answers_429_with_retry_after(stack, new_user):
    """Five failures for one account, whichever way the login names it (API.md), lock every
    name of it; a Unicode spelling that a collation's lower() folds to it logs nobody in."""
    body, _ = new_user("thri")
    name = body["user"]["username"]
    email = body["user"]["email"]
    with stack.client() as anon:
        for login in (name, name.upper(), email, email.upper(), name.capitalize()):
            _error(
                anon.post("/v1/auth/login", json={"login": login, "password": "wrong-password"}),
                401,
                "invalid_credentials",
            )
        for login in (name, email):
            limited = anon.post("/v1/auth/login", json={"login": login, "password": "password1"})
            _error(limited, 429, "rate_limited")
            assert 1 <= int(limited.headers["Retry-After"]) <= 900
        unicode = name.replace("i", "\u0130", 1)  # 'İ': glibc's lower() makes it 'i'
        answer = anon.post("/v1/auth/login", json={"login": unicode, "password": "password1"})
        assert answer.status_code in (401, 429), answer.text


def test_concurrent_profile_reads_never_see_a_stale_value_after_the_last_write(stack, new_user):
    body, token = new_user("hot")
    user_id = body["user"]["id"]
    stop = threading.Event()

    def reader() -> None:
        with stack.client(token) as client:
            while not stop.is_set():
                assert client.get(f"/v1/users/{user_id}").status_code == 200

    readers = [threading.Thread(target=reader) for _ in range(3)]
    for thread in readers:
        thread.start()
    with stack.client(token) as writer:
        for i in range(15):
            assert writer.patch("/v1/users/me", json={"bio": f"v{i}"}).status_code == 200
    stop.set()
    for thread in readers:
        thread.join()
    with stack.client(token) as client:
        for _ in range(5):
            assert client.get(f"/v1/users/{user_id}").json()["bio"] == "v14"


def test_health_and_api_documents_need_no_token(stack):
    with stack.client() as anon:
        assert anon.get("/v1/health").json() == {"status": "ok"}
        document = anon.get("/v1/openapi.json").json()
        assert document["openapi"].startswith("3.")
        for path in ("/v1/auth/signup", "/v1/auth/login", "/v1/users/me", "/v1/users/{user_id}"):
            assert path in document["paths"]
        docs = anon.get("/v1/docs")
        assert docs.status_code == 200 and "swagger-ui" in docs.text
        # Swagger UI's script, styles and start-up come from the stack itself: the page renders
        # offline (and runs no inline script: its Content-Security-Policy allows none)
        assets = re.findall(r'(?:src|href)="([^"]+)"', docs.text)
        assert len(assets) == 3 and all(url.startswith("/v1/docs/") for url in assets), assets
        for url in assets:
            asset = anon.get(url, headers={"Accept-Encoding": "gzip"})
            assert asset.status_code == 200, asset.text
            assert asset.headers["content-type"].startswith(("text/css", "text/javascript"))
            assert asset.headers["content-encoding"] == "gzip"
            assert len(asset.text) > (60 if "swagger-init" in url else 100_000)
            assert "immutable" in asset.headers["cache-control"]
        assert "SwaggerUIBundle" in anon.get(assets[1]).text
        missing = anon.get("/v1/docs/no-such-asset.js")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


def test_websocket_ping_pong_and_refusal(stack, new_user):
    _, token = new_user("ws")
    with connect(f"{stack.ws}/?token={token}", open_timeout=20) as socket:
        socket.send(json.dumps({"action": "ping"}))
        assert json.loads(socket.recv(timeout=20)) == {"type": "pong", "data": {"registered": True}}
        # the heartbeat is answered by the gateway (template.yaml's MOCK route), not a function
        socket.send(json.dumps({"action": "heartbeat"}))
        assert json.loads(socket.recv(timeout=20)) == {"type": "heartbeat", "data": {}}
        socket.send(json.dumps({"action": "no-such-action"}))
        frame = json.loads(socket.recv(timeout=20))
        assert frame["type"] == "error" and frame["data"]["code"] == "unknown_action"
    for url in (f"{stack.ws}/", f"{stack.ws}/?token=wbl_{'B' * 43}"):
        with pytest.raises(InvalidStatus) as refused:
            connect(url, open_timeout=20)
        assert refused.value.response.status_code in (401, 403)
