"""Local stand-in for an API Gateway WebSocket API and its @connections management API.

The API, its routes, integrations (a Lambda proxy, or MOCK with its integration responses:
`infra/local/ws_mock.py`), route responses, stage and the `$connect` route's Lambda
REQUEST authorizer come from the template's AWS::ApiGatewayV2::* resources. Upgrades run the
authorizer (a missing identity source is refused with 401 without it; `Unauthorized` raised is
401, a Deny 403, anything else 500) and then `$connect` (a non-2xx answer refuses the
handshake); the authorizer's context reaches every later event of the connection as
`requestContext.authorizer`. Frames are routed by the RouteSelectionExpression (a MOCK
route is answered by the gateway alone, from its templates, with no invocation), closes run
`$disconnect`, and `POST|GET|DELETE /<stage>/@connections/{id}` works through boto3's
`apigatewaymanagementapi` (DELETE: 204, the socket closed with 1000, `$disconnect` told
"Connection Closed Normally"; 410 GoneException for a connection that is not open).

A restart, for tests and ``make chaos`` (issue 40, fault 7): ``POST /_warble/restart``
(``{"down_seconds": 2}``, at most 60; 202 at once) closes every connection with 1001 "Going away"
(each gets its ``$disconnect``), stops listening, and listens again on the same port once the
time is over, as a gateway's fleet replaced under its clients: they connect again, with new
connection ids, and read what they missed over HTTP.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import fnmatch
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

from aiohttp import WSMsgType, web

from infra.local.events import (
    WebSocketConnection,
    aws_id,
    trace_id,
    websocket_authorizer_event,
    websocket_connect_event,
    websocket_disconnect_event,
    websocket_message_event,
)
from infra.local.lambdas import InvokeResult, LambdaRuntime
from infra.local.quotas import PARSER_LIMITS, over_quota
from infra.local.template import ResolveContext, Template
from infra.local.ws_mock import MockAnswer, mock_answer

__all__ = [
    "WebSocketApiSpec",
    "WebSocketGateway",
    "WsAuthorizer",
    "WsRoute",
    "authorizer_decision",
    "load_websocket_api",
    "policy_allows",
]

log = logging.getLogger("infra.local.ws")

MAX_FRAME_BYTES = 128 * 1024  # WebSocket API message payload quota (also PostToConnection's)
# API Gateway closes a connection that sends a larger message with 1009 (its quotas page: "If a
# larger message ... is received, the connection is closed with code 1009").
TOO_BIG = (1009, "Message too big")
# What aiohttp reads at most before it gives up on a message itself (also with 1009): enough
# to see that a message is over the quota and answer as API Gateway does, never unbounded.
_READ_LIMIT = 4 * MAX_FRAME_BYTES
DEFAULT_ROUTE = "$default"
CONNECT_ROUTE = "$connect"
DISCONNECT_ROUTE = "$disconnect"
RESTART_PATH = "/_warble/restart"


# --------------------------------------------------------------------------------------------
# What the template says
# --------------------------------------------------------------------------------------------


@dataclass
class WsAuthorizer:
    """An AWS::ApiGatewayV2::Authorizer of type REQUEST (only `$connect` may have one)."""

    name: str
    function: str
    query_strings: tuple[str, ...] = ()  # route.request.querystring.<name>
    headers: tuple[str, ...] = ()  # route.request.header.<name>


@dataclass
class WsRoute:
    """One AWS::ApiGatewayV2::Route of the WebSocket API."""

    key: str
    function: str | None  # None: no Lambda integration (a MOCK one, or none: an error answers)
    two_way: bool = False  # has an AWS::ApiGatewayV2::RouteResponse: the answer's body is sent
    authorizer: WsAuthorizer | None = None
    mock: MockAnswer | None = None  # a MOCK integration's answer, computed from the template


@dataclass
class WebSocketApiSpec:
    """The WebSocket API: id, stage, route selection and routes by key."""

    logical_id: str
    api_id: str
    stage: str
    route_selection_expression: str
    routes: dict[str, WsRoute] = field(default_factory=dict)


def _ref_target(value: Any) -> str | None:
    if isinstance(value, dict) and "Ref" in value:
        return str(value["Ref"])
    return value if isinstance(value, str) else None


def load_websocket_api(template: Template, context: ResolveContext) -> WebSocketApiSpec | None:
    """The template's WebSocket API (the first one if several), or None when there is none."""
    api_id = next(
        (
            logical_id
            for logical_id, resource in template.resources.items()
            if resource.get("Type") == "AWS::ApiGatewayV2::Api"
            and (resource.get("Properties") or {}).get("ProtocolType") == "WEBSOCKET"
        ),
        None,
    )
    if api_id is None:
        return None
    props = template.resources[api_id].get("Properties") or {}

    def belongs(resource: dict[str, Any]) -> bool:
        return _ref_target((resource.get("Properties") or {}).get("ApiId")) == api_id

    of_type = {
        rtype: {
            logical_id: resource
            for logical_id, resource in template.resources.items()
            if resource.get("Type") == rtype and belongs(resource)
        }
        for rtype in (
            "AWS::ApiGatewayV2::Route",
            "AWS::ApiGatewayV2::Integration",
            "AWS::ApiGatewayV2::IntegrationResponse",
            "AWS::ApiGatewayV2::RouteResponse",
            "AWS::ApiGatewayV2::Stage",
            "AWS::ApiGatewayV2::Authorizer",
        )
    }
    integrations: dict[str, str | None] = {}
    mocks: dict[str, MockAnswer] = {}
    for logical_id, resource in of_type["AWS::ApiGatewayV2::Integration"].items():
        if (resource.get("Properties") or {}).get("IntegrationType") == "MOCK":
            mocks[logical_id] = mock_answer(
                resource["Properties"],
                (
                    response.get("Properties") or {}
                    for response in of_type["AWS::ApiGatewayV2::IntegrationResponse"].values()
                    if _ref_target((response.get("Properties") or {}).get("IntegrationId"))
                    == logical_id
                ),
            )
            continue
        uri = (resource.get("Properties") or {}).get("IntegrationUri")
        function = template.function_id_for(uri)
        if function is None and uri is not None:
            function = template.function_id_for(template.resolve(uri, context), context)
        integrations[logical_id] = function
    two_way = {
        _ref_target((resource.get("Properties") or {}).get("RouteId"))
        for resource in of_type["AWS::ApiGatewayV2::RouteResponse"].values()
    }
    authorizers = {
        logical_id: _authorizer(template, logical_id, resource, context)
        for logical_id, resource in of_type["AWS::ApiGatewayV2::Authorizer"].items()
    }
    spec = WebSocketApiSpec(
        logical_id=api_id,
        api_id=str(template.resolve({"Ref": api_id}, context)),
        stage=_stage_name(template, of_type["AWS::ApiGatewayV2::Stage"], context),
        route_selection_expression=str(
            props.get("RouteSelectionExpression", "$request.body.action")
        ),
    )
    for logical_id, resource in of_type["AWS::ApiGatewayV2::Route"].items():
        route_props = resource.get("Properties") or {}
        key = str(template.resolve(route_props.get("RouteKey"), context))
        target = template.resolve(route_props.get("Target"), context)
        function, mock = None, None
        if isinstance(target, str) and target.startswith("integrations/"):
            integration = target.split("/", 1)[1]
            # The Ref of an integration is its id; locally that is its logical id.
            function, mock = integrations.get(integration), mocks.get(integration)
        if function is None and mock is None:
            log.warning("WebSocket route %s has no Lambda integration locally", key)
        authorizer = None
        if route_props.get("AuthorizationType") == "CUSTOM":
            authorizer = authorizers[str(_ref_target(route_props.get("AuthorizerId")))]
        spec.routes[key] = WsRoute(
            key=key,
            function=function,
            two_way=logical_id in two_way,
            authorizer=authorizer,
            mock=mock,
        )
    return spec


