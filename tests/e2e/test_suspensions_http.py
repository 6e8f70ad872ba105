"""Suspensions over real HTTP and WebSocket against the local runtime (API.md "Reports and
moderation"): who may suspend whom, a suspended user's sockets closed within 5 seconds, their
login refused, their profile, lists and tweets a 404 to others, absent from search, their
tweets gone from a follower's home and a hashtag page within 30 seconds and back after the
lift, with follows and counters intact; messages to them refused."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from tests.e2e.test_graph_http import _error, _eventually, _ok

pytestmark = pytest.mark.e2e

WAIT = 20  # seconds a frame may take on a busy machine
CLOSE_BOUND = 5.0  # API.md: a suspended user's sockets close within 5 seconds
TIMELINE_BOUND = 30.0  # API.md: their tweets leave (and come back to) timelines within 30 s


@pytest.fixture
def admin(stack) -> Iterator[httpx.Client]:
    """The local stack's admin (created by the stack as it starts), logged in."""
    with stack.client() as client:
        logged_in = client.post(
            "/v1/auth/login", json={"login": "warble_admin", "password": "warble-admin-local"}
        )
    token = _ok(logged_in)["token"]
    with stack.client(token) as client:
        yield client


@contextmanager
def socket(stack, token: str) -> Iterator[ClientConnection]:
    with connect(f"{stack.ws}/?token={token}", open_timeout=WAIT) as ws:
        ws.send(json.dumps({"action": "ping"}))
        while json.loads(ws.recv(timeout=WAIT))["type"] != "pong":
            pass  # a pong means $connect registered this connection
        yield ws


