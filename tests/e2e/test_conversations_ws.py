"""Direct messages over HTTP and the WebSocket API against the local runtime, with real
WebSocket clients: pushes to every device, offline delivery through history, resends with the
same client_id, a dropped connection forgotten on the next push, error frames, and the 128 KB
frame limit."""

from __future__ import annotations

import json
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

pytestmark = pytest.mark.e2e

WAIT = 20  # seconds a frame may take on a busy machine (never asserted as a speed)


@contextmanager
def device(stack, secret: str, via: str = "token") -> Iterator[ClientConnection]:
    """A connection opened with a token (or, ``via="ticket"``, a connect ticket)."""
    with connect(f"{stack.ws}/?{via}={secret}", open_timeout=WAIT, max_size=None) as ws:
        # A ping answered means $connect registered this connection before we go on. A push
        # already under way may reach the new connection first: a user's other devices get
        # every message, from the moment the push reads the registry.
        ws.send(json.dumps({"action": "ping"}))
        assert frames_until(ws, lambda f: f["type"] != "message")[-1]["type"] == "pong"
        yield ws


def _receive(ws: ClientConnection) -> dict[str, Any]:
    """The next frame but ``notification`` ones: befriending pushes follow notifications to the
    same connections, at a time these tests do not control."""
    while True:
        frame = json.loads(ws.recv(timeout=WAIT))
        if frame.get("type") != "notification":
            return frame


def frames_until(ws: ClientConnection, wanted: Any) -> list[dict[str, Any]]:
    """Every frame up to and including the first one for which ``wanted(frame)`` holds."""
    seen = []
    while True:
        frame = _receive(ws)
        seen.append(frame)
        if wanted(frame):
            return seen


def next_frame(ws: ClientConnection) -> dict[str, Any]:
    return _receive(ws)


def close_of(ws: ClientConnection) -> ConnectionClosed:
    """How the server closed the connection, waiting as long as a frame may take. Frames that
    arrive first are skipped: a push already under way (a befriending's notification) may
    land before the close."""
    deadline = time.monotonic() + WAIT
    while (left := deadline - time.monotonic()) > 0:
        try:
            ws.recv(timeout=left)
        except ConnectionClosed as closed:
            return closed
        except TimeoutError:
            break
    raise AssertionError(f"the connection was still open after {WAIT} s")


def befriend(pair) -> str:
    """Make the pair friends and open their conversation; its id."""
    me, mine, them, theirs = pair
    assert mine.put(f"/v1/users/me/following/{them['id']}").status_code == 200
    assert theirs.put(f"/v1/users/me/following/{me['id']}").status_code == 200
    opened = mine.post("/v1/conversations", json={"participant_id": them["id"]})
    assert opened.status_code == 201, opened.text
    return str(opened.json()["id"])


def send_frame(conversation: str, text: str, client_id: str | None = None) -> str:
    frame: dict[str, Any] = {"action": "sendMessage", "conversation_id": conversation, "text": text}
    if client_id is not None:
        frame["client_id"] = client_id
    return json.dumps(frame)


def _connections_table(stack) -> Any:
    return boto3.resource("dynamodb", endpoint_url=stack.moto, region_name="us-east-1").Table(
        f"{stack.stack_name}-connections"
    )


def registrations(stack, user_id: str) -> list[dict[str, Any]]:
    """The user's connections in the registry (ConnectionsTable, read like the Pusher does)."""
    answer = _connections_table(stack).query(
        KeyConditionExpression="pk = :pk AND begins_with(sk, :conn)",
        ExpressionAttributeValues={":pk": f"USER#{user_id}", ":conn": "CONN#"},
        ConsistentRead=True,
    )
    items: list[dict[str, Any]] = answer["Items"]
    return items


def registered(stack, user_id: str) -> set[str]:
    return {item["connection_id"] for item in registrations(stack, user_id)}


def unregister(stack, user_id: str) -> None:
    """Forget the user's connections in the registry, as a push refused with 410 in the
    handshake's gap did (issue 34): the sockets stay open, and no push finds them."""
    connections = registered(stack, user_id)
    assert connections
    table = _connections_table(stack)
    with table.batch_writer() as items:
        for connection in connections:
            items.delete_item(Key={"pk": f"USER#{user_id}", "sk": f"CONN#{connection}"})
            items.delete_item(Key={"pk": f"CONN#{connection}", "sk": "META"})
    # and from the user's set of connections that a stream batch reads
    of_user = {"pk": f"USER#{user_id}", "sk": "CONNS"}
    entries = table.get_item(Key=of_user, ConsistentRead=True).get("Item", {}).get("conns", set())
    if gone := {entry for entry in entries if entry.split(" ")[0] in connections}:
        table.update_item(
            Key=of_user,
            UpdateExpression="DELETE conns :gone",
            ExpressionAttributeValues={":gone": gone},
        )