def _authorizer(
    template: Template, logical_id: str, resource: dict[str, Any], context: ResolveContext
) -> WsAuthorizer:
    props = resource.get("Properties") or {}
    uri = props.get("AuthorizerUri")
    function = template.function_id_for(uri) or template.function_id_for(
        template.resolve(uri, context), context
    )
    if function is None:
        raise ValueError(f"{logical_id}: AuthorizerUri is not a function of the template")
    queries: list[str] = []
    headers: list[str] = []
    for source in props.get("IdentitySource") or []:
        where, _, name = str(source).rpartition(".")
        (queries if where == "route.request.querystring" else headers).append(name)
    return WsAuthorizer(
        str(props.get("Name", logical_id)), function, tuple(queries), tuple(headers)
    )


def _stage_name(
    template: Template, stages: dict[str, dict[str, Any]], context: ResolveContext
) -> str:
    for resource in stages.values():
        name = (resource.get("Properties") or {}).get("StageName")
        if name is not None:
            return str(template.resolve(name, context))
    return "local"


def select_route(spec: WebSocketApiSpec, body: str | bytes) -> str:
    """The route key for a frame by the RouteSelectionExpression ($default when nothing fits)."""
    expression = spec.route_selection_expression
    prefix = "$request.body."
    if isinstance(body, bytes) or not expression.startswith(prefix):
        return DEFAULT_ROUTE
    try:
        value: Any = json.loads(body)
    except (ValueError, RecursionError):  # deep nesting: the handler answers it
        return DEFAULT_ROUTE
    for part in expression[len(prefix) :].split("."):
        if not isinstance(value, dict) or part not in value:
            return DEFAULT_ROUTE
        value = value[part]
    if isinstance(value, str) and value in spec.routes and not value.startswith("$"):
        return value
    return DEFAULT_ROUTE


