"""WebSocket routes: the ``$connect`` authorizer (a connect ticket or a token from the query
string), $connect, $disconnect, ping, sendMessage, $default.

A connection belongs to the session its ticket stands for, or its token opened (API.md
"WebSocket"; a ticket keeps the token out of the socket's URL). The authorizer finds
that session and hands it to every later event of the connection (API Gateway passes an
authorizer's context to each route), so each frame is checked against its session, and spends
its user's budget, in one Redis script (``AccountService.session_gate_later``) without reading
the connection registry (sendMessage reads it after: whether pushes can find the connection). A
frame of an ended session is refused and its connection closed.

Frames follow API.md: client ``{"action": ...}``, server ``{"type": ..., "data": {...}}``. A bad
frame (not JSON, unknown action, invalid fields, not a participant) is answered with an
``error`` frame carrying the HTTP API's error code; the connection stays open.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from warble import clock, jsonbody, services
from warble.dal import store_unavailable
from warble.deadline import DeadlineExceeded, answering_within
from warble.domain import rate_limits as rate_limit_rules
from warble.domain.push.ports import ConnectionGone, PushFailed
from warble.errors import RateLimited, Unauthorized, Unavailable, ValidationFailed, WarbleError
from warble.skeleton import entry_point, logger

if TYPE_CHECKING:
    from warble.domain.accounts.answers import Principal
    from warble.domain.accounts.ports import TicketClaim


@dataclasses.dataclass(frozen=True)
class Caller:
    """The session a connection's ticket or token names, as its authorizer found it."""

    user_id: int
    session_id: int
    digest: bytes  # the token's SHA-256, which keys its cached session
    names_user: bool  # a token of the current form (``wbl_<user>_...``)

    def context(self) -> dict[str, Any]:
        """The authorizer's context (API Gateway allows strings, numbers and booleans)."""
        return {
            "user_id": str(self.user_id),
            "session_id": str(self.session_id),
            "session": self.digest.hex(),
            "names_user": self.names_user,
        }


def _caller(event: dict[str, Any]) -> Caller | None:
    found = event.get("requestContext", {}).get("authorizer") or {}
    try:
        return Caller(
            int(found["user_id"]),
            int(found["session_id"]),
            bytes.fromhex(str(found["session"])),
            found.get("names_user") in (True, "true"),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _source_ip(event: dict[str, Any]) -> str:
    """The client's address as API Gateway saw it (its budget of unknown tokens)."""
    return str(event.get("requestContext", {}).get("identity", {}).get("sourceIp", ""))


def _sender(event: dict[str, Any]) -> Any:
    ctx = event["requestContext"]
    return services.container().sender(ctx.get("domainName", ""), ctx.get("stage", ""))


def _reply(event: dict[str, Any], frame: dict[str, Any]) -> None:
    """Answer on the connection the frame came from."""
    try:
        _sender(event).send(event["requestContext"]["connectionId"], frame)
    except ConnectionGone:
        services.container().connections.remove(event["requestContext"]["connectionId"])
    except PushFailed:
        logger.warning("reply not delivered", exc_info=True)


def authorize(event: dict[str, Any]) -> dict[str, Any]:
    """The ``$connect`` route's Lambda REQUEST authorizer: the session of the ``ticket`` query
    parameter (a connect ticket, used up here: ``POST /v1/auth/socket-ticket``) or of the
    ``token`` one (API.md's way, kept for the clients that use it), checked as the HTTP gate
    checks a bearer token and spending its user's budget. Allowed, its context names the session
    for every later event of the connection, whichever way it was named. A ticket, even an
    empty one, is never passed over for a token beside it."""
    from warble.security import token_hash, token_user

    query = event.get("queryStringParameters") or {}
    accounts = services.accounts()
    budget, address = services.rate_limits().per_user, _source_ip(event)
    try:
        batch = accounts.batch()
        claim: TicketClaim | None = None
        if "ticket" in query:  # 401: malformed, unknown, used or expired
            claim = services.tickets().redeem(query["ticket"])
            digest, names_user = claim.token_hash, claim.names_user
            user = claim.user_id if names_user else None
            gate = accounts.session_gate_later(batch, digest, user, budget, address)
        else:
            token = query.get("token", "")
            gate = accounts.gate_later(batch, token, budget, address)  # 401: malformed
            digest, names_user = token_hash(token), token_user(token) is not None
        batch.run()
        who, spent = gate()
        # A ticket stands for the one session that asked for it.
        if claim is not None and (who.user_id, who.session_id) != (
            claim.user_id,
            claim.session_id,
        ):
            raise Unauthorized()
    except WarbleError:
        return _policy("anonymous", "Deny", event["methodArn"])
    if not _within_budget(who, spent):
        return _policy(str(who.user_id), "Deny", event["methodArn"])
    caller = Caller(who.user_id, who.session_id, digest, names_user)
    return _policy(str(who.user_id), "Allow", event["methodArn"], caller.context())


def _within_budget(who: Principal, spent: tuple[bool, int, int] | None) -> bool:
    limits = services.rate_limits()
    verdict = (
        limits.user(who.user_id)
        if spent is None
        else rate_limit_rules.verdict(limits.per_user, *spent)
    )
    return verdict.allowed


def _policy(
    principal: str, effect: str, resource: str, context: dict[str, Any] | None = None
) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "principalId": principal,
        "policyDocument": {
            "Version": "2012-10-17",
            "Statement": [{"Action": "execute-api:Invoke", "Effect": effect, "Resource": resource}],
        },
    }
    if context is not None:
        answer["context"] = context
    return answer