def test_a_pong_says_when_the_connection_is_no_longer_registered(stack, pair):
    # given an open connection, registered (issue 34: a push refused in the handshake's gap
    # deleted the registration of a live connection, which then received nothing)
    me, mine, _, _ = pair
    with device(stack, mine.headers["Authorization"][7:]) as ws:
        assert len(registered(stack, me["id"])) == 1
        # when its registration is gone
        unregister(stack, me["id"])
        # then its pong says so, and the client knows to connect again
        ws.send(json.dumps({"action": "ping"}))
        assert frames_until(ws, lambda f: f["type"] == "pong")[-1] == {
            "type": "pong",
            "data": {"registered": False},
        }


# ---- HTTP ---------------------------------------------------------------------------------------
def test_http_conversation_rules(stack, pair, new_user):
    me, mine, them, theirs = pair
    answer = mine.post("/v1/conversations", json={"participant_id": them["id"]})
    assert answer.status_code == 403 and answer.json()["error"]["code"] == "not_allowed"
    conversation = befriend(pair)
    again = theirs.post("/v1/conversations", json={"participant_id": me["id"]})
    assert again.status_code == 200 and again.json()["id"] == conversation
    for body, status in (
        ({"participant_id": me["id"]}, 400),  # oneself
        ({"participant_id": "12"}, 404),  # unknown user
        ({"participant_id": 12}, 400),  # ids are strings
        ({}, 400),
    ):
        answer = mine.post("/v1/conversations", json=body)
        assert answer.status_code == status, answer.text
        assert "code" in answer.json()["error"]
    sent = mine.post(f"/v1/conversations/{conversation}/messages", json={"text": "hello"})
    assert sent.status_code == 201
    message = sent.json()
    assert message["conversation_id"] == conversation and message["sender_id"] == me["id"]
    assert message["created_at"].endswith("Z")
    for text in ("", "   ", "x" * 2001):
        bad = mine.post(f"/v1/conversations/{conversation}/messages", json={"text": text})
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "validation_error"
    _, stranger_token = new_user("str")
    with stack.client(stranger_token) as stranger:
        for answer in (
            stranger.get(f"/v1/conversations/{conversation}/messages"),
            stranger.post(f"/v1/conversations/{conversation}/messages", json={"text": "hi"}),
            stranger.post(f"/v1/conversations/{conversation}/read"),
        ):
            assert answer.status_code == 404, answer.text
        # a malformed id is the client's mistake, by the document's pattern
        assert stranger.get("/v1/conversations/not-an-id/messages").status_code == 400
        assert stranger.get("/v1/conversations").json() == {"items": [], "next_cursor": None}
    listed = theirs.get("/v1/conversations").json()["items"]
    assert [c["id"] for c in listed] == [conversation]
    assert listed[0]["unread_count"] == 1 and listed[0]["last_message"]["text"] == "hello"
    assert {p["id"] for p in listed[0]["participants"]} == {me["id"], them["id"]}
    assert theirs.post(f"/v1/conversations/{conversation}/read").status_code == 204
    assert theirs.get("/v1/conversations").json()["items"][0]["unread_count"] == 0


# ---- WebSocket ------------------------------------------------------------------------------
def test_two_devices_of_one_user_both_receive(stack, pair):
    me, mine, _, theirs = pair
    conversation = befriend(pair)
    with (
        device(stack, mine.headers["Authorization"][7:]) as my_phone,
        device(stack, mine.headers["Authorization"][7:]) as my_laptop,
        device(stack, theirs.headers["Authorization"][7:]) as their_phone,
        device(stack, theirs.headers["Authorization"][7:]) as their_laptop,
    ):
        my_phone.send(send_frame(conversation, "from my phone", client_id="p-1"))
        ack = next_frame(my_phone)
        assert ack["type"] == "message_ack" and ack["data"]["client_id"] == "p-1"
        message = ack["data"]["message"]
        assert message["text"] == "from my phone" and message["sender_id"] == me["id"]
        # the recipient's devices and my other one; not the sending connection (the ack is its)
        for ws in (their_phone, their_laptop, my_laptop):
            assert next_frame(ws) == {"type": "message", "data": message}

        # over HTTP: every connection of both participants gets it
        sent = theirs.post(f"/v1/conversations/{conversation}/messages", json={"text": "http"})
        assert sent.status_code == 201
        for ws in (my_phone, my_laptop, their_phone, their_laptop):
            assert next_frame(ws) == {"type": "message", "data": sent.json()}