# --------------------------------------------------------------------------------------------
# The gateway
# --------------------------------------------------------------------------------------------


@dataclass
class _Connection:
    info: WebSocketConnection
    socket: web.WebSocketResponse
    last_active_ms: int
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    # Set when the server ends the connection (DELETE @connections, shutdown).
    server_close: tuple[int, str] | None = None


# What API Gateway tells $disconnect when DeleteConnection closed the connection.
DELETED = (1000, "Connection Closed Normally")


def _size(data: str | bytes) -> int:
    return len(data.encode("utf-8")) if isinstance(data, str) else len(data)


def _iso(epoch_ms: int) -> str:
    moment = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _now_ms() -> int:
    return int(time.time() * 1000)


class WebSocketGateway:
    """An aiohttp server answering like an API Gateway WebSocket API (and its @connections)."""

    def __init__(
        self,
        template: Template,
        runtime: LambdaRuntime,
        context: ResolveContext,
        host: str = "127.0.0.1",
        port: int = 3001,
    ) -> None:
        self.template = template
        self.runtime = runtime
        self.context = context
        self.host = host
        self.port = port
        self.spec = load_websocket_api(template, context)
        self.connections: dict[str, _Connection] = {}
        self._disconnects: set[asyncio.Task[None]] = set()
        self._runner: web.AppRunner | None = None
        self._restarts: set[asyncio.Task[None]] = set()
        self.app = self._application()

    def _application(self) -> web.Application:
        app = web.Application(client_max_size=MAX_FRAME_BYTES + 1)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        return app

    @property
    def stage(self) -> str:
        return self.spec.stage if self.spec else "local"

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    @property
    def callback_url(self) -> str:
        """What WEBSOCKET_CALLBACK_URL is locally (the @connections endpoint of the stage)."""
        return f"http://{self.host}:{self.port}/{self.stage}"

    async def start(self) -> None:
        self._runner = web.AppRunner(
            self.app, access_log=None, handle_signals=False, **PARSER_LIMITS
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, reuse_address=True)
        await site.start()
        for address in self._runner.addresses:
            if isinstance(address, tuple) and len(address) >= 2:
                self.port = int(address[1])
                break
        routes = sorted(self.spec.routes) if self.spec else []
        log.info("WebSocket API listening on %s (routes %s)", self.url, ", ".join(routes))

    async def stop(self) -> None:
        """Close every connection (each one gets its $disconnect), then stop listening (and
        stay stopped: a restart under way is called off)."""
        for task in self._restarts:
            if task is not asyncio.current_task():
                task.cancel()
        for connection in list(self.connections.values()):
            connection.server_close = (1001, "Going away")
            with contextlib.suppress(ConnectionError, RuntimeError, asyncio.TimeoutError):
                await connection.socket.close(code=1001, message=b"Going away")
        # Each connection's handler schedules its $disconnect as it winds down.
        deadline = time.monotonic() + 5
        while self.connections and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        if self._disconnects:
            await asyncio.wait(self._disconnects, timeout=10)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def restart(self, down_seconds: float) -> None:
        """Every connection closed (1001), nothing listening for ``down_seconds``, then the
        same port again (an application is served once: a new one)."""
        log.info("WebSocket API restarting: down for %.1f s", down_seconds)
        await self.stop()
        await asyncio.sleep(down_seconds)
        self.app = self._application()
        await self.start()

    async def _restart_asked(self, request: web.Request) -> web.Response:
        try:
            given = json.loads(await request.read() or b"{}")
            down = float(given.get("down_seconds", 1.0))
        except (ValueError, TypeError, AttributeError):
            return _json(400, {"message": 'the body must be {"down_seconds": <0 to 60>}'})
        if not 0 <= down <= 60:
            return _json(400, {"message": "down_seconds must be from 0 to 60"})
        # After this answer has left: stopping waits for the requests being answered.
        asyncio.get_running_loop().call_later(0.05, self._spawn_restart, down)
        return _json(202, {"down_seconds": down})

    def _spawn_restart(self, down: float) -> None:
        task = asyncio.ensure_future(self.restart(down))
        self._restarts.add(task)
        task.add_done_callback(self._restarts.discard)

    # ---------------------------------------------------------------- dispatch

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.rel_url.path == RESTART_PATH:
            if request.method != "POST":
                return _json(405, {"message": "Method Not Allowed"}, {"allow": "POST"})
            return await self._restart_asked(request)
        parts = [unquote(p) for p in request.rel_url.raw_path.split("/") if p]
        if "@connections" in parts:
            index = parts.index("@connections")
            if index <= 1 and len(parts) == index + 2:
                return await self._management(request, parts[index + 1])
            return _json(404, {"message": "Not Found"})
        if request.method == "GET" and request.headers.get("upgrade", "").lower() == "websocket":
            return over_quota(request) or await self._websocket(request)
        return _json(426, {"message": "Upgrade Required"}, {"upgrade": "websocket"})

    # ---------------------------------------------------------------- @connections

    async def _management(self, request: web.Request, connection_id: str) -> web.Response:
        connection = self.connections.get(connection_id)
        if request.method not in ("POST", "GET", "DELETE"):
            return _json(404, {"message": "Not Found"})
        if connection is None or connection.socket.closed:
            return _json(410, {"message": None}, {"x-amzn-errortype": "GoneException"})
        if request.method == "GET":
            info = connection.info
            return _json(
                200,
                {
                    "connectedAt": _iso(info.connected_at_ms),
                    "identity": {"sourceIp": info.source_ip, "userAgent": info.user_agent or ""},
                    "lastActiveAt": _iso(connection.last_active_ms),
                },
            )
        if request.method == "DELETE":
            connection.server_close = DELETED
            await connection.socket.close(code=DELETED[0])
            return web.Response(status=204)
        try:
            data = await request.read()
        except web.HTTPRequestEntityTooLarge:
            data = b"x" * (MAX_FRAME_BYTES + 1)
        if len(data) > MAX_FRAME_BYTES:
            return _json(
                413,
                {"message": "Message too long"},
                {"x-amzn-errortype": "PayloadTooLargeException"},
            )
        try:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                await connection.socket.send_bytes(data)
            else:
                await connection.socket.send_str(text)
        except (ConnectionError, RuntimeError):
            # Closed between the lookup and the write: gone, as API Gateway would say.
            return _json(410, {"message": None}, {"x-amzn-errortype": "GoneException"})
        connection.last_active_ms = _now_ms()
        return web.Response(status=200)

    # ---------------------------------------------------------------- connections

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        spec = self.spec
        if spec is None:
            return _json(404, {"message": "Not Found"})
        info = WebSocketConnection(
            connection_id=self._new_connection_id(),
            api_id=spec.api_id,
            stage=spec.stage,
            domain_name=request.host,
            source_ip=request.remote or "127.0.0.1",
            user_agent=request.headers.get("user-agent"),
            connected_at_ms=_now_ms(),
            headers=list(request.headers.items()) + self._forwarding_headers(request),
            raw_query_string=request.rel_url.raw_query_string,
        )
        protocols: tuple[str, ...] = ()
        connect = spec.routes.get(CONNECT_ROUTE)
        if connect is not None and connect.authorizer is not None:
            refused, info.authorizer = await self._authorize(connect.authorizer, info)
            if refused is not None:
                log.info("WebSocket connect refused by its authorizer with %s", refused)
                return _json(refused, {"message": _REASONS.get(refused, "Forbidden")})
        if connect is not None and connect.function is not None:
            result = await self.runtime.ainvoke(connect.function, websocket_connect_event(info))
            status, protocols = _connect_decision(result.ok, result.payload)
            if not 200 <= status < 300:
                log.info("WebSocket connect refused with %s (%s)", status, info.connection_id)
                return _json(status, {"message": _REASONS.get(status, "Forbidden")})
        socket = web.WebSocketResponse(protocols=protocols, max_msg_size=_READ_LIMIT, autoping=True)
        await socket.prepare(request)
        connection = _Connection(info=info, socket=socket, last_active_ms=_now_ms())
        self.connections[info.connection_id] = connection
        log.info("WebSocket connected %s", info.connection_id)
        try:
            async for message in socket:
                connection.last_active_ms = _now_ms()
                if message.type == WSMsgType.TEXT or message.type == WSMsgType.BINARY:
                    if _size(message.data) > MAX_FRAME_BYTES:
                        connection.server_close = TOO_BIG
                        await socket.close(code=TOO_BIG[0], message=TOO_BIG[1].encode())
                        break
                    self._spawn(connection, message.data)
                elif message.type == WSMsgType.ERROR:
                    if getattr(message.data, "code", None) == TOO_BIG[0]:
                        connection.server_close = TOO_BIG  # aiohttp refused it unread
                    break
        finally:
            self.connections.pop(info.connection_id, None)
            code, reason = self._close_reason(connection)
            task = asyncio.ensure_future(self._disconnect(connection, code, reason))
            self._disconnects.add(task)
            task.add_done_callback(self._disconnects.discard)
        return socket

    async def _authorize(
        self, authorizer: WsAuthorizer, info: WebSocketConnection
    ) -> tuple[int | None, dict[str, Any] | None]:
        """(status refusing the handshake, or None; requestContext.authorizer when allowed)."""
        query = dict(_query_pairs(info.raw_query_string))
        headers = {name.lower(): value for name, value in info.headers}
        if any(not query.get(name) for name in authorizer.query_strings) or any(
            not headers.get(name.lower()) for name in authorizer.headers
        ):
            return 401, None  # a missing identity source: refused without calling it (AWS)
        event = websocket_authorizer_event(info, self.context.region, self.context.account_id)
        started = time.monotonic()
        result = await self.runtime.ainvoke(authorizer.function, event)
        latency_ms = int((time.monotonic() - started) * 1000)
        return authorizer_decision(result, event["methodArn"], latency_ms)

    def _close_reason(self, connection: _Connection) -> tuple[int, str]:
        if connection.server_close is not None:
            return connection.server_close
        code = connection.socket.close_code
        if code is None or code == 1006:
            return 1006, "Connection was closed abnormally"
        if code == 1005:
            return 1005, "Client-side close frame status not set"
        return int(code), f"Client-side close frame status code {code}"

    async def _disconnect(self, connection: _Connection, code: int, reason: str) -> None:
        # Frames still being handled finish first, as their invocations are already running.
        if connection.tasks:
            await asyncio.wait(connection.tasks, timeout=30)
        route = self.spec.routes.get(DISCONNECT_ROUTE) if self.spec else None
        log.info("WebSocket disconnected %s (%s)", connection.info.connection_id, code)
        if route is None or route.function is None:
            return
        event = websocket_disconnect_event(connection.info, code, reason)
        result = await self.runtime.ainvoke(route.function, event)
        if not result.ok:
            log.warning("$disconnect failed: %s", result.error)

    def _spawn(self, connection: _Connection, body: str | bytes) -> None:
        # Like API Gateway, each frame is its own invocation: a slow one does not hold up others.
        task = asyncio.ensure_future(self._message(connection, body))
        connection.tasks.add(task)
        task.add_done_callback(connection.tasks.discard)

    async def _message(self, connection: _Connection, body: str | bytes) -> None:
        assert self.spec is not None
        key = select_route(self.spec, body)
        route = self.spec.routes.get(key)
        request_id = aws_id()
        if route is not None and route.mock is not None:
            await self._answer_mock(connection, route, route.mock, request_id)
            return
        if route is None or route.function is None:
            await self._send_error(connection, "Forbidden", request_id)
            return
        event = websocket_message_event(connection.info, key, body)
        result = await self.runtime.ainvoke(route.function, event)
        if not result.ok:
            await self._send_error(connection, "Internal server error", request_id)
            return
        if not route.two_way:
            return
        payload = result.payload
        answer = payload.get("body") if isinstance(payload, dict) else None
        if answer is None or connection.socket.closed:
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            if isinstance(payload, dict) and payload.get("isBase64Encoded"):
                await connection.socket.send_bytes(base64.b64decode(str(answer)))
            else:
                await connection.socket.send_str(
                    answer if isinstance(answer, str) else json.dumps(answer)
                )

    async def _answer_mock(
        self, connection: _Connection, route: WsRoute, answer: MockAnswer, request_id: str
    ) -> None:
        """A MOCK route: no backend. API Gateway answers with the integration response's
        template on a two-way route, says nothing on a one-way one, and reports a status no
        integration response matches as its own error."""
        if not answer.matched:
            await self._send_error(connection, "Internal server error", request_id)
            return
        if not route.two_way or answer.body is None or connection.socket.closed:
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            await connection.socket.send_str(answer.body)

    async def _send_error(self, connection: _Connection, message: str, request_id: str) -> None:
        if connection.socket.closed:
            return
        error = {
            "message": message,
            "connectionId": connection.info.connection_id,
            "requestId": request_id,
        }
        with contextlib.suppress(ConnectionError, RuntimeError):
            await connection.socket.send_str(json.dumps(error))

    def _new_connection_id(self) -> str:
        while True:
            connection_id = aws_id()
            if connection_id not in self.connections:
                return connection_id

    def _forwarding_headers(self, request: web.Request) -> list[tuple[str, str]]:
        # What API Gateway adds to the upgrade request's headers (names as it writes them).
        added = [
            ("X-Amzn-Trace-Id", trace_id()),
            ("X-Forwarded-For", request.remote or "127.0.0.1"),
            ("X-Forwarded-Port", str(self.port)),
            ("X-Forwarded-Proto", request.scheme),
        ]
        present = {name.lower() for name in request.headers}
        return [(name, value) for name, value in added if name.lower() not in present]


