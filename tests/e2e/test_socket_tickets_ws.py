"""WebSocket connect tickets against the local runtime (issue 47 item 15), with real HTTP and
WebSocket clients: a ticket opens one connection of its session, which gets pushes and closes
when the session ends; a used, expired or forged ticket is refused as a bad token is; the
route wants a session; and neither ticket nor token reaches the stack's log."""

from __future__ import annotations

import time

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.e2e.test_conversations_ws import (
    WAIT,
    befriend,
    closed_by_server,
    device,
    next_frame,
)

pytestmark = pytest.mark.e2e


def ticket_of(client) -> dict:
    answer = client.post("/v1/auth/socket-ticket")
    assert answer.status_code == 201, answer.text
    issued: dict = answer.json()
    assert set(issued) == {"ticket", "expires_at"}
    return issued


def refused(stack, query: str) -> int:
    """The status a connect with this query string is refused with (it must be refused)."""
    with pytest.raises(InvalidStatus) as refusal:
        connect(f"{stack.ws}/?{query}", open_timeout=WAIT)
    status: int = refusal.value.response.status_code
    return status


def test_the_ticket_route_wants_a_session(stack):
    with stack.client() as anonymous:
        answer = anonymous.post("/v1/auth/socket-ticket")
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "unauthorized"
    with stack.client("wbl_1_" + "A" * 43) as forged:
        assert forged.post("/v1/auth/socket-ticket").status_code == 401


def test_a_ticket_opens_one_connection_that_gets_pushes_and_nothing_logs_it(stack, pair):
    _, mine, _, theirs = pair
    conversation = befriend(pair)
    # given a ticket, and one more never used
    issued, unused = ticket_of(mine), ticket_of(mine)
    forged = issued["ticket"][:-2] + ("AA" if not issued["ticket"].endswith("AA") else "BB")
    # when the socket connects with it
    with device(stack, issued["ticket"], via="ticket") as ws:
        # then it is the session's connection: it gets the pushes
        sent = theirs.post(f"/v1/conversations/{conversation}/messages", json={"text": "hi"})
        assert sent.status_code == 201
        assert next_frame(ws) == {"type": "message", "data": sent.json()}
        # and the ticket opens no second one, nor does a forged one
        assert refused(stack, f"ticket={issued['ticket']}") in (401, 403)
        assert refused(stack, f"ticket={forged}") in (401, 403)
        assert refused(stack, "ticket=") in (401, 403)
    # (a ticket past its time: tests/integration/test_socket_tickets.py, with the clock moved
    # on rather than 31 s waited for here)
    # and no line of the stack's log (gateways and functions) holds a ticket or the token
    logged = "".join(stack.output or [])
    assert logged  # (the log was read)
    for secret in (issued["ticket"], forged, unused["ticket"], mine.headers["Authorization"][7:]):
        assert secret not in logged


def test_a_tickets_connection_closes_when_its_session_is_logged_out(stack, new_user):
    _, token = new_user("tk")
    with stack.client(token) as client:
        with device(stack, ticket_of(client)["ticket"], via="ticket") as ws:
            # when the session logs out (which closes its sockets before it answers)
            assert client.post("/v1/auth/logout").status_code == 204
            logged_out = time.monotonic()
            # then the ticket's connection is closed within API.md's 5 seconds
            closed = closed_by_server(ws)
            assert time.monotonic() - logged_out < 5
            assert closed.rcvd is not None and closed.rcvd.code == 1000
        # and the ended session gets no more tickets
        assert client.post("/v1/auth/socket-ticket").status_code == 401


def test_a_ticket_asked_for_before_a_logout_opens_nothing_after_it(stack, new_user):
    _, token = new_user("tk")
    with stack.client(token) as client:
        issued = ticket_of(client)
        assert client.post("/v1/auth/logout").status_code == 204
    assert refused(stack, f"ticket={issued['ticket']}") in (401, 403)