def test_offline_recipient_finds_all_30_messages_in_order(stack, pair):
    _, mine, _, theirs = pair
    conversation = befriend(pair)
    with device(stack, mine.headers["Authorization"][7:]) as ws:
        for i in range(30):  # each waits for its ack: the client's order is the stored order
            ws.send(send_frame(conversation, f"in order {i}"))
            assert next_frame(ws)["type"] == "message_ack"
    texts = []
    cursor = None
    while True:
        params = {"limit": 7, **({"cursor": cursor} if cursor else {})}
        page = theirs.get(f"/v1/conversations/{conversation}/messages", params=params).json()
        texts += [m["text"] for m in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert texts == [f"in order {i}" for i in reversed(range(30))]
    listed = theirs.get("/v1/conversations").json()["items"][0]
    assert listed["unread_count"] == 30 and listed["last_message"]["text"] == "in order 29"
    assert theirs.post(f"/v1/conversations/{conversation}/read").status_code == 204
    assert theirs.get("/v1/conversations").json()["items"][0]["unread_count"] == 0


def test_resend_with_the_same_client_id_gets_the_same_message(stack, pair):
    _, mine, _, theirs = pair
    conversation = befriend(pair)
    client_id = uuid.uuid4().hex
    with device(stack, theirs.headers["Authorization"][7:]) as their_ws:
        with device(stack, mine.headers["Authorization"][7:]) as ws:
            ws.send(send_frame(conversation, "did you get this?", client_id))
            first = next_frame(ws)["data"]["message"]
        # the ack was "lost": reconnect and send again
        with device(stack, mine.headers["Authorization"][7:]) as ws:
            ws.send(send_frame(conversation, "did you get this?", client_id))
            # (this device may first get the push of the first send: it is my other connection)
            again = frames_until(ws, lambda f: f["type"] == "message_ack")[-1]
            assert again == {"type": "message_ack", "data": {"client_id": client_id,
                                                             "message": first}}  # fmt: skip
            ws.send(send_frame(conversation, "marker"))
            frames_until(ws, lambda f: f["type"] == "message_ack")
        received = frames_until(their_ws, lambda f: f["data"].get("text") == "marker")
        assert [f["data"]["text"] for f in received] == ["did you get this?", "marker"]
    history = theirs.get(f"/v1/conversations/{conversation}/messages").json()["items"]
    assert [m["text"] for m in history] == ["marker", "did you get this?"]


def test_a_dropped_connection_is_forgotten_on_the_next_push(stack, pair):
    """A client that vanishes without a close frame. On AWS its $disconnect may never come;
    here the local gateway delivers it, so the test puts back the registration that a lost
    $disconnect leaves behind. The next push is refused with 410 for exactly that connection,
    which is forgotten; the live ones keep receiving."""
    _, mine, them, theirs = pair
    conversation = befriend(pair)
    # Being followed pushes them a notification, which would meet the stale registration as
    # well and forget it before the message does: let it go out first.
    _until_counted(theirs, "follow")
    their_token = theirs.headers["Authorization"][7:]
    with device(stack, their_token) as live:
        live_ids = registered(stack, them["id"])
        with device(stack, their_token) as doomed:
            doomed_id = (registered(stack, them["id"]) - live_ids).pop()
            raw: socket.socket = doomed.socket
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            raw.close()  # RST, no close frame
            # the gateway notices: @connections answers 410 for it
            gateway = boto3.client(
                "apigatewaymanagementapi",
                endpoint_url=f"{stack.ws.replace('ws://', 'http://')}/live",
                region_name="us-east-1",
            )
            deadline = time.monotonic() + WAIT
            while time.monotonic() < deadline:
                try:
                    gateway.get_connection(ConnectionId=doomed_id)
                except gateway.exceptions.GoneException:
                    break
                time.sleep(0.1)
            else:
                pytest.fail("the gateway never noticed the dropped connection")
            # the local $disconnect handler runs after that: let it finish, or it would remove
            # the registration put back below
            while doomed_id in registered(stack, them["id"]) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert doomed_id not in registered(stack, them["id"])
        # the registration a lost $disconnect leaves behind
        _register(stack, them["id"], doomed_id)
        assert doomed_id in registered(stack, them["id"])

        sent = mine.post(f"/v1/conversations/{conversation}/messages", json={"text": "still?"})
        assert sent.status_code == 201
        assert next_frame(live) == {"type": "message", "data": sent.json()}
        assert registered(stack, them["id"]) == live_ids  # exactly the refused one went


def _until_counted(client, kind: str) -> None:
    """Wait until a notification of ``kind`` is counted (it is pushed right after)."""
    deadline = time.monotonic() + WAIT
    while client.get("/v1/notifications/unread-counts").json()[kind] < 1:
        assert time.monotonic() < deadline, f"no {kind} notification counted"
        time.sleep(0.05)


def _register(stack, user_id: str, connection_id: str) -> None:
    table = boto3.resource("dynamodb", endpoint_url=stack.moto, region_name="us-east-1").Table(
        f"{stack.stack_name}-connections"
    )
    expires = int(time.time()) + 3600
    for pk, sk in ((f"USER#{user_id}", f"CONN#{connection_id}"), (f"CONN#{connection_id}", "META")):
        table.put_item(
            Item={
                "pk": pk,
                "sk": sk,
                "user_id": user_id,
                "connection_id": connection_id,
                "connected_at": int(time.time() * 1000),
                "expires_at": expires,
            }
        )
    # and the user's set of connections, which stream batches read (warble.dal.connections)
    table.update_item(
        Key={"pk": f"USER#{user_id}", "sk": "CONNS"},
        UpdateExpression="ADD conns :entry",
        ExpressionAttributeValues={":entry": {f"{connection_id} {expires}"}},
    )


def test_bad_frames_get_error_frames_and_the_connection_stays_open(stack, pair, new_user):
    me, mine, _, theirs = pair
    conversation = befriend(pair)
    outsiders = befriend_other(stack, new_user)
    cases = [
        ("not json {", "validation_error", None),
        (json.dumps({"action": "dance"}), "unknown_action", None),
        (json.dumps({"action": "sendMessage", "conversation_id": conversation, "client_id": "a"}),
         "validation_error", "a"),
        (send_frame(conversation, "x" * 2001, "b"), "validation_error", "b"),
        (send_frame(conversation, "   ", "c"), "validation_error", "c"),
        (send_frame("not-an-id", "hi", "d"), "validation_error", "d"),
        (send_frame("123456789", "hi", "e"), "not_found", "e"),
        (send_frame(outsiders, "hi", "f"), "not_found", "f"),  # not a participant
        (json.dumps({"action": "sendMessage", "conversation_id": conversation, "text": "x",
                     "client_id": ""}), "validation_error", ""),
        # nested past the parser's recursion: a 400 frame, not a crashed handler
        ('{"action": "sendMessage", "text": ' + "[" * 10_000 + "]" * 10_000 + "}",
         "validation_error", None),
    ]  # fmt: skip
    with device(stack, mine.headers["Authorization"][7:]) as ws:
        for frame, code, client_id in cases:
            ws.send(frame)
            answer = next_frame(ws)
            assert answer["type"] == "error", (frame, answer)
            assert answer["data"]["code"] == code, (frame, answer)
            assert answer["data"].get("client_id") == client_id, (frame, answer)
            assert answer["data"]["message"]
        # no longer friends: not_allowed, and still open
        assert theirs.delete(f"/v1/users/me/following/{me['id']}").status_code == 200
        ws.send(send_frame(conversation, "are we still friends?", "g"))
        refused = next_frame(ws)
        assert (refused["type"], refused["data"]["code"]) == ("error", "not_allowed")
        assert refused["data"]["client_id"] == "g"
        ws.send(json.dumps({"action": "ping"}))
        assert next_frame(ws) == {"type": "pong", "data": {"registered": True}}
    assert theirs.get(f"/v1/conversations/{conversation}/messages").json()["items"] == []


def befriend_other(stack, new_user) -> str:
    """A conversation between two other users."""
    a, a_token = new_user("oa")
    b, b_token = new_user("ob")
    with stack.client(a_token) as ca, stack.client(b_token) as cb:
        pair = (a["user"], ca, b["user"], cb)
        return befriend(pair)


def test_a_frame_over_128_kb_closes_the_connection_with_1009(stack, pair):
    _, mine, _, theirs = pair
    conversation = befriend(pair)
    with device(stack, mine.headers["Authorization"][7:]) as ws:
        # 128 KB exactly: delivered (and refused by validation: text is at most 2000 characters)
        frame = send_frame(conversation, "", "big")
        at_limit = frame.replace('"text": ""', '"text": "' + "y" * (128 * 1024 - len(frame)) + '"')
        assert len(at_limit.encode()) == 128 * 1024
        ws.send(at_limit)
        answer = next_frame(ws)
        assert (answer["type"], answer["data"]["code"]) == ("error", "validation_error")
        # one byte more: API Gateway closes the connection with 1009
        ws.send(at_limit.replace('"text": "', '"text": "y'))
        closed = close_of(ws)
        assert closed.rcvd is not None
        assert (closed.rcvd.code, closed.rcvd.reason) == (1009, "Message too big")
    assert theirs.get(f"/v1/conversations/{conversation}/messages").json()["items"] == []


def test_connect_without_a_valid_token_is_refused(stack):
    from websockets.exceptions import InvalidStatus

    for url in (f"{stack.ws}/", f"{stack.ws}/?token=nope"):
        with pytest.raises(InvalidStatus) as refused:
            connect(url, open_timeout=WAIT)
        assert refused.value.response.status_code in (401, 403)


# ---- a session's end ends its connections (issue 33, item 1) -------------------------------
def _login(stack, username: str, device_name: str) -> dict[str, Any]:
    with stack.client() as anonymous:
        answer = anonymous.post(
            "/v1/auth/login",
            json={"login": username, "password": "password1", "device": device_name},
        )
    assert answer.status_code == 200, answer.text
    return answer.json()


def closed_by_server(ws: ClientConnection) -> ConnectionClosed:
    """The close of ``ws`` (frames before it are skipped), waited for as long as a frame."""
    deadline = time.monotonic() + WAIT
    while True:
        try:
            ws.recv(timeout=max(0.1, deadline - time.monotonic()))
        except ConnectionClosed as closed:
            return closed
        except TimeoutError:
            pytest.fail("the connection of an ended session is still open")


def test_a_revoked_sessions_socket_is_closed_and_its_token_opens_no_other(stack, pair):
    me, mine, _, theirs = pair
    conversation = befriend(pair)
    stolen = _login(stack, me["username"], "stolen")
    with (
        device(stack, stolen["token"]) as theirs_now,
        device(stack, mine.headers["Authorization"][7:]) as my_ws,
    ):
        # when the first session revokes the second
        assert mine.delete(f"/v1/auth/sessions/{stolen['session_id']}").status_code == 204
        # then the server closes the second session's socket (DeleteConnection: 1000) ...
        closed = closed_by_server(theirs_now)
        assert closed.rcvd is not None and closed.rcvd.code == 1000
        # ... and the first one's keeps its pushes
        sent = theirs.post(f"/v1/conversations/{conversation}/messages", json={"text": "still"})
        assert next_frame(my_ws) == {"type": "message", "data": sent.json()}
    assert stolen["session_id"] not in {i.get("session_id") for i in registrations(stack, me["id"])}
    from websockets.exceptions import InvalidStatus

    with pytest.raises(InvalidStatus):
        connect(f"{stack.ws}/?token={stolen['token']}", open_timeout=WAIT)


def test_logout_closes_the_sessions_sockets(stack, new_user):
    user, token = new_user("out")
    with device(stack, token) as first, device(stack, token) as second:
        with stack.client(token) as client:
            assert client.post("/v1/auth/logout").status_code == 204
        for ws in (first, second):
            assert closed_by_server(ws).rcvd is not None
    assert registered(stack, user["user"]["id"]) == set()


def test_a_frame_of_an_ended_session_is_refused_and_its_connection_closed(stack, pair):
    """A connection that the session's end could not find (its registration names another
    session here): its next frame is checked against its session, refused, and the
    connection closed."""
    me, mine, _, theirs = pair
    conversation = befriend(pair)
    stolen = _login(stack, me["username"], "stolen")
    before = registered(stack, me["id"])
    with device(stack, stolen["token"]) as ws:
        (connection_id,) = registered(stack, me["id"]) - before
        _misattribute(stack, me["id"], connection_id)
        assert mine.delete(f"/v1/auth/sessions/{stolen['session_id']}").status_code == 204
        ws.send(send_frame(conversation, "sent with an ended session", "late"))
        refused = next_frame(ws)
        assert (refused["type"], refused["data"]["code"]) == ("error", "unauthorized")
        closed_by_server(ws)
    assert theirs.get(f"/v1/conversations/{conversation}/messages").json()["items"] == []


def _misattribute(stack, user_id: str, connection_id: str) -> None:
    """The connection's registration names a session that never ends."""
    table = boto3.resource("dynamodb", endpoint_url=stack.moto, region_name="us-east-1").Table(
        f"{stack.stack_name}-connections"
    )
    for key in (
        {"pk": f"USER#{user_id}", "sk": f"CONN#{connection_id}"},
        {"pk": f"CONN#{connection_id}", "sk": "META"},
    ):
        table.update_item(
            Key=key,
            UpdateExpression="SET session_id = :other",
            ExpressionAttributeValues={":other": "1"},
        )