_REASONS = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal server error",
}


def _query_pairs(raw_query_string: str) -> list[tuple[str, str]]:
    from urllib.parse import parse_qsl

    return parse_qsl(raw_query_string, keep_blank_values=True)


def policy_allows(policy: Mapping[str, Any], arn: str) -> bool:
    """Whether an authorizer's IAM policy lets ``execute-api:Invoke`` reach ``arn`` (a Deny
    that matches wins, as IAM has it)."""
    statements = policy.get("Statement") or []
    if isinstance(statements, dict):
        statements = [statements]
    allowed = False
    for statement in statements:
        actions = statement.get("Action") or []
        resources = statement.get("Resource") or []
        actions = [actions] if isinstance(actions, str) else actions
        resources = [resources] if isinstance(resources, str) else resources
        action_ok = any(fnmatch.fnmatchcase("execute-api:Invoke", a) for a in actions)
        resource_ok = any(fnmatch.fnmatchcase(arn, r) for r in resources)
        if action_ok and resource_ok:
            if statement.get("Effect") == "Deny":
                return False
            if statement.get("Effect") == "Allow":
                allowed = True
    return allowed


def authorizer_decision(
    result: InvokeResult, method_arn: str, latency_ms: int
) -> tuple[int | None, dict[str, Any] | None]:
    """What API Gateway makes of a WebSocket authorizer's answer: an error whose message is
    "Unauthorized" is 401, any other error or a malformed answer 500, a policy that does not
    allow the $connect ARN 403; allowed, the principal and the context (values stringified,
    as `$context.authorizer.<key>` gives them) for requestContext.authorizer."""
    if not result.ok:
        message = (result.error or {}).get("errorMessage")
        return (401 if message == "Unauthorized" else 500), None
    payload = result.payload
    if not isinstance(payload, dict) or not isinstance(payload.get("policyDocument"), dict):
        return 500, None
    if not policy_allows(payload["policyDocument"], method_arn):
        return 403, None
    context = payload.get("context") or {}
    if not isinstance(context, dict):
        return 500, None
    found: dict[str, Any] = {"principalId": str(payload.get("principalId", ""))}
    for key, value in context.items():
        if isinstance(value, bool):
            found[str(key)] = "true" if value else "false"
        elif isinstance(value, str | int | float):
            found[str(key)] = str(value)
        else:
            return 500, None  # API Gateway takes strings, numbers and booleans only
    found["integrationLatency"] = latency_ms
    return None, found


def _connect_decision(ok: bool, payload: Any) -> tuple[int, tuple[str, ...]]:
    """(status, subprotocols) from the $connect answer: errors refuse with 500."""
    if not ok:
        return 500, ()
    if not isinstance(payload, dict) or "statusCode" not in payload:
        return 200, ()  # no statusCode: API Gateway accepts the connection
    try:
        status = int(payload["statusCode"])
    except (TypeError, ValueError):
        return 500, ()
    headers = {str(k).lower(): str(v) for k, v in (payload.get("headers") or {}).items()}
    protocol = headers.get("sec-websocket-protocol")
    return status, ((protocol,) if protocol else ())


def _json(status: int, payload: Any, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(
        status=status,
        body=json.dumps(payload).encode(),
        headers={"content-type": "application/json", **(headers or {})},
    )
