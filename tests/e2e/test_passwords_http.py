"""Password change and reset over real HTTP and WebSocket against the local runtime (API.md
"Accounts"): the email read where the local stack lists it (moto's SES at /_aws/ses), the
sessions and their sockets ended, and nothing secret in the log."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.e2e.conftest import unique_name

pytestmark = pytest.mark.e2e

WAIT = 20  # seconds a mail or a close may take on a busy machine (never asserted as a speed)


def _error(answer: httpx.Response, status: int, code: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.json()["error"]["code"] == code


def reset_mails(stack, address: str, at_least: int = 1) -> list[dict]:
    """The reset emails the local stack would have sent to ``address``, once ``at_least``."""
    deadline = time.monotonic() + WAIT
    while True:
        listed = httpx.get(f"{stack.moto}/_aws/ses", timeout=10).raise_for_status().json()
        mails = [m for m in listed["messages"] if address in m["Destination"]["ToAddresses"]]
        if len(mails) >= at_least or time.monotonic() > deadline:
            return mails
        time.sleep(0.2)


def link_of(mail: dict) -> str:
    return next(word for word in mail["Body"]["text_part"].split() if word.startswith("http"))


def token_of(mail: dict) -> str:
    return parse_qs(urlsplit(link_of(mail)).query)["token"][0]


def closed_by_server(ws) -> ConnectionClosed:
    deadline = time.monotonic() + WAIT
    while True:
        try:
            ws.recv(timeout=max(0.1, deadline - time.monotonic()))
        except ConnectionClosed as closed:
            return closed
        except TimeoutError:
            pytest.fail("the connection of an ended session is still open")


def login(stack, login_name: str, password: str, device: str = "") -> httpx.Response:
    with stack.client() as anonymous:
        return anonymous.post(
            "/v1/auth/login", json={"login": login_name, "password": password, "device": device}
        )


def test_a_password_change_keeps_this_session_and_ends_the_others_and_their_sockets(
    stack, new_user
):
    body, token = new_user("pc")
    name = body["user"]["username"]
    other = login(stack, name, "password1", "laptop").json()
    with (
        connect(f"{stack.ws}/?token={other['token']}", open_timeout=WAIT) as other_ws,
        stack.client(token) as me,
    ):
        other_ws.send('{"action": "ping"}')
        other_ws.recv(timeout=WAIT)
        # a wrong current password changes nothing
        _error(
            me.put(
                "/v1/users/me/password",
                json={"current_password": "wrong-password", "password": "new-password1"},
            ),
            403,
            "invalid_credentials",
        )
        # a new password that signup would refuse is a validation error
        short = me.put(
            "/v1/users/me/password", json={"current_password": "password1", "password": "short"}
        )
        _error(short, 400, "validation_error")
        assert short.json()["error"]["details"][0]["field"] == "password"
        changed = me.put(
            "/v1/users/me/password",
            json={"current_password": "password1", "password": "new-password1"},
        )
        assert changed.status_code == 204, changed.text
        assert closed_by_server(other_ws).rcvd is not None
        assert me.get("/v1/users/me").status_code == 200  # this session stays
        sessions = me.get("/v1/auth/sessions").json()["items"]
        assert [s["current"] for s in sessions] == [True]
    with stack.client(other["token"]) as gone:
        _error(gone.get("/v1/users/me"), 401, "unauthorized")
    _error(login(stack, name, "password1"), 401, "invalid_credentials")
    assert login(stack, name, "new-password1").status_code == 200


def test_forgot_password_mail_reset_and_log_in_with_the_new_one(stack, new_user):
    body, token = new_user("pr")
    name, address = body["user"]["username"], body["user"]["email"]
    with stack.client() as anonymous:
        # known or not, the same 202
        asked = anonymous.post("/v1/auth/password-reset", json={"email": address.upper()})
        unknown = anonymous.post(
            "/v1/auth/password-reset", json={"email": f"{unique_name('nx')}@example.com"}
        )
        assert asked.status_code == unknown.status_code == 202, (asked.text, unknown.text)
        assert asked.content == unknown.content == b""
        _error(anonymous.post("/v1/auth/password-reset", json={}), 400, "validation_error")
        # a malformed address is a 400 (the document says format: email), as at signup
        for malformed in ("000", "no-at-sign.example.com", "a@", "@example.com"):
            answer = anonymous.post("/v1/auth/password-reset", json={"email": malformed})
            _error(answer, 400, "validation_error")
            assert answer.json()["error"]["details"][0]["field"] == "email"
    [mail] = reset_mails(stack, address)
    assert mail["Subject"] and mail["Body"]["html_part"] and mail["Id"] and mail["Timestamp"]
    assert mail["Source"] and mail["Destination"] == {"ToAddresses": [address]}
    assert link_of(mail).startswith(stack.web.rstrip("/") + "/")  # the web client's reset page
    reset_token = token_of(mail)

    with connect(f"{stack.ws}/?token={token}", open_timeout=WAIT) as ws, stack.client() as anon:
        ws.send('{"action": "ping"}')
        ws.recv(timeout=WAIT)
        _error(
            anon.post(
                "/v1/auth/password-reset/confirm",
                json={"token": reset_token, "password": "short"},
            ),
            400,
            "validation_error",
        )
        confirmed = anon.post(
            "/v1/auth/password-reset/confirm",
            json={"token": reset_token, "password": "after-reset-1"},
        )
        assert confirmed.status_code == 204, confirmed.text
        assert confirmed.headers["cache-control"] == "no-store"
        # every session ends, its socket too
        assert closed_by_server(ws).rcvd is not None
        again = anon.post(
            "/v1/auth/password-reset/confirm",
            json={"token": reset_token, "password": "after-reset-2"},
        )
        _error(again, 400, "invalid_token")
        _error(
            anon.post(
                "/v1/auth/password-reset/confirm",
                json={"token": "x" * 43, "password": "after-reset-2"},
            ),
            400,
            "invalid_token",
        )
    with stack.client(token) as gone:
        _error(gone.get("/v1/users/me"), 401, "unauthorized")
    _error(login(stack, name, "password1"), 401, "invalid_credentials")
    assert login(stack, name, "after-reset-1").status_code == 200

    # neither the token nor the new password reached the stack's log
    logged = "".join(stack.output or [])
    assert logged and reset_token not in logged and "after-reset-1" not in logged


def test_more_than_three_resets_an_hour_send_nothing_and_still_answer_202(stack, new_user):
    body, _ = new_user("pl")
    address = body["user"]["email"]
    with stack.client() as anonymous:
        answers = [
            anonymous.post("/v1/auth/password-reset", json={"email": address}).status_code
            for _ in range(5)
        ]
    assert answers == [202] * 5
    mails = reset_mails(stack, address, at_least=3)
    assert len(mails) == 3
    # only the newest works
    with stack.client() as anonymous:
        for older in mails[:2]:
            _error(
                anonymous.post(
                    "/v1/auth/password-reset/confirm",
                    json={"token": token_of(older), "password": "after-reset-1"},
                ),
                400,
                "invalid_token",
            )
        newest = anonymous.post(
            "/v1/auth/password-reset/confirm",
            json={"token": token_of(mails[2]), "password": "after-reset-1"},
        )
        assert newest.status_code == 204, newest.text