def on_connect(event: dict[str, Any]) -> dict[str, Any]:
    caller = _caller(event)
    if caller is None:
        return {"statusCode": 401, "body": "unauthorized"}
    ctx = event["requestContext"]
    container = services.container()
    container.connections.add(
        caller.user_id,
        ctx["connectionId"],
        int(ctx.get("connectedAt") or clock.epoch_ms()),
        container.settings.websocket_connection_ttl_seconds,
        caller.session_id,
    )
    # A session that ended after the authorizer looked, but before this registration was
    # written, could not find it: looked at again now that it is written, it refuses.
    try:
        services.accounts().require_session(
            caller.digest, caller.user_id if caller.names_user else None, _source_ip(event)
        )
    except WarbleError:
        container.connections.remove(ctx["connectionId"])
        return {"statusCode": 401, "body": "unauthorized"}
    return {"statusCode": 200}


def on_disconnect(event: dict[str, Any]) -> dict[str, Any]:
    services.container().connections.remove(event["requestContext"]["connectionId"])
    return {"statusCode": 200}


def _admitted(event: dict[str, Any], client_id: Any = None) -> Principal | None:
    """The frame's caller, when its session is live and its budget not spent (one script when
    warm). An ended session's connection is told, forgotten and closed; a spent budget is
    answered with ``rate_limited`` and the frame dropped. None: the frame is not to be run."""
    caller = _caller(event)
    accounts = services.accounts()
    limits = services.rate_limits()
    try:
        if caller is None:
            raise Unauthorized()
        batch = accounts.batch()
        gate = accounts.session_gate_later(
            batch,
            caller.digest,
            caller.user_id if caller.names_user else None,
            limits.per_user,
            _source_ip(event),
        )
        batch.run()
        who, spent = gate()
        if who.user_id != caller.user_id or who.session_id != caller.session_id:
            raise Unauthorized()
        verdict = (
            limits.user(who.user_id)
            if spent is None
            else rate_limit_rules.verdict(limits.per_user, *spent)
        )
    except Unauthorized:
        _end_connection(event)
        return None
    except RateLimited as refused_lookup:  # the address's budget of unknown tokens
        _reply(event, _error_frame(refused_lookup, client_id))
        return None
    except store_unavailable():
        logger.warning("store unavailable", exc_info=True)
        _reply(event, _error_frame(Unavailable(), client_id))
        return None
    if not verdict.allowed:
        refused = RateLimited(verdict.retry_after, "Too many requests; try again later.")
        _reply(event, _error_frame(refused, client_id))
        return None
    return who


def _end_connection(event: dict[str, Any]) -> None:
    """A frame of a session that has ended: say so, forget the connection, close it."""
    connection_id = event["requestContext"]["connectionId"]
    _reply(event, _error_frame(Unauthorized("This session has ended.")))
    services.container().connections.remove(connection_id)
    try:
        _sender(event).close(connection_id)
    except ConnectionGone:
        pass
    except PushFailed:
        logger.warning("close of an ended session's connection failed", exc_info=True)


def on_ping(event: dict[str, Any]) -> dict[str, Any]:
    """``registered``: whether pushes can find this connection. A client that reads false
    connects again (its registration is gone: a push refused in the handshake's gap, an
    expiry), rather than show itself live while nothing reaches it."""
    if _admitted(event) is not None:
        connection_id = event["requestContext"]["connectionId"]
        registered = services.container().connections.owner(connection_id)
        _reply(event, {"type": "pong", "data": {"registered": registered is not None}})
    return {"statusCode": 200}


def _error_frame(exc: WarbleError, client_id: Any = None) -> dict[str, Any]:
    data: dict[str, Any] = {"code": exc.code, "message": exc.message}
    if isinstance(exc, ValidationFailed) and exc.details:
        data["details"] = [{"field": d.field, "message": d.message} for d in exc.details]
    if isinstance(exc, RateLimited):
        data["retry_after"] = exc.retry_after
    if isinstance(client_id, str):
        data["client_id"] = client_id
    return {"type": "error", "data": data}


def on_default(event: dict[str, Any]) -> dict[str, Any]:
    if _admitted(event) is None:
        return {"statusCode": 200}
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
    except ValidationFailed:
        raw = None
    who = _admitted(event, client_id)
    if who is None:
        return {"statusCode": 200}
    try:
        if raw is None:
            raw = jsonbody.loads(event.get("body") or "")
        frame = SendMessageFrame.model_validate(raw)
        # A connection pushes cannot find (its registration expired or was lost) is told so:
        # the web client connects again and sends the message over HTTP (issue 34).
        if services.container().connections.owner(connection_id) is None:
            raise Unauthorized("This connection is not registered.")
        service = services.conversations()
        sent = service.send(who.user_id, int(frame.conversation_id), frame.text, frame.client_id)
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


def _client_id(event: dict[str, Any]) -> Any:
    try:
        raw = jsonbody.loads(event.get("body") or "")
    except ValidationFailed:
        return None
    return raw.get("client_id") if isinstance(raw, dict) else None


@entry_point("requestContext.requestId")
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if event.get("type") == "REQUEST" and "methodArn" in event:
        return authorize(event)
    route = event.get("requestContext", {}).get("routeKey", "$default")
    try:
        with answering_within(context):
            return ROUTES.get(route, on_default)(event)
    except DeadlineExceeded:
        # A store hung rather than failed (a brownout): the sender is told `unavailable`, as
        # for a store that fails, before the timeout leaves it waiting for an ack that never
        # comes (it sends again with the same client_id: nothing is stored twice). A refused
        # $connect is a 503; the database connection may be mid-query: the next one is new.
        logger.warning("deadline: answered unavailable before the function's timeout")
        services.container().database.close()
        if route == "$connect":
            return {"statusCode": 503}
        if route == "sendMessage":
            _reply(event, _error_frame(Unavailable(), _client_id(event)))
        return {"statusCode": 200}
