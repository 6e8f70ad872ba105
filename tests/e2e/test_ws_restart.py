"""The WebSocket gateway restarts under a connected client (issue 40, fault 7), against the local
runtime (``POST /_warble/restart`` on the gateway, ``infra/local/ws_gateway.py``): the socket is
closed with 1001, the client connects again with backoff once the gateway listens, its old
registration is gone, what was pushed while it was away is read over HTTP (the message, the
notification, the unread counts), and pushes reach the new connection."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from websockets.exceptions import InvalidHandshake
from websockets.sync.client import ClientConnection, connect

from tests.e2e.test_conversations_ws import (
    WAIT,
    befriend,
    close_of,
    frames_until,
    registrations,
)
from tests.support import waiting

pytestmark = pytest.mark.e2e

DOWN_SECONDS = 1.5


def eventually(check: Any, what: str) -> Any:
    return waiting.eventually(check, what, WAIT, every=0.1)


def reconnect(stack, token: str) -> ClientConnection:
    """Connect again as a client does: backoff from 100 ms, doubling to 2 s, while the gateway
    refuses (it is down); the connection, to be entered."""
    delay = 0.1
    deadline = time.monotonic() + WAIT
    while True:
        try:
            return connect(f"{stack.ws}/?token={token}", open_timeout=WAIT, max_size=None)
        except (OSError, InvalidHandshake):
            if time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 2.0)


def test_clients_reconnect_after_a_gateway_restart_and_read_what_they_missed(stack, pair):
    me, mine, _, theirs = pair
    token = mine.headers["authorization"].split()[1]
    conversation = befriend(pair)
    posted = mine.post("/v1/tweets", json={"text": "before the restart"})
    assert posted.status_code == 201, posted.text
    tweet = posted.json()["id"]
    with connect(f"{stack.ws}/?token={token}", open_timeout=WAIT, max_size=None) as old:
        old.send(json.dumps({"action": "ping"}))
        frames_until(old, lambda f: f["type"] == "pong")
        eventually(lambda: len(registrations(stack, me["id"])) == 1, "registered")
        before = mine.get("/v1/notifications/unread-counts").json()

        # when the gateway restarts under the connected client
        control = stack.ws.replace("ws://", "http://", 1) + "/_warble/restart"
        asked = httpx.post(control, json={"down_seconds": DOWN_SECONDS}, timeout=10)
        assert asked.status_code == 202, asked.text
        # then its socket is closed as going away
        closed = close_of(old)
        assert closed.rcvd is not None and closed.rcvd.code == 1001

    # while it is away, a message and a like reach it (stored; no socket to push to)
    sent = theirs.post(f"/v1/conversations/{conversation}/messages", json={"text": "missed?"})
    assert sent.status_code == 201, sent.text
    assert theirs.put(f"/v1/tweets/{tweet}/like").status_code == 200

    # it connects again with backoff; its old registration is gone
    with reconnect(stack, token) as new:
        new.send(json.dumps({"action": "ping"}))
        assert frames_until(new, lambda f: f["type"] == "pong")[-1]["data"]["registered"]
        eventually(lambda: len(registrations(stack, me["id"])) == 1, "only the new connection")

        # and reads over HTTP what it missed
        def counted() -> dict | None:
            now = mine.get("/v1/notifications/unread-counts").json()
            grown = now["message"] > before["message"] and now["like"] > before["like"]
            return now if grown else None

        counts = eventually(counted, "the unread counts")
        assert counts["message"] == before["message"] + 1
        assert counts["like"] == before["like"] + 1
        messages = mine.get(f"/v1/conversations/{conversation}/messages").json()["items"]
        assert [m["text"] for m in messages] == ["missed?"]
        kinds = [n["type"] for n in mine.get("/v1/notifications").json()["items"]]
        assert "like" in kinds

        # and pushes reach the new connection
        again = theirs.post(f"/v1/conversations/{conversation}/messages", json={"text": "live"})
        assert again.status_code == 201, again.text
        pushed = frames_until(new, lambda f: f["type"] == "message")[-1]
        assert pushed["data"]["text"] == "live"
