"""Notifications over HTTP against the local runtime: produced by the stream consumer, counted,
marked read, and pushed as ``notification`` events to a WebSocket client."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from websockets.sync.client import connect

from tests.e2e.test_tweets_http import eventually, follow, post

pytestmark = pytest.mark.e2e


class Listener:
    """A WebSocket client that collects every frame the server pushes, in a thread."""

    def __init__(self, url: str) -> None:
        self.frames: list[dict[str, Any]] = []
        self._socket = connect(url)  # closed by close()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for raw in self._socket:
                self.frames.append(json.loads(raw))
        except Exception:
            return

    def notifications(self) -> list[dict[str, Any]]:
        return [f["data"] for f in self.frames if f.get("type") == "notification"]

    def close(self) -> None:
        self._socket.close()
        self._thread.join(5)


def counts(client) -> dict[str, int]:
    answer = client.get("/v1/notifications/unread-counts")
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_notifications_counts_read_and_pushes(stack, pair):
    me, mine, them, theirs = pair
    listener = Listener(f"{stack.ws}/?token={mine.headers['Authorization'].split()[1]}")
    try:
        assert counts(mine) == dict.fromkeys(
            ["follow", "like", "reply", "mention", "retweet", "message", "match", "system",
             "home", "total"], 0,
        )  # fmt: skip
        follow(theirs, me["id"])
        tweet = post(mine, "hello")["id"]
        assert theirs.put(f"/v1/tweets/{tweet}/like").status_code == 200
        post(theirs, f"@{me['username'].upper()} hi", reply_to=tweet)
        assert theirs.post(f"/v1/tweets/{tweet}/retweet").status_code == 201
        # The first records may meet the consumer's cold start (several seconds on this stack).
        eventually(lambda: counts(mine)["total"] == 4, timeout=30)
        assert {k: v for k, v in counts(mine).items() if v} == {
            "follow": 1, "like": 1, "reply": 1, "retweet": 1, "total": 4,
        }  # fmt: skip

        page = mine.get("/v1/notifications").json()
        assert sorted(n["type"] for n in page["items"]) == ["follow", "like", "reply", "retweet"]
        assert all(n["actor"]["id"] == them["id"] and not n["read"] for n in page["items"])
        liked = mine.get("/v1/notifications", params={"types": "like"}).json()["items"]
        assert [(n["type"], n["tweet_id"]) for n in liked] == [("like", tweet)]

        # Every new notification came over the WebSocket, with the counts after it.
        eventually(lambda: len([n for n in listener.notifications() if "id" in n]) == 4)
        pushed = [n for n in listener.notifications() if "id" in n]
        assert sorted(n["type"] for n in pushed) == ["follow", "like", "reply", "retweet"]
        assert max(n["unread_counts"]["total"] for n in pushed) == 4

        assert (
            mine.post("/v1/notifications/read", json={"types": ["like", "follow"]}).status_code
            == 204
        )
        assert {k: v for k, v in counts(mine).items() if v} == {
            "reply": 1, "retweet": 1, "total": 2,
        }  # fmt: skip
        read = {n["type"]: n["read"] for n in mine.get("/v1/notifications").json()["items"]}
        assert read == {"follow": True, "like": True, "reply": False, "retweet": False}
        # The count change is pushed too.
        eventually(lambda: any(
            "id" not in n and n["unread_counts"]["total"] == 2 for n in listener.notifications()
        ))  # fmt: skip
        assert mine.post("/v1/notifications/read", json={"all": True}).status_code == 204
        assert counts(mine)["total"] == 0
    finally:
        listener.close()


def test_home_count_and_system_notifications(stack, pair, new_user):
    _, mine, them, theirs = pair
    follow(mine, them["id"])
    _, bystander_token = new_user("bystander")
    listener = Listener(f"{stack.ws}/?token={mine.headers['Authorization'].split()[1]}")
    bystander = Listener(f"{stack.ws}/?token={bystander_token}")
    try:
        post(theirs, "news")
        eventually(lambda: counts(mine)["home"] == 1, timeout=30)
        # The home count is pushed to the followers' connections as the other counts are
        # (issue 34: it was only polled), and to nobody else.
        eventually(
            lambda: any(
                "id" not in n and n["unread_counts"]["home"] == 1 for n in listener.notifications()
            ),
            timeout=30,
        )
        assert bystander.notifications() == []
    finally:
        listener.close()
        bystander.close()
    assert mine.post("/v1/notifications/read", json={"types": ["home"]}).status_code == 204
    assert counts(mine)["home"] == 0

    refused = mine.post("/v1/admin/system-notifications", json={"title": "t", "body": "b"})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    with stack.client() as anonymous:
        answer = anonymous.post(
            "/v1/auth/signup",
            json={"username": "warble_admin", "email": "admin@example.com",
                  "password": "password1"},
        )  # fmt: skip
    if answer.status_code == 201:
        admin_token = answer.json()["token"]
    else:  # signed up by an earlier test of this session
        with stack.client() as anonymous:
            admin_token = anonymous.post(
                "/v1/auth/login", json={"login": "warble_admin", "password": "password1"}
            ).json()["token"]
    with stack.client(admin_token) as admin:
        sent = admin.post(
            "/v1/admin/system-notifications", json={"title": "Hello", "body": "Welcome"}
        )
        assert sent.status_code == 201, sent.text
        body = sent.json()
        assert (body["type"], body["title"], body["actor"], body["tweet_id"]) == (
            "system", "Hello", None, None,
        )  # fmt: skip
    assert counts(mine)["system"] == 1
    listed = mine.get("/v1/notifications", params={"types": "system"}).json()["items"]
    assert [n["id"] for n in listed] == [body["id"]]
    _, later_token = new_user("late")  # signed up after it: counts none
    with stack.client(later_token) as later:
        assert counts(later)["system"] == 0
    assert mine.post("/v1/notifications/read", json={"types": ["system"]}).status_code == 204
    assert counts(mine)["system"] == 0


@pytest.mark.parametrize(
    ("method", "path", "body", "params"),
    [
        ("GET", "/v1/notifications", None, {"types": "like,bogus"}),
        ("GET", "/v1/notifications", None, {"types": ""}),
        ("POST", "/v1/notifications/read", {}, None),
        ("POST", "/v1/notifications/read", {"types": ["like"], "all": True}, None),
        ("POST", "/v1/notifications/read", {"types": ["total"]}, None),
        ("POST", "/v1/notifications/read", {"types": []}, None),
        ("POST", "/v1/notifications/read", {"all": False}, None),
        ("POST", "/v1/admin/system-notifications", {"title": "", "body": "b"}, None),
        ("POST", "/v1/admin/system-notifications", {"title": "t", "body": "x" * 2001}, None),
        ("POST", "/v1/admin/system-notifications", {"title": "x" * 101, "body": "b"}, None),
        ("POST", "/v1/admin/system-notifications", {"title": "  ", "body": "b"}, None),
    ],
)
def test_bad_input_is_a_400_and_writes_nothing(pair, method, path, body, params):
    _, mine, _, _ = pair
    before = counts(mine)
    answer = mine.request(method, path, json=body, params=params)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == "validation_error"
    assert counts(mine) == before


def test_every_endpoint_needs_a_session(stack):
    with stack.client("not-a-token") as stranger:
        for method, path in [("GET", "/v1/notifications"),
                             ("GET", "/v1/notifications/unread-counts"),
                             ("POST", "/v1/notifications/read"),
                             ("POST", "/v1/admin/system-notifications")]:  # fmt: skip
            answer = stranger.request(method, path, json={"all": True})
            assert answer.status_code == 401, (path, answer.text)
