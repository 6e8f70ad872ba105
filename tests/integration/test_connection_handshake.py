"""A push that reaches a connection between its registration and its handshake (issue 34).

``$connect`` registers a connection before API Gateway has finished the handshake, so a post to
it in that gap is refused with 410 although it is about to be live. Forced here: the local
WebSocket gateway (infra/local/ws_gateway.py, as ``make run`` serves it) runs in this process,
with an invoker that runs the real WebSocketFunction handler in process and, once ``$connect``
has answered but before the gateway completes the handshake, pushes to the user through the
real Pusher. That push meets the 410; the connection must stay registered and receive the next
push once it is live.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from warble import services
from warble.entrypoints.websocket import handler
from websockets.sync.client import connect

from infra.local.lambdas import InvokeResult
from infra.local.template import ResolveContext, load_template
from infra.local.ws_gateway import WebSocketGateway
from tests.conftest import ROOT
from tests.support.lambda_context import Context

pytestmark = pytest.mark.integration

WAIT = 20  # seconds, for a frame on a busy machine


class InProcessInvoker:
    """The gateway's Lambda runtime, in this process: every route and the authorizer run the
    real handler; ``between`` runs after ``$connect`` has answered, before the handshake."""

    def __init__(self, between: Callable[[dict[str, Any]], None]) -> None:
        self.between = between

    async def ainvoke(self, function: str, event: dict[str, Any]) -> InvokeResult:
        payload = await asyncio.to_thread(handler, event, Context())
        context = event.get("requestContext", {})
        if context.get("eventType") == "CONNECT" and event.get("type") != "REQUEST":
            await asyncio.to_thread(self.between, event)
        return InvokeResult(ok=True, payload=payload, error=None, duration_ms=0.0, cold=False)


@pytest.fixture
def gateway(accounts) -> Iterator[tuple[WebSocketGateway, InProcessInvoker]]:
    """The local WebSocket gateway of template.yaml on an ephemeral port, and its invoker; the
    in-process container posts to it."""
    invoker = InProcessInvoker(lambda event: None)
    template = load_template(ROOT / "template.yaml")
    served = WebSocketGateway(template, invoker, ResolveContext(), port=0)  # type: ignore[arg-type]
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(served.start(), loop).result(WAIT)
    saved = os.environ.get("WEBSOCKET_CALLBACK_URL")
    os.environ["WEBSOCKET_CALLBACK_URL"] = served.callback_url
    services.reset()
    try:
        yield served, invoker
    finally:
        asyncio.run_coroutine_threadsafe(served.stop(), loop).result(WAIT)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(WAIT)
        loop.close()
        if saved is not None:
            os.environ["WEBSOCKET_CALLBACK_URL"] = saved
        services.reset()


def test_a_push_between_registration_and_handshake_leaves_the_connection_reachable(gateway):
    served, invoker = gateway
    alice = services.accounts().signup("alice", "alice@example.com", "correct horse", None, "")
    user_id = int(alice.user["id"])
    seen: list[dict[str, Any]] = []
    reports = []

    def push_in_the_gap(event: dict[str, Any]) -> None:
        seen.append(event)
        reports.append(services.container().pusher.push([user_id], {"type": "early"}))

    # given a push to alice that runs after $connect registered her connection and before
    # the gateway has the socket
    invoker.between = push_in_the_gap
    with connect(f"{served.url}/?token={alice.token}", open_timeout=WAIT) as ws:
        connection_id = seen[0]["requestContext"]["connectionId"]
        # then that push was refused as gone (the gateway did not have the socket yet) ...
        assert [report.gone for report in reports] == [[connection_id]]
        # ... and yet the connection stays registered, and the next push reaches it
        assert services.container().connections.for_user(user_id) == [connection_id]
        report = services.container().pusher.push([user_id], {"type": "late", "data": {}})
        assert report.delivered == 1
        assert json.loads(ws.recv(timeout=WAIT)) == {"type": "late", "data": {}}
