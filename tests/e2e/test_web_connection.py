"""Connection honesty in a real browser (headless Chromium, as tests/e2e/test_web_client.py drives
it; issue 47, item 13): the page says Offline as soon as the browser knows, a message written
offline says "Not sent" with Retry, and a message whose acknowledgement a drop swallowed is
reconciled by its client_id once reconnected: shown once, as sent, stored once."""

from __future__ import annotations

import re
import time

import httpx
import pytest

from tests.e2e.test_conversations_ws import registrations
from tests.e2e.test_web_client import (  # noqa: F401  fixtures
    SETTLE_MS,
    api_user,
    browser,
    person,
    settled,
    shots,
    track_requests,
)

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("browser")]


def _friends_in_a_conversation(stack, new_user) -> tuple[dict, dict, str, str]:
    a, a_token = api_user(stack, new_user, "amy", "Amy Pond")
    b, b_token = api_user(stack, new_user, "rory", "Rory Williams")
    with stack.client(a_token) as amy_api, stack.client(b_token) as rory_api:
        amy_api.put(f"/v1/users/me/following/{b['id']}").raise_for_status()
        rory_api.put(f"/v1/users/me/following/{a['id']}").raise_for_status()
        conversation = amy_api.post("/v1/conversations", json={"participant_id": b["id"]}).json()
    return a, b, conversation["id"], b_token


def _live_in(who, username: str, conversation: str):
    """``who`` logged in as ``username``, on the conversation's page, live: its message box."""
    who.log_in(username)
    who.page.get_by_role("heading", name="Home").wait_for()
    who.go(f"messages/{conversation}")
    box = who.page.get_by_test_id("message-box")
    box.get_by_text("This is the start of your conversation.").wait_for()
    who.live().filter(has_text="Live").wait_for(timeout=SETTLE_MS)
    return box


def _stored_texts(stack, token: str, conversation: str, expected: int = 1) -> list[str]:
    """The conversation's texts as the other side reads them, once ``expected`` are there (or
    after 10 s): the page shows a message as sent on its acknowledgement, and the other side's
    read may come a moment before the history it reads has it."""
    deadline = time.monotonic() + 10
    while True:
        with stack.client(token) as client:
            page = client.get(f"/v1/conversations/{conversation}/messages").json()
        texts = [m["text"] for m in page["items"]]
        if len(texts) >= expected or time.monotonic() > deadline:
            return texts
        time.sleep(0.1)


def test_offline_is_shown_at_once_and_a_message_written_offline_offers_retry(
    stack,
    new_user,
    person,  # noqa: F811
    shots,  # noqa: F811
) -> None:
    # given Amy live in a conversation
    a, _, conversation, b_token = _friends_in_a_conversation(stack, new_user)
    amy = person()
    box = _live_in(amy, a["username"], conversation)

    # when the network goes away, then the page says so at once (not at the next heartbeat)
    amy.context.set_offline(True)
    amy.live().filter(has_text="Offline").wait_for(timeout=3_000)
    # and a message written meanwhile says it was not sent, with Retry
    amy.page.get_by_label("Message").fill("Are you getting these?")
    amy.page.get_by_role("button", name="Send").click()
    mine = box.locator(".message.mine", has_text="Are you getting these?")
    mine.filter(has_text="Not sent").wait_for()
    amy.shot(shots, "offline")
    assert amy.accessibility() == []
    assert "Live" not in amy.live().inner_text()

    # when the network is back, it connects again, and Retry sends the message once
    amy.context.set_offline(False)
    amy.live().filter(has_text="Live").wait_for(timeout=SETTLE_MS)
    mine.get_by_role("button", name="Retry").click()
    box.locator(".message.failed").wait_for(state="detached", timeout=SETTLE_MS)
    box.locator(".message.pending").wait_for(state="detached", timeout=SETTLE_MS)
    assert mine.count() == 1
    assert _stored_texts(stack, b_token, conversation) == ["Are you getting these?"]
    assert amy.errors == []


def test_a_message_whose_ack_a_drop_lost_is_reconciled_by_client_id(
    stack,
    new_user,
    person,  # noqa: F811
) -> None:
    # given Amy live in a conversation, her socket through a route that can lose the next
    # acknowledgement and cut the connection right then (the message was stored)
    a, _, conversation, b_token = _friends_in_a_conversation(stack, new_user)
    lose_ack = []
    sockets: list = []

    def through(ws) -> None:
        server = ws.connect_to_server()
        ws.on_message(lambda frame: server.send(frame))

        def to_page(frame) -> None:
            if lose_ack and isinstance(frame, str) and '"message_ack"' in frame:
                lose_ack.clear()
                ws.close()
                return
            ws.send(frame)

        server.on_message(to_page)
        sockets.append(ws)

    amy = person()
    amy.page.route_web_socket(re.compile(r"^ws://"), through)
    box = _live_in(amy, a["username"], conversation)

    # when she sends a message and the connection drops before its acknowledgement arrives
    lose_ack.append(True)
    amy.page.get_by_label("Message").fill("Did this one get through?")
    amy.page.get_by_role("button", name="Send").click()
    amy.live().filter(has_text="Reconnecting").wait_for()
    mine = box.locator(".message.mine", has_text="Did this one get through?")
    assert mine.filter(has_text="Not sent").count() == 0  # it may well have been: not known yet

    # then once reconnected it is shown once, as sent, and stored once
    amy.live().filter(has_text="Live").wait_for(timeout=SETTLE_MS)
    box.locator(".message.pending").wait_for(state="detached", timeout=SETTLE_MS)
    amy.page.wait_for_timeout(1_000)  # the history read again after reconnecting
    assert mine.count() == 1
    assert box.locator(".message.failed").count() == 0
    assert len(sockets) >= 2
    assert _stored_texts(stack, b_token, conversation) == ["Did this one get through?"]
    assert amy.errors == []