def _closed_within(ws: ClientConnection, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            ws.recv(timeout=max(0.05, deadline - time.monotonic()))
        except ConnectionClosed:
            return True
        except TimeoutError:
            return False
    return False


def _suspension(user_id: str) -> str:
    return f"/v1/admin/users/{user_id}/suspension"


def test_only_moderators_suspend_admins_cannot_be_and_unknown_users_are_404(stack, pair, admin):
    _, mine, them, theirs = pair
    _error(mine.put(_suspension(them["id"])), 403, "forbidden")
    _error(mine.delete(_suspension(them["id"])), 403, "forbidden")
    admin_id = _ok(admin.get("/v1/users/me"))["id"]
    _error(admin.put(_suspension(admin_id)), 400, "validation_error")
    _error(admin.put(_suspension("123456789012345")), 404, "not_found")
    _error(admin.delete(_suspension("123456789012345")), 404, "not_found")
    _error(admin.put(_suspension("not-an-id")), 400, "validation_error")
    # nothing was suspended
    assert _ok(theirs.get("/v1/users/me"))["id"] == them["id"]
    assert _ok(admin.get("/v1/users/me"))["id"] == admin_id


def test_a_suspension_and_its_lift_end_to_end(stack, new_user, admin):
    # given: bob follows alice, who tweeted with a hashtag; carol retweeted it
    alice_body, alice_token = new_user("al")
    bob_body, bob_token = new_user("bo")
    carol_body, carol_token = new_user("ca")
    alice, bob = alice_body["user"], bob_body["user"]
    tag = f"s{uuid.uuid4().hex[:8]}"
    with (
        stack.client(alice_token) as as_alice,
        stack.client(bob_token) as as_bob,
        stack.client(carol_token) as as_carol,
    ):
        _ok(as_bob.put(f"/v1/users/me/following/{alice['id']}"))
        _ok(as_bob.put(f"/v1/users/me/following/{carol_body['user']['id']}"))
        tweet = _ok(as_alice.post("/v1/tweets", json={"text": f"hello #{tag}"}), 201)
        _ok(as_carol.post(f"/v1/tweets/{tweet['id']}/retweet"), 201)
        _ok(as_bob.put(f"/v1/tweets/{tweet['id']}/like"))

        def home() -> set[str]:
            return {
                t["retweet_of"]["id"] if t["retweet_of"] else t["id"]
                for t in _ok(as_bob.get("/v1/timeline/home"))["items"]
            }

        def tag_page() -> list[str]:
            return [t["id"] for t in _ok(as_bob.get(f"/v1/hashtags/{tag}/tweets"))["items"]]

        assert _eventually(home, {tweet["id"]}, TIMELINE_BOUND) == {tweet["id"]}
        assert _eventually(tag_page, [tweet["id"]], TIMELINE_BOUND) == [tweet["id"]]
        found = _ok(as_bob.get("/v1/search/users", params={"q": alice["username"]}))["items"]
        assert [u["id"] for u in found] == [alice["id"]]

        # when a moderator suspends alice while her socket is open
        with socket(stack, alice_token) as ws:
            answer = _ok(admin.put(_suspension(alice["id"])))
            answered = time.monotonic()
            assert answer == {"suspended": True}
            # then her socket is closed within 5 seconds
            assert _closed_within(ws, WAIT), "a suspended user's socket stayed open"
            assert time.monotonic() - answered <= CLOSE_BOUND
        # ... her token is refused and her login is 403 account_suspended
        _error(as_alice.get("/v1/users/me"), 401, "unauthorized")
        with stack.client() as anonymous:
            login = {"login": alice["username"], "password": "password1"}
            _error(anonymous.post("/v1/auth/login", json=login), 403, "account_suspended")
        # ... to everyone else she is a 404, and so are her lists and her tweets
        for path in (
            f"/v1/users/{alice['id']}",
            f"/v1/users/by-username/{alice['username']}",
            f"/v1/users/{alice['id']}/tweets",
            f"/v1/users/{alice['id']}/followers",
            f"/v1/users/{alice['id']}/following",
            f"/v1/users/{alice['id']}/friends",
            f"/v1/users/{alice['id']}/likes",
            f"/v1/users/me/mutual-friends/{alice['id']}",
            f"/v1/users/me/degree/{alice['id']}",
            f"/v1/tweets/{tweet['id']}",
            f"/v1/tweets/{tweet['id']}/replies",
        ):
            _error(as_bob.get(path), 404, "not_found")
        _error(as_carol.put(f"/v1/users/me/following/{alice['id']}"), 404, "not_found")
        _error(as_carol.put(f"/v1/tweets/{tweet['id']}/like"), 404, "not_found")
        _error(as_bob.post(f"/v1/tweets/{tweet['id']}/retweet"), 404, "not_found")
        reply = {"text": "hi", "reply_to": tweet["id"]}
        _error(as_bob.post("/v1/tweets", json=reply), 404, "not_found")
        # ... absent from search, and her tweet (and carol's retweet of it) leave bob's home and
        # the hashtag page within 30 seconds
        found = _ok(as_bob.get("/v1/search/users", params={"q": alice["username"]}))["items"]
        assert found == []
        carols = f"/v1/users/{carol_body['user']['id']}/tweets"
        assert _ok(as_bob.get(carols))["items"] == []  # her retweet of alice's tweet went
        assert _eventually(home, set(), TIMELINE_BOUND) == set()
        assert _eventually(tag_page, [], TIMELINE_BOUND) == []
        # ... and a second suspension is the same answer
        assert _ok(admin.put(_suspension(alice["id"]))) == {"suspended": True}
        # bob's export is his as before
        assert _ok(as_bob.get("/v1/users/me/export"))["user"]["id"] == bob["id"]

        # when the suspension is lifted, twice
        assert _ok(admin.delete(_suspension(alice["id"]))) == {"suspended": False}
        assert _ok(admin.delete(_suspension(alice["id"]))) == {"suspended": False}
        # then within 30 seconds everything is back, with follows and counters intact
        assert _eventually(home, {tweet["id"]}, TIMELINE_BOUND) == {tweet["id"]}
        assert _eventually(tag_page, [tweet["id"]], TIMELINE_BOUND) == [tweet["id"]]
        assert len(_ok(as_bob.get(carols))["items"]) == 1
        seen = _ok(as_bob.get(f"/v1/users/{alice['id']}"))
        assert (seen["relationship"], seen["followers_count"]) == ("following", 1)
        back = _ok(as_bob.get(f"/v1/tweets/{tweet['id']}"))
        assert (back["like_count"], back["retweet_count"], back["liked_by_me"]) == (1, 1, True)
        with stack.client() as anonymous:
            login = {"login": alice["username"], "password": "password1"}
            _ok(anonymous.post("/v1/auth/login", json=login))


def test_messages_to_a_suspended_user_are_not_allowed(stack, pair, admin):
    me, mine, them, theirs = pair
    _ok(mine.put(f"/v1/users/me/following/{them['id']}"))
    _ok(theirs.put(f"/v1/users/me/following/{me['id']}"))
    conversation = _ok(mine.post("/v1/conversations", json={"participant_id": them["id"]}), 201)
    messages = f"/v1/conversations/{conversation['id']}/messages"
    _ok(mine.post(messages, json={"text": "hi"}), 201)
    _ok(admin.put(_suspension(them["id"])))
    _error(mine.post(messages, json={"text": "still there?"}), 403, "not_allowed")
    _ok(admin.delete(_suspension(them["id"])))
    _ok(mine.post(messages, json={"text": "welcome back"}), 201)
