"""Blocks and mutes over real HTTP (and the WebSocket) against the local runtime: the six
endpoints, the relationships' flags, and each rule a block or a mute enforces.

What the other side sees follows from the streams through the local pollers (API.md: within
5 seconds locally), so those checks wait for it."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.test_graph_http import _error, _eventually, _ok

pytestmark = pytest.mark.e2e


def _flags(client: httpx.Client, other: str) -> dict:
    [item] = _ok(client.get("/v1/users/me/relationships", params={"ids": other}))["items"]
    return item


@pytest.fixture
def trio(stack, new_user):
    users = [new_user("b") for _ in range(3)]
    clients = [stack.client(token) for _, token in users]
    yield [body["user"]["id"] for body, _ in users], clients
    for client in clients:
        client.close()


def test_the_six_endpoints_and_the_relationship_flags(trio):
    (a, b, c), (as_a, as_b, _) = trio
    assert _ok(as_a.put(f"/v1/users/me/blocks/{b}")) == {"blocking": True}
    assert _ok(as_a.put(f"/v1/users/me/blocks/{b}")) == {"blocking": True}
    assert _ok(as_a.put(f"/v1/users/me/blocks/{c}")) == {"blocking": True}
    assert _ok(as_a.put(f"/v1/users/me/mutes/{c}")) == {"muting": True}
    assert _ok(as_a.put(f"/v1/users/me/mutes/{c}")) == {"muting": True}
    listed = _ok(as_a.get("/v1/users/me/blocks"))
    assert [u["id"] for u in listed["items"]] == [c, b] and listed["next_cursor"] is None
    first = _ok(as_a.get("/v1/users/me/blocks", params={"limit": 1}))
    assert [u["id"] for u in first["items"]] == [c]
    rest = _ok(as_a.get("/v1/users/me/blocks", params={"limit": 1, "cursor": first["next_cursor"]}))
    assert [u["id"] for u in rest["items"]] == [b]
    assert [u["id"] for u in _ok(as_a.get("/v1/users/me/mutes"))["items"]] == [c]
    assert _flags(as_a, c) == {
        "user_id": c, "status": "none", "blocking": True, "blocked_by": False, "muting": True,
    }  # fmt: skip
    assert _flags(as_b, a) == {
        "user_id": a, "status": "none", "blocking": False, "blocked_by": True, "muting": False,
    }  # fmt: skip
    assert _ok(as_a.delete(f"/v1/users/me/blocks/{b}")) == {"blocking": False}
    assert _ok(as_a.delete(f"/v1/users/me/blocks/{b}")) == {"blocking": False}
    assert _ok(as_a.delete(f"/v1/users/me/mutes/{c}")) == {"muting": False}
    assert _ok(as_a.delete(f"/v1/users/me/mutes/{c}")) == {"muting": False}
    assert _flags(as_b, a)["blocked_by"] is False
    assert _ok(as_a.get("/v1/users/me/mutes"))["items"] == []


def test_bad_input_writes_nothing(trio):
    (a, _, _), (as_a, _, _) = trio
    for kind in ("blocks", "mutes"):
        _error(as_a.put(f"/v1/users/me/{kind}/{a}"), 400, "validation_error")
        _error(as_a.put(f"/v1/users/me/{kind}/12345"), 404, "not_found")
        _error(as_a.put(f"/v1/users/me/{kind}/x"), 400, "validation_error")
        _error(as_a.get(f"/v1/users/me/{kind}", params={"cursor": "nope"}), 400, "validation_error")
        assert _ok(as_a.get(f"/v1/users/me/{kind}"))["items"] == []


def test_a_block_ends_both_follows_and_refuses_new_ones(trio):
    (a, b, _), (as_a, as_b, _) = trio
    _ok(as_a.put(f"/v1/users/me/following/{b}"))
    assert _ok(as_b.put(f"/v1/users/me/following/{a}")) == {"relationship": "friends"}
    _ok(as_a.put(f"/v1/users/me/blocks/{b}"))
    assert _flags(as_a, b)["status"] == "none" and _flags(as_b, a)["status"] == "none"
    _error(as_a.put(f"/v1/users/me/following/{b}"), 403, "blocked")
    _error(as_b.put(f"/v1/users/me/following/{a}"), 403, "blocked")

    def counts(client: httpx.Client, uid: str) -> tuple[int, int]:
        user = _ok(client.get(f"/v1/users/{uid}"))
        return user["followers_count"], user["following_count"]

    assert _eventually(lambda: counts(as_a, a), (0, 0)) == (0, 0)
    assert _eventually(lambda: counts(as_b, b), (0, 0)) == (0, 0)
    _ok(as_a.delete(f"/v1/users/me/blocks/{b}"))
    assert _flags(as_a, b)["status"] == "none"  # unblocking restores no follow


def test_the_blocked_cannot_engage_with_the_blockers_tweets(trio):
    (_, b, _), (as_a, as_b, _) = trio
    tweet = _ok(as_a.post("/v1/tweets", json={"text": "mine"}), 201)["id"]
    _ok(as_a.put(f"/v1/users/me/blocks/{b}"))
    _error(as_b.put(f"/v1/tweets/{tweet}/like"), 403, "blocked")
    _error(as_b.post(f"/v1/tweets/{tweet}/retweet"), 403, "blocked")
    _error(as_b.post("/v1/tweets", json={"text": "hey", "reply_to": tweet}), 403, "blocked")
    assert _ok(as_a.get(f"/v1/tweets/{tweet}/replies"))["items"] == []
    _ok(as_a.delete(f"/v1/users/me/blocks/{b}"))
    assert _ok(as_b.put(f"/v1/tweets/{tweet}/like")) == {"liked": True}


def test_no_direct_message_crosses_a_block_over_http_or_websocket(stack, pair):
    from tests.e2e.test_conversations_ws import befriend, device, next_frame, send_frame

    me, mine, them, theirs = pair
    conversation = befriend(pair)
    _ok(mine.post(f"/v1/conversations/{conversation}/messages", json={"text": "hi"}), 201)
    _ok(theirs.put(f"/v1/users/me/blocks/{me['id']}"))
    for client in (mine, theirs):
        sent = client.post(f"/v1/conversations/{conversation}/messages", json={"text": "x"})
        _error(sent, 403, "not_allowed")
    _error(mine.post("/v1/conversations", json={"participant_id": them["id"]}), 403, "not_allowed")
    with device(stack, mine.headers["Authorization"][7:]) as ws:
        ws.send(send_frame(conversation, "are you there?", "c-1"))
        refused = next_frame(ws)
        assert refused["type"] == "error"
        assert (refused["data"]["code"], refused["data"]["client_id"]) == ("not_allowed", "c-1")
    history = _ok(theirs.get(f"/v1/conversations/{conversation}/messages"))["items"]
    assert [m["text"] for m in history] == ["hi"]  # the history stays


def test_notifications_discover_and_swipes_leave_the_pair_apart(stack, trio, new_user):
    (a, b, c), (as_a, as_b, as_c) = trio
    names = {uid: _ok(as_a.get(f"/v1/users/{uid}"))["username"] for uid in (a, b, c)}
    _ok(as_a.put(f"/v1/users/me/blocks/{b}"))
    _ok(as_b.post("/v1/tweets", json={"text": f"hello @{names[a]}"}), 201)
    _ok(as_c.post("/v1/tweets", json={"text": f"hello @{names[a]}"}), 201)  # the marker

    def actors() -> list[str]:
        page = _ok(as_a.get("/v1/notifications", params={"types": "mention"}))
        return [n["actor"]["id"] for n in page["items"]]

    assert _eventually(actors, [c], timeout=15) == [c]  # carol's came through, not bob's
    for client, uid in ((as_a, a), (as_b, b), (as_c, c)):
        lat = 48.85 + int(uid) % 7 / 10_000
        located = client.put("/v1/users/me/location", json={"lat": lat, "lon": 2.35})
        assert located.status_code == 204, located.text
    seen_by_a = [u["id"] for u in _ok(as_a.get("/v1/discover"))["items"]]
    seen_by_b = [u["id"] for u in _ok(as_b.get("/v1/discover"))["items"]]
    assert b not in seen_by_a and a not in seen_by_b and c in seen_by_a and c in seen_by_b
    for client, other in ((as_a, b), (as_b, a)):
        swiped = client.post("/v1/discover/swipes", json={"user_id": other, "direction": "right"})
        assert _ok(swiped) == {"matched": False, "conversation_id": None}


def test_home_timelines_and_the_home_count_leave_out_blocked_and_muted_users(trio):
    (a, b, c), (as_a, as_b, as_c) = trio
    for other in (b, c):
        _ok(as_a.put(f"/v1/users/me/following/{other}"))
    _ok(as_b.put(f"/v1/users/me/following/{a}"))
    read = as_a.post("/v1/notifications/read", json={"types": ["home"]})
    assert read.status_code == 204, read.text
    _ok(as_b.post("/v1/tweets", json={"text": "from b"}), 201)
    _ok(as_c.post("/v1/tweets", json={"text": "from c"}), 201)
    _ok(as_a.post("/v1/tweets", json={"text": "from a"}), 201)

    def home(client: httpx.Client) -> list[str]:
        return [t["text"] for t in _ok(client.get("/v1/timeline/home"))["items"]]

    def home_count() -> int:
        return _ok(as_a.get("/v1/notifications/unread-counts"))["home"]

    everything = ["from a", "from c", "from b"]
    assert _eventually(lambda: home(as_a), everything) == everything
    assert _eventually(home_count, 2) == 2
    _ok(as_a.put(f"/v1/users/me/mutes/{c}"))
    assert home(as_a) == ["from a", "from b"]  # at once: the muter's next request
    assert home_count() == 1
    _ok(as_a.put(f"/v1/users/me/blocks/{b}"))
    assert home(as_a) == ["from a"] and home_count() == 0
    assert _eventually(lambda: "from a" in home(as_b), False) is False
    _ok(as_a.delete(f"/v1/users/me/mutes/{c}"))
    assert home(as_a) == ["from a", "from c"] and home_count() == 1
