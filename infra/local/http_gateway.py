"""Local stand-in for API Gateway HTTP APIs: template routes, CORS, payload 2.0.

Routes come from the template's `HttpApi` function events. Requests are matched the way API
Gateway matches them, turned into payload format 2.0 events, sent to the local Lambda runtime,
and the function's answer is mapped back to HTTP with the 2.0 response rules. The template has
no authorizer (the handlers check the session, warble.http.app), and the start-up check
(infra/local/support.py) refuses one by name.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from aiohttp import web
from multidict import CIMultiDict

from infra.local.events import HttpRequest, http_api_event, trace_id
from infra.local.lambdas import InvokeResult, LambdaRuntime
from infra.local.quotas import PARSER_LIMITS, over_quota
from infra.local.template import ResolveContext, Template, local_api_id, merge_globals

__all__ = [
    "HttpApiSpec",
    "HttpGateway",
    "HttpRoute",
    "load_http_apis",
    "match_route",
]

log = logging.getLogger("infra.local.http")

# API Gateway's own answers, byte for byte the JSON it sends.
NOT_FOUND = (404, {"message": "Not Found"})
INTERNAL_ERROR = (500, {"message": "Internal Server Error"})
SERVICE_UNAVAILABLE = (503, {"message": "Service Unavailable"})
TOO_LARGE = (413, {"message": "Request Entity Too Large"})

MAX_PAYLOAD_BYTES = 10 * 1024 * 1024  # HTTP API payload quota
INTEGRATION_TIMEOUT_SECONDS = 30.0  # HTTP API's maximum integration timeout
# Connection-level headers end at API Gateway's front door; integrations never see them.
_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
}
IMPLICIT_API = "ServerlessHttpApi"  # SAM's API for HttpApi events that name no ApiId
DEFAULT_ROUTE = "$default"


# --------------------------------------------------------------------------------------------
# What the template says
# --------------------------------------------------------------------------------------------


@dataclass
class HttpRoute:
    """One route: a function event of Type HttpApi (or the API's `$default` route)."""

    api: str  # logical id of the HttpApi
    method: str  # upper case, or "ANY"
    path: str  # "/v1/users/{user_id}", or "$default"
    function: str
    event_name: str = ""
    segments: list[tuple[str, str]] = field(default_factory=list)  # (kind, text)

    def __post_init__(self) -> None:
        if self.path != DEFAULT_ROUTE and not self.segments:
            self.segments = _parse_path(self.path)

    @property
    def route_key(self) -> str:
        return DEFAULT_ROUTE if self.path == DEFAULT_ROUTE else f"{self.method} {self.path}"

    @property
    def greedy(self) -> bool:
        return bool(self.segments) and self.segments[-1][0] == "greedy"


@dataclass
class HttpApiSpec:
    """One AWS::Serverless::HttpApi (explicit or SAM's implicit one) and its routes."""

    logical_id: str
    api_id: str
    routes: list[HttpRoute] = field(default_factory=list)
    cors: dict[str, Any] | None = None


def _parse_path(path: str) -> list[tuple[str, str]]:
    segments: list[tuple[str, str]] = []
    for part in path.strip("/").split("/") if path.strip("/") else []:
        if part.startswith("{") and part.endswith("+}"):
            segments.append(("greedy", part[1:-2]))
        elif part.startswith("{") and part.endswith("}"):
            segments.append(("param", part[1:-1]))
        else:
            segments.append(("literal", part))
    return segments


def _api_logical_id(template: Template, api_ref: Any) -> str:
    if api_ref is None:
        return IMPLICIT_API
    if isinstance(api_ref, dict) and "Ref" in api_ref:
        return str(api_ref["Ref"])
    return str(api_ref)


def load_http_apis(template: Template, context: ResolveContext) -> dict[str, HttpApiSpec]:
    """Every HTTP API of the template with its routes, keyed by logical id."""
    global_props = template.globals.get("HttpApi") or {}
    apis: dict[str, HttpApiSpec] = {}

    def api_spec(logical_id: str) -> HttpApiSpec:
        if logical_id in apis:
            return apis[logical_id]
        resource = template.resources.get(logical_id) or {}
        props = merge_globals(global_props, resource.get("Properties") or {})
        spec = HttpApiSpec(
            logical_id=logical_id,
            api_id=_api_id(template, logical_id, context),
            cors=_cors(template.resolve(props.get("CorsConfiguration"), context)),
        )
        apis[logical_id] = spec
        return spec

    for logical_id, resource in template.resources.items():
        if resource.get("Type") == "AWS::Serverless::HttpApi":
            api_spec(logical_id)

    for function_name, function in template.functions.items():
        for event_name, event in function.events.items():
            if event.get("Type") != "HttpApi":
                continue
            props = event.get("Properties") or {}
            api = api_spec(_api_logical_id(template, props.get("ApiId")))
            if str(props.get("PayloadFormatVersion", "2.0")) != "2.0":
                log.warning("%s.%s: only payload format 2.0 is emulated", function_name, event_name)
            path = str(props.get("Path", DEFAULT_ROUTE))
            method = str(props.get("Method", "ANY")).upper()
            if method in ("X-AMAZON-APIGATEWAY-ANY-METHOD", "*"):
                method = "ANY"
            api.routes.append(
                HttpRoute(
                    api=api.logical_id,
                    method=method,
                    path=path,
                    function=function_name,
                    event_name=event_name,
                )
            )
    return apis


def _api_id(template: Template, logical_id: str, context: ResolveContext) -> str:
    if logical_id in template.resources:
        return str(template.resolve({"Ref": logical_id}, context))
    return local_api_id(logical_id, context.stack_name)


def _cors(config: Any) -> dict[str, Any] | None:
    if not config:
        return None
    if config is True:
        return {"AllowOrigins": ["*"], "AllowMethods": ["*"], "AllowHeaders": ["*"]}
    if isinstance(config, str):
        return {"AllowOrigins": [config.strip("'")], "AllowMethods": ["*"], "AllowHeaders": ["*"]}
    return dict(config)


# --------------------------------------------------------------------------------------------
# Route matching
# --------------------------------------------------------------------------------------------


def _match_path(route: HttpRoute, parts: list[str]) -> dict[str, str] | None:
    params: dict[str, str] = {}
    segments = route.segments
    for index, (kind, text) in enumerate(segments):
        if kind == "greedy":
            rest = parts[index:]
            if not rest or not any(rest):
                return None
            params[text] = "/".join(unquote(part) for part in rest)
            return params
        if index >= len(parts):
            return None
        part = parts[index]
        if kind == "literal":
            if unquote(part) != text:
                return None
        else:
            if part == "":
                return None
            params[text] = unquote(part)
    return params if len(parts) == len(segments) else None


def _specificity(route: HttpRoute, method: str) -> tuple[Any, ...]:
    # Literal segments beat variables position by position; any non-greedy route beats a greedy
    # one; among greedy routes the longer literal prefix wins; an exact method beats ANY.
    ranks = [2 if kind == "literal" else 1 for kind, _ in route.segments if kind != "greedy"]
    return (not route.greedy, ranks, route.method == method)


def match_route(
    routes: list[HttpRoute], method: str, raw_path: str
) -> tuple[HttpRoute, dict[str, str]] | None:
    """The route API Gateway would pick for this request, and its path parameters.

    Falls back to the `$default` route; None means API Gateway's own 404.
    """
    method = method.upper()
    stripped = raw_path.split("?", 1)[0]
    parts = stripped[1:].split("/") if stripped.startswith("/") else stripped.split("/")
    if parts == [""]:
        parts = []
    best: tuple[tuple[Any, ...], HttpRoute, dict[str, str]] | None = None
    default: HttpRoute | None = None
    for route in routes:
        if route.path == DEFAULT_ROUTE:
            default = route
            continue
        if route.method not in (method, "ANY"):
            continue
        params = _match_path(route, parts)
        if params is None:
            continue
        key = _specificity(route, method)
        if best is None or key > best[0]:
            best = (key, route, params)
    if best is not None:
        return best[1], best[2]
    if default is not None:
        return default, {}
    return None


# --------------------------------------------------------------------------------------------
# The gateway
# --------------------------------------------------------------------------------------------


class HttpGateway:
    """An aiohttp server answering like API Gateway in front of the template's HTTP APIs."""

    def __init__(
        self,
        template: Template,
        runtime: LambdaRuntime,
        context: ResolveContext,
        host: str = "127.0.0.1",
        port: int = 3000,
    ) -> None:
        self.template = template
        self.runtime = runtime
        self.context = context
        self.host = host
        self.port = port
        self.apis = load_http_apis(template, context)
        self.routes = [route for api in self.apis.values() for route in api.routes]
        self._runner: web.AppRunner | None = None
        self.app = web.Application(client_max_size=MAX_PAYLOAD_BYTES + 1)
        # Every path reaches `_handle`, as every path reaches API Gateway: `(?s)` so a decoded
        # control character (`%0A`) cannot slip past the catch-all into aiohttp's text/plain 404.
        self.app.router.add_route("*", "/{tail:(?s:.*)}", self._handle)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        """Listen (port 0 picks a free port; `self.port` then holds the real one)."""
        self._runner = web.AppRunner(
            self.app,
            access_log=None,
            handle_signals=False,
            **PARSER_LIMITS,
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, reuse_address=True)
        await site.start()
        self.port = _bound_port(self._runner, self.port)
        log.info("HTTP API listening on %s (%d routes)", self.url, len(self.routes))

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # ---------------------------------------------------------------- request handling

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        refused = over_quota(request)
        if refused is not None:
            return refused
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return _gateway_error(TOO_LARGE, "")
        http_request = HttpRequest(
            method=request.method,
            raw_path=request.rel_url.raw_path,
            raw_query_string=request.rel_url.raw_query_string,
            headers=[(k, v) for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP],
            body=body,
            source_ip=request.remote or "127.0.0.1",
            protocol=f"HTTP/{request.version.major}.{request.version.minor}",
            domain_name=request.host,
        )
        http_request.headers.extend(self._forwarding_headers(request, http_request))
        response, target = await self._respond(http_request)
        log.info(
            '%s "%s %s" %s %.1fms -> %s',
            http_request.source_ip,
            request.method,
            request.rel_url,
            response.status,
            (time.perf_counter() - started) * 1000,
            target or "-",
        )
        return response

    def _forwarding_headers(
        self, request: web.Request, http_request: HttpRequest
    ) -> list[tuple[str, str]]:
        # Headers API Gateway adds in front of every integration.
        added = []
        forwarded_for = http_request.header("x-forwarded-for")
        client = http_request.source_ip
        added.append(("x-forwarded-for", f"{forwarded_for}, {client}" if forwarded_for else client))
        if http_request.header("x-forwarded-port") is None:
            added.append(("x-forwarded-port", str(self.port)))
        if http_request.header("x-forwarded-proto") is None:
            added.append(("x-forwarded-proto", request.scheme))
        if http_request.header("x-amzn-trace-id") is None:
            added.append(("x-amzn-trace-id", trace_id()))
        if forwarded_for:
            http_request.headers = [
                (k, v) for k, v in http_request.headers if k.lower() != "x-forwarded-for"
            ]
        return added

    async def _respond(self, request: HttpRequest) -> tuple[web.Response, str | None]:
        rid = request.request_id
        matched = match_route(self.routes, request.method, request.raw_path)
        api = self._api_for(matched[0] if matched else None)
        if api is not None and api.cors and request.method == "OPTIONS":
            preflight = _preflight(api.cors, request)
            if preflight is not None:
                return preflight, None
        if matched is None:
            return _gateway_error(NOT_FOUND, rid), None
        route, path_params = matched
        assert api is not None
        event = http_api_event(
            request,
            route_key=route.route_key,
            api_id=api.api_id,
            account_id=self.context.account_id,
            path_parameters=path_params,
        )
        try:
            result = await asyncio.wait_for(
                self.runtime.ainvoke(route.function, event), INTEGRATION_TIMEOUT_SECONDS
            )
        except TimeoutError:
            return _gateway_error(SERVICE_UNAVAILABLE, rid), route.function
        response = _lambda_response(result, rid, head=request.method == "HEAD")
        return _with_cors(response, api, request), route.function

    def _api_for(self, route: HttpRoute | None) -> HttpApiSpec | None:
        if route is not None:
            return self.apis[route.api]
        return next(iter(self.apis.values()), None)


# --------------------------------------------------------------------------------------------
# Response mapping
# --------------------------------------------------------------------------------------------


def _json_response(status: int, payload: Any, request_id: str) -> web.Response:
    return web.Response(
        status=status,
        body=json.dumps(payload, separators=(",", ":")).encode(),
        headers={"content-type": "application/json", "apigw-requestid": request_id},
    )


def _gateway_error(error: tuple[int, dict[str, Any]], request_id: str) -> web.Response:
    return _json_response(error[0], error[1], request_id)


def _lambda_response(result: InvokeResult, request_id: str, head: bool = False) -> web.Response:
    """Map a function's answer to HTTP with the payload 2.0 rules."""
    if not result.ok:
        return _gateway_error(INTERNAL_ERROR, request_id)
    payload = result.payload
    if not isinstance(payload, dict) or "statusCode" not in payload:
        # No statusCode: API Gateway assumes 200, JSON, and the whole answer as the body.
        return web.Response(
            status=200,
            body=b"" if head else json.dumps(payload).encode(),
            headers={"content-type": "application/json", "apigw-requestid": request_id},
        )
    try:
        status = int(payload["statusCode"])
        if not 100 <= status <= 599:
            raise ValueError(status)
        body = payload.get("body")
        if body is None:
            data = b""
        elif not isinstance(body, str):
            raise TypeError("body must be a string")
        elif payload.get("isBase64Encoded"):
            data = base64.b64decode(body, validate=True)
        else:
            data = body.encode()
        headers: CIMultiDict[str] = CIMultiDict()
        for name, value in (payload.get("headers") or {}).items():
            headers.add(str(name), _header_value(value))
        for name, values in (payload.get("multiValueHeaders") or {}).items():
            if str(name).lower() in {k.lower() for k in (payload.get("headers") or {})}:
                continue
            for value in values or []:
                headers.add(str(name), _header_value(value))
        for cookie in payload.get("cookies") or []:
            headers.add("set-cookie", str(cookie))
    except (TypeError, ValueError, AttributeError):
        log.warning("malformed Lambda response: %r", payload)
        return _gateway_error(INTERNAL_ERROR, request_id)
    headers.setdefault("content-type", "text/plain; charset=utf-8")
    headers["apigw-requestid"] = request_id
    headers.popall("content-length", None)
    headers.popall("transfer-encoding", None)
    return web.Response(status=status, body=b"" if head else data, headers=headers)


def _header_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# --------------------------------------------------------------------------------------------
# CORS (CorsConfiguration: API Gateway answers preflights and decorates responses itself)
# --------------------------------------------------------------------------------------------


def _origin_allowed(cors: Mapping[str, Any], origin: str | None) -> str | None:
    if not origin:
        return None
    allowed = [str(o) for o in cors.get("AllowOrigins") or []]
    if "*" in allowed:
        return "*" if not cors.get("AllowCredentials") else origin
    return origin if origin in allowed else None


def _preflight(cors: Mapping[str, Any], request: HttpRequest) -> web.Response | None:
    origin = _origin_allowed(cors, request.header("origin"))
    requested = request.header("access-control-request-method")
    if origin is None or requested is None:
        return None
    methods = [str(m).upper() for m in cors.get("AllowMethods") or []]
    if "*" not in methods and requested.upper() not in methods:
        return None
    headers = {
        "access-control-allow-origin": origin,
        "access-control-allow-methods": ",".join(methods) if methods else requested,
        "apigw-requestid": request.request_id,
    }
    allow_headers = [str(h) for h in cors.get("AllowHeaders") or []]
    if allow_headers:
        requested_headers = request.header("access-control-request-headers")
        headers["access-control-allow-headers"] = (
            requested_headers
            if "*" in allow_headers and requested_headers
            else ",".join(allow_headers)
        )
    if cors.get("MaxAge") is not None:
        headers["access-control-max-age"] = str(cors["MaxAge"])
    if cors.get("AllowCredentials"):
        headers["access-control-allow-credentials"] = "true"
    return web.Response(status=204, headers=headers)


def _with_cors(response: web.Response, api: HttpApiSpec, request: HttpRequest) -> web.Response:
    if not api.cors:
        return response
    origin = _origin_allowed(api.cors, request.header("origin"))
    if origin is None:
        return response
    response.headers["access-control-allow-origin"] = origin
    if api.cors.get("AllowCredentials"):
        response.headers["access-control-allow-credentials"] = "true"
    expose = api.cors.get("ExposeHeaders")
    if expose:
        response.headers["access-control-expose-headers"] = ",".join(str(h) for h in expose)
    return response


def _bound_port(runner: web.AppRunner, requested: int) -> int:
    for address in runner.addresses:
        if isinstance(address, tuple) and len(address) >= 2:
            return int(address[1])
    return requested
