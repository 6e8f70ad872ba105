"""The warm path of a request: from API Gateway's routeKey straight to the route's function.

Powertools' resolver (``warble.http.app.build_resolver``) stays the definition of every route:
its models generate the OpenAPI document, and it answers whatever this path does not know (the
catch-all route, a path its rule would not match). A request this path knows costs what its
route needs and no more:
- the route is the routeKey API Gateway already matched (one dict lookup; the resolver tries
  every route's regex in turn), and its rule is matched once for the path parameters, as the
  resolver reads them;
- the request is validated by the route's own pydantic fields, with the functions the
  resolver's validation middleware uses, so a bad request gets the same 400;
- the answer is encoded once, by the resolver's own serializer (``warble.http.render``).
What it leaves out is the resolver's response validation, which would validate each route's
answer against its return annotation and walk it through ``jsonable_encoder``: more than the
route costs. The answers are the domain's typed dataclasses (``warble.domain.<feature>.answers``),
the very classes the OpenAPI document names as the routes' responses, and the contract tests
hold every answer to that document.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.middlewares.openapi_validation import (
    _get_multi_value_query_params,
    _normalize_multi_params,
    _request_body_to_args,
    _request_params_to_args,
)
from aws_lambda_powertools.event_handler.openapi.compat import _normalize_errors
from aws_lambda_powertools.event_handler.openapi.dependant import is_scalar_field
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEventV2

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
    from aws_lambda_powertools.event_handler.api_gateway import Route

Answer = dict[str, Any]  # a proxy answer (HTTP API, payload 2.0): statusCode, headers, body
# How an exception raised while validating or calling a route becomes a Response (app.py).
ErrorMapper = Callable[[Exception], Response[Any]]

_PARAM = re.compile(r"<(\w+)>")


@dataclass(frozen=True)
class Target:
    """A route this path serves, and what to call it with once validated."""

    route: Route
    args: dict[str, Any]

    @property
    def func(self) -> Callable[..., Any]:
        return self.route.func  # type: ignore[no-any-return]


def route_key(route: Route) -> str:
    """The API Gateway routeKey of a Powertools route (``<id>`` is ``{id}`` there)."""
    path = _PARAM.sub(lambda found: "{" + found.group(1) + "}", route.path)
    return f"{route.method} {path}"


# Validated arguments kept per container: a request repeats the parameters of an earlier one
# (the first page of a timeline, ``?limit=20``; a profile's id), and their validation (pydantic,
# through Powertools' functions) cost more than the route of a cached read. Only what passed,
# only for routes without a body, only values that cannot change (a list could be mutated by its
# route); the table is emptied when full, so it holds the parameters seen most lately.
_VALIDATED_MAX = 1024
_UNCHANGING = (str, int, float, bool, type(None), Enum)
ValidatedKey = tuple[str, str, str, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]


def _validated_key(event: dict[str, Any]) -> ValidatedKey | None:
    """What a body-less request's arguments are made of: its route, path and query (as raw and
    as API Gateway split them) and its path parameters (None: a value no key can hold)."""
    key = (
        str(event.get("routeKey")),
        str(event.get("rawPath") or ""),
        str(event.get("rawQueryString") or ""),
        tuple((event.get("queryStringParameters") or {}).items()),
        tuple((event.get("pathParameters") or {}).items()),
    )
    try:
        hash(key)
    except TypeError:  # not API Gateway's strings (a hand-made event)
        return None
    return key


class Dispatcher:
    def __init__(self, app: APIGatewayHttpResolver, on_error: ErrorMapper) -> None:
        self._app = app
        self._on_error = on_error
        self._routes: dict[str, Route] | None = None
        self._validated: dict[ValidatedKey, Target] = {}

    def _index(self) -> dict[str, Route]:
        if self._routes is None:
            app = self._app
            self._routes = {
                route_key(route): route
                for route in app._static_routes + app._dynamic_routes
                # What this path does not do (no route of ours asks for it) stays the resolver's.
                if not (route.cors or route.compress or route.cache_control or route.middlewares)
            }
        return self._routes

    def target(
        self, event: dict[str, Any], check: Callable[[dict[str, Any]], None] = lambda _: None
    ) -> Target | Answer | None:
        """The route and its validated arguments; an answer (400) when the request is invalid;
        None when the resolver must answer it. ``check`` runs first (it may raise), but not for
        a request whose arguments were kept: their key holds everything it checks."""
        route = self._index().get(str(event.get("routeKey")))
        if route is None:
            check(event)
            return None
        key = None if route.dependant.body_params else _validated_key(event)
        if key is not None and (known := self._validated.get(key)) is not None:
            return known
        check(event)
        matched = route.rule.match(str(event.get("rawPath") or ""))
        if matched is None:
            return None
        try:
            target = Target(route, _validated(route, matched.groupdict(), event))
        except RequestValidationError as exc:
            return self.answer_error(exc)
        if key is not None and all(isinstance(v, _UNCHANGING) for v in target.args.values()):
            if len(self._validated) >= _VALIDATED_MAX:
                self._validated.clear()
            self._validated[key] = target
        return target

    def call(self, target: Target) -> Answer:
        try:
            result = target.func(**target.args)
        except Exception as exc:  # mapped as the resolver maps it (app.py: one catch-all)
            return self.answer_error(exc)
        return self.answer(result, target.route.status_code)

    def answer_error(self, exc: Exception) -> Answer:
        return self.answer(self._on_error(exc), 500)

    def answer(self, result: Any, status: int) -> Answer:
        """The proxy answer of a route's result, as the resolver builds it (HTTP API, 2.0)."""
        body: Any
        if isinstance(result, Response):
            body = result.body
            if result.is_json() and not isinstance(body, str | bytes):  # bytes: encoded already
                body = self._app._serializer(body)
            status = result.status_code
            headers = {
                name: value if isinstance(value, str) else ", ".join(value)
                for name, value in result.headers.items()
                if value is not None
            }
            cookies = [str(cookie) for cookie in result.cookies]
        else:  # most routes: a typed answer, as a Response of it would give it, none made
            body = result if isinstance(result, str | bytes) else self._app._serializer(result)
            headers = {"Content-Type": content_types.APPLICATION_JSON}
            cookies = []
        encoded = isinstance(body, bytes)
        return {
            "statusCode": status,
            "body": base64.b64encode(body).decode() if encoded else body,
            "isBase64Encoded": encoded,
            "headers": headers,
            "cookies": cookies,
        }


