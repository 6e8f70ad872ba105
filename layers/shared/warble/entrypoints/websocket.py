"""WebSocket routes: $connect (token from the query string), $disconnect, ping, $default.

Frames follow API.md: client ``{"action": ...}``, server ``{"type": ..., "data": {...}}``.
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from warble import clock, services
from warble.domain.ports import ConnectionGone, PushFailed
from warble.entrypoints.skeleton import entry_point, logger


def _reply(event: dict[str, Any], frame: dict[str, Any]) -> None:
    """Answer on the connection the frame came from."""
    ctx = event["requestContext"]
    sender = services.container().sender(ctx.get("domainName", ""), ctx.get("stage", ""))
    try:
        sender.send(ctx["connectionId"], frame)
    except ConnectionGone:
        services.container().connections.remove(ctx["connectionId"])
    except PushFailed:
        logger.warning("reply not delivered", exc_info=True)


def on_connect(event: dict[str, Any]) -> dict[str, Any]:
    token = (event.get("queryStringParameters") or {}).get("token", "")
    verdict = services.accounts().authenticate(token) if token else None
    if verdict is None:
        return {"statusCode": 401, "body": "unauthorized"}
    who, _ = verdict
    ctx = event["requestContext"]
    services.container().connections.add(
        who.user_id,
        ctx["connectionId"],
        int(ctx.get("connectedAt") or clock.epoch_ms()),
        services.container().settings.websocket_connection_ttl_seconds,
    )
    return {"statusCode": 200}


def on_disconnect(event: dict[str, Any]) -> dict[str, Any]:
    services.container().connections.remove(event["requestContext"]["connectionId"])
    return {"statusCode": 200}


def on_ping(event: dict[str, Any]) -> dict[str, Any]:
    _reply(event, {"type": "pong", "data": {}})
    return {"statusCode": 200}


def on_default(event: dict[str, Any]) -> dict[str, Any]:
    try:
        action = json.loads(event.get("body") or "{}").get("action")
    except (json.JSONDecodeError, AttributeError):
        action = None
    _reply(
        event,
        {
            "type": "error",
            "data": {"code": "unknown_action", "message": f"Unknown action: {action!r}."},
        },
    )
    return {"statusCode": 200}


ROUTES = {"$connect": on_connect, "$disconnect": on_disconnect, "ping": on_ping}


@entry_point("requestContext.requestId")
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    route = event.get("requestContext", {}).get("routeKey", "$default")
    return ROUTES.get(route, on_default)(event)
