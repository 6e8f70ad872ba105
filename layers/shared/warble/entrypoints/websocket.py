"""WebSocket routes: $connect (token from the query string), $disconnect, ping, sendMessage,
$default.

Frames follow API.md: client ``{"action": ...}``, server ``{"type": ..., "data": {...}}``. A bad
frame (not JSON, unknown action, invalid fields, not a participant) is answered with an
``error`` frame carrying the HTTP API's error code; the connection stays open.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from warble import clock, jsonbody, services
from warble.dal import store_unavailable
from warble.domain.push.ports import ConnectionGone, PushFailed
from warble.errors import Unauthorized, Unavailable, ValidationFailed, WarbleError
from warble.skeleton import entry_point, logger


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
    """``registered``: whether pushes can find this connection. A client that reads false
    connects again (its registration is gone: a push refused in the handshake's gap, an
    expiry), rather than show itself live while nothing reaches it."""
    registered = services.container().connections.owner(event["requestContext"]["connectionId"])
    _reply(event, {"type": "pong", "data": {"registered": registered is not None}})
    return {"statusCode": 200}


def _error_frame(exc: WarbleError, client_id: Any = None) -> dict[str, Any]:
    data: dict[str, Any] = {"code": exc.code, "message": exc.message}
    if isinstance(exc, ValidationFailed) and exc.details:
        data["details"] = [{"field": d.field, "message": d.message} for d in exc.details]
    if isinstance(client_id, str):
        data["client_id"] = client_id
    return {"type": "error", "data": data}


def on_default(event: dict[str, Any]) -> dict[str, Any]:
    try:
        action = jsonbody.loads(event.get("body") or "")
    except ValidationFailed as exc:
        _reply(event, _error_frame(exc))
        return {"statusCode": 200}
    if isinstance(action, dict):
        action = action.get("action")
    _reply(
        event,
        {
            "type": "error",
            "data": {"code": "unknown_action", "message": f"Unknown action: {action!r}."},
        },
    )
    return {"statusCode": 200}


def on_send_message(event: dict[str, Any]) -> dict[str, Any]:
    """Store like ``POST /v1/conversations/{id}/messages``, acknowledge on this connection, then
    push to the recipient's connections and the sender's other ones (not this one: the ack is
    its copy)."""
    from pydantic import ValidationError

    from warble.schemas.conversations import SendMessageFrame

    connection_id = event["requestContext"]["connectionId"]
    client_id: Any = None
    try:
        raw = jsonbody.loads(event.get("body") or "")
        client_id = raw.get("client_id") if isinstance(raw, dict) else None
        frame = SendMessageFrame.model_validate(raw)
        user_id = services.container().connections.owner(connection_id)
        if user_id is None:
            raise Unauthorized("This connection is not registered.")
        service = services.conversations()
        sent = service.send(user_id, int(frame.conversation_id), frame.text, frame.client_id)
    except ValidationError as exc:
        from warble.schemas.errors import validation_details

        details = validation_details(list(exc.errors()))  # type: ignore[arg-type]
        _reply(event, _error_frame(ValidationFailed(details), client_id))
        return {"statusCode": 200}
    except WarbleError as exc:
        _reply(event, _error_frame(exc, client_id))
        return {"statusCode": 200}
    except store_unavailable():
        logger.warning("store unavailable", exc_info=True)
        _reply(event, _error_frame(Unavailable(), client_id))
        return {"statusCode": 200}
    # The message as the HTTP answer writes it (the Message's fields, in order).
    message = dataclasses.asdict(sent.view())
    _reply(event, {"type": "message_ack", "data": {"client_id": client_id, "message": message}})
    service.announce(sent, skip=connection_id)
    return {"statusCode": 200}


ROUTES = {
    "$connect": on_connect,
    "$disconnect": on_disconnect,
    "ping": on_ping,
    "sendMessage": on_send_message,
}


@entry_point("requestContext.requestId")
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    route = event.get("requestContext", {}).get("routeKey", "$default")
    return ROUTES.get(route, on_default)(event)