def _scalar_query(route: Route) -> bool:
    """Whether every query parameter of the route takes one value (decided once per route)."""
    known: bool | None = getattr(route, "_warble_scalar_query", None)
    if known is None:
        known = all(is_scalar_field(field) for field in route.dependant.query_params)
        route._warble_scalar_query = known  # type: ignore[attr-defined]
    return known


def _query(route: Route, event: dict[str, Any]) -> dict[str, Any]:
    """The query parameters as the validation middleware normalizes them: API Gateway joins a
    repeated parameter's values with commas; a scalar parameter gets its value as sent, unless
    the query string really repeats it (then the list, which fails a scalar's validation)."""
    proxy = APIGatewayProxyEventV2(event)
    repeated = _get_multi_value_query_params(proxy) if event.get("rawQueryString") else ()
    if not _scalar_query(route):
        return dict(
            _normalize_multi_params(
                proxy.resolved_query_string_parameters,
                route.dependant.query_params,
                multi_value_params=repeated,
            )
        )
    query: dict[str, Any] = {}
    for name, value in (event.get("queryStringParameters") or {}).items():
        parts = value.split(",") if name in repeated else [value]
        query[name] = parts[0] if len(parts) == 1 else parts
    return query


def _validated(route: Route, path_args: dict[str, str], event: dict[str, Any]) -> dict[str, Any]:
    """The route's arguments, validated as OpenAPIRequestValidationMiddleware does (our routes
    take no header or cookie parameters)."""
    dependant = route.dependant
    values, errors = _request_params_to_args(dependant.path_params, path_args)
    if dependant.query_params:
        query = _query(route, event)
        query_values, query_errors = _request_params_to_args(dependant.query_params, query)
        values.update(query_values)
        errors += query_errors
    if dependant.body_params:
        body_values, body_errors = _request_body_to_args(
            required_params=dependant.body_params, received_body=_json_body(event)
        )
        values.update(body_values)
        errors.extend(body_errors)
    if errors:
        raise RequestValidationError(_normalize_errors(errors))
    return values


def _json_body(event: dict[str, Any]) -> Any:
    """The body parsed as the resolver parses it (the skeleton has checked it is JSON, UTF-8,
    within the size and nesting limits)."""
    proxy = APIGatewayProxyEventV2(event)
    try:
        return proxy.json_body
    except json.JSONDecodeError as exc:
        raise RequestValidationError(
            [
                {
                    "type": "json_invalid",
                    "loc": ("body", exc.pos),
                    "msg": "JSON decode error",
                    "input": {},
                    "ctx": {"error": exc.msg},
                },
            ],
            body=exc.doc,
        ) from exc