def test_pushed_counts_update_the_badges_without_a_poll(
    stack,
    new_user,
    person,  # noqa: F811
) -> None:
    """Issue 41 item 3: the counts trust the pushes. A live tab reads them at its connection and
    then only as a safety net (every 10 minutes); a notification (which carries the counts) and
    a direct message (one more unread) update the badges with no request."""
    # given Amy live on her home page, her page's clock under the test's hand, her counts reads
    # recorded once her page has settled
    a, _, conversation, b_token = _friends_in_a_conversation(stack, new_user)
    amy = person()
    in_flight = track_requests(amy)
    reads: list[str] = []
    answers: list[str] = []  # the frames API Gateway (the local gateway) sent her socket
    amy.page.on(
        "websocket",
        lambda ws: ws.on("framereceived", lambda frame: answers.append(str(frame))),
    )
    amy.page.on(
        "request",
        lambda request: (
            "/v1/notifications/unread-counts" in request.url and reads.append(request.url)
        ),
    )
    amy.page.clock.install()
    amy.log_in(a["username"])
    amy.page.get_by_role("heading", name="Home").wait_for()
    amy.live().filter(has_text="Live").wait_for(timeout=SETTLE_MS)
    settled(amy, in_flight)
    assert reads, "the counts are read at the connection"
    before = len(reads)

    # when nine minutes pass, then her heartbeat is answered by the gateway's template (the
    # timers due in the jump have run) and the counts are not read again
    amy.page.clock.fast_forward("09:00")
    for _ in range(SETTLE_MS // 50):
        if '{"type": "heartbeat", "data": {}}' in answers:
            break
        amy.page.wait_for_timeout(50)
    assert '{"type": "heartbeat", "data": {}}' in answers, answers
    settled(amy, in_flight)
    assert len(reads) == before, reads[before:]
    assert "Live" in amy.live().inner_text()

    # when Rory writes to her and Clara follows her
    _, c_token = api_user(stack, new_user, "clara", "Clara Oswald")
    with stack.client(b_token) as rory_api:
        rory_api.post(
            f"/v1/conversations/{conversation}/messages", json={"text": "Tea?"}
        ).raise_for_status()
    with stack.client(c_token) as clara_api:
        clara_api.put(f"/v1/users/me/following/{a['id']}").raise_for_status()
    # then both badges change from the pushes alone (Rory's follow was her first notification)
    amy.nav_badge("messages").filter(has_text=re.compile("^1$")).wait_for(timeout=SETTLE_MS)
    amy.nav_badge("notifications").filter(has_text=re.compile("^2$")).wait_for(timeout=SETTLE_MS)
    settled(amy, in_flight)
    assert len(reads) == before, reads[before:]
    assert amy.errors == []


def test_after_the_gateway_restarts_the_page_reconnects_and_shows_what_it_missed(
    stack,
    new_user,
    person,  # noqa: F811
) -> None:
    """Issue 40, fault 7: the local WebSocket gateway restarted under the page (every socket
    closed with 1001, nothing listening for a while); the page says Reconnecting, connects
    again with its backoff, and reads the conversation again: the message sent meanwhile,
    which no socket could be pushed, is shown."""
    a, _, conversation, b_token = _friends_in_a_conversation(stack, new_user)
    amy = person()
    box = _live_in(amy, a["username"], conversation)

    # when the gateway restarts, down for 6 s (the page's retries come at about 0.5, 1.5, 3.5,
    # 7.5 s)
    control = stack.ws.replace("ws://", "http://", 1) + "/_warble/restart"
    httpx.post(control, json={"down_seconds": 6}, timeout=10).raise_for_status()
    amy.live().filter(has_text="Reconnecting").wait_for(timeout=SETTLE_MS)
    # and Rory writes while her page has no socket (none registered: no push can reach her)
    with stack.client(b_token) as rory_api:
        sent = rory_api.post(f"/v1/conversations/{conversation}/messages", json={"text": "Back?"})
    assert sent.status_code == 201, sent.text
    assert registrations(stack, a["id"]) == []

    # then the page is live again and shows the message, once
    amy.live().filter(has_text="Live").wait_for(timeout=SETTLE_MS)
    box.locator(".message", has_text="Back?").wait_for(timeout=SETTLE_MS)
    assert box.locator(".message", has_text="Back?").count() == 1
    assert amy.errors == []
