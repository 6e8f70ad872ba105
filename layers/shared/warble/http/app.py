"""The one handler skeleton every HTTP function uses.

``http_handler(routers, public=...)`` builds a Powertools resolver with validation, the error
mapping of API.md, and wraps it in the entry-point skeleton (``warble.entrypoints.skeleton``:
Logger, Tracer, Metrics, correlation id). Before routing it enforces, on every route not listed
as public, the caller's session (401) from the bearer token: the HTTP API has no authorizer (see
docs/architecture.md), so this check is the gate; then the request budget (429, with the
X-RateLimit headers on every answer, warble.http.rate_limits) and the body limit (413). Public
routes are named by API Gateway's routeKey, which a client cannot forge.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from warble import services
from warble.dal import store_unavailable
from warble.entrypoints.skeleton import entry_point, logger
from warble.errors import (
    Conflict,
    FieldError,
    NotFound,
    PayloadTooLarge,
    Unauthorized,
    Unavailable,
    UnsupportedMediaType,
    ValidationFailed,
    WarbleError,
)
from warble.http import errors, rate_limits
from warble.http.dispatch import Dispatcher
from warble.jsonbody import nesting_error, too_deep

if TYPE_CHECKING:
    from warble.domain.accounts import Principal

Handler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]
# Decides the answer for a request no route matched: (method, path) -> 404 or 405.
NotFoundHook = Callable[[str, str], WarbleError]


def error_response(exc: Exception) -> Response[Any]:
    """API.md's answer to an exception a route raised: the one mapping of errors to statuses,
    for the resolver and the warm path (warble.http.dispatch) alike."""
    if isinstance(exc, WarbleError):
        status, headers, body = errors.describe(exc)
        return Response(status_code=status, headers=headers, body=body)
    if isinstance(exc, RequestValidationError):
        return error_response(ValidationFailed(errors.validation_details(list(exc.errors()))))
    # The store errors are named on failure, not at import (warble.dal.store_unavailable).
    if isinstance(exc, store_unavailable()):
        logger.warning("store unavailable", exc_info=exc)
        return error_response(Unavailable())
    # The one catch-all: log the details, answer without internals.
    logger.exception("unhandled error", exc_info=exc)
    return Response(
        status_code=500,
        headers=errors.JSON_HEADERS,
        body=errors.error_body("internal_error", "Something went wrong on our side."),
    )


def build_resolver(
    routers: Iterable[Router], not_found: NotFoundHook | None = None
) -> APIGatewayHttpResolver:
    app = APIGatewayHttpResolver(enable_validation=True)
    for router in routers:
        app.include_router(router)
    app.exception_handler(Exception)(error_response)

    @app.not_found
    def _not_found(_: Exception) -> Response[Any]:
        if not_found is None:
            return error_response(NotFound("No such path."))
        event = app.current_event
        return error_response(not_found(event.request_context.http.method, event.raw_path))

    return app


IDEMPOTENCY_HEADER = "idempotency-key"  # HTTP API payload 2.0 lower-cases header names
MAX_IDEMPOTENCY_KEY = 64


def body_bytes(event: dict[str, Any]) -> bytes:
    body = event.get("body") or ""
    if event.get("isBase64Encoded"):
        return base64.b64decode(body, validate=False)
    return str(body).encode("utf-8")


def is_json(content_type: str) -> bool:
    """What the resolver parses as JSON: ``application/json`` (with parameters), or no
    Content-Type at all. It would parse a form too, and fail (500) on anything else."""
    content_type = content_type.strip()
    return not content_type or content_type.startswith("application/json")


def check_body(event: dict[str, Any], limit: int) -> None:
    """413 over the limit; 415 for a body declared as anything but JSON (Powertools would parse
    a form, or fail on other types); 400 for a body that is not UTF-8 (API.md: bodies are JSON
    in UTF-8), before the resolver would fail to decode it, or that nests too deeply."""
    raw = body_bytes(event)
    if len(raw) > limit:
        raise PayloadTooLarge()
    if raw and not is_json(str((event.get("headers") or {}).get("content-type", ""))):
        raise UnsupportedMediaType()
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationFailed(
            [FieldError("body", "must be UTF-8 encoded JSON")], "The body is not valid JSON."
        ) from None
    if too_deep(raw):  # the resolver's json.loads would recurse past the stack: a 500
        raise nesting_error()


def _method(event: dict[str, Any]) -> str:
    return str(event.get("requestContext", {}).get("http", {}).get("method", "")).upper()


def _idempotent(
    resolve: Handler, event: dict[str, Any], context: LambdaContext, user: int, key: str
) -> dict[str, Any]:
    """API.md: a repeat of a POST with the same Idempotency-Key by the same user within 24 h
    answers the first (successful) answer again and creates nothing new. Racing repeats: the
    first takes the key, the others get 409 until it finishes. A failed request gives the key
    back, so the client can retry it."""
    if not 1 <= len(key) <= MAX_IDEMPOTENCY_KEY:
        field = FieldError("Idempotency-Key", f"must be 1 to {MAX_IDEMPOTENCY_KEY} characters")
        return errors.proxy_response(ValidationFailed([field]))
    fingerprint = hashlib.sha256(
        b"\0".join(
            [
                _method(event).encode(),
                str(event.get("rawPath", "")).encode(),
                str(event.get("rawQueryString", "")).encode(),
                body_bytes(event),
            ]
        )
    ).hexdigest()
    store = services.idempotency()
    try:
        held = store.begin(user, key, fingerprint)
    except store_unavailable():
        logger.warning("idempotency store unavailable", exc_info=True)
        return errors.proxy_response(Unavailable())
    if held is not None:
        if held["fingerprint"] != fingerprint:
            return errors.proxy_response(
                Conflict(
                    "This Idempotency-Key was used for another request.",
                    code="idempotency_key_reused",
                )
            )
        if held["state"] != "done":
            return errors.proxy_response(
                Conflict(
                    "A request with this Idempotency-Key is in progress.",
                    code="request_in_progress",
                )
            )
        answer: dict[str, Any] = held["answer"]
        answer.setdefault("headers", {})["Idempotent-Replayed"] = "true"
        return answer
    try:
        answer = resolve(event, context)
    except BaseException:
        store.abandon(user, key)
        raise
    if 200 <= int(answer.get("statusCode", 500)) < 300:
        store.finish(user, key, fingerprint, answer)
    else:
        store.abandon(user, key)
    return answer


def bearer_token(headers: dict[str, str]) -> str:
    """The token of ``Authorization: Bearer <token>`` (payload 2.0 lower-cases header names)."""
    scheme, _, token = (headers.get("authorization") or "").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


# The caller of the request being handled. A ContextVar rather than the router's context:
# Powertools rebinds a Router to the last resolver that includes it, and the API catalog
# (OpenAPI, 404/405) includes every router.
_principal: ContextVar[Principal | None] = ContextVar("principal", default=None)


def principal() -> Principal:
    """The authenticated caller; set on every non-public route before routing."""
    who = _principal.get()
    if who is None:
        raise Unauthorized()
    return who


# Reads answer from the stores while Redis is unreachable (README "While Redis is down").
# Writes do not: each one needs Redis after its commit (cache invalidation, idempotency
# record), so with Redis down it is refused with 503 before anything is stored.
DEGRADED_METHODS = frozenset({"GET", "HEAD"})


def _degraded_principal(event: dict[str, Any]) -> Principal | None:
    """The caller of a read, checked against PostgreSQL alone; None when the request cannot be
    served degraded (a write, or PostgreSQL down too). 401 still raises."""
    if _method(event) not in DEGRADED_METHODS:
        return None
    accounts = services.accounts()
    try:
        # The session cache degrades to PostgreSQL by itself; the last-seen throttle cannot.
        verdict = accounts.authenticate(bearer_token(event.get("headers") or {}))
        if verdict is None:
            raise Unauthorized()
        who, expires_at_ms = verdict
        return accounts.require_from_store(
            str(who.user_id), str(who.session_id), str(expires_at_ms)
        )
    except store_unavailable():
        return None


def http_handler(
    routers: Iterable[Router],
    public: Iterable[str] = (),
    not_found: NotFoundHook | None = None,
) -> Handler:
    app = build_resolver(routers, not_found)
    dispatcher = Dispatcher(app, error_response)
    public_routes = frozenset(public)

    def resolve(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        target = dispatcher.target(event)
        if target is None:
            return app.resolve(event, context)
        if isinstance(target, dict):
            return target
        return dispatcher.call(target)

    @entry_point(correlation_paths.API_GATEWAY_HTTP)
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        budget = None  # the request budget spent, for the X-RateLimit headers of every answer
        try:
            who = None
            if event.get("routeKey") not in public_routes:
                who = services.accounts().require_token(bearer_token(event.get("headers") or {}))
            budget = rate_limits.spend(event, who)
            if budget is not None and not budget.allowed:
                return rate_limits.refusal(budget)
            check_body(event, services.container().settings.max_body_bytes)
        except WarbleError as exc:
            return rate_limits.with_headers(errors.proxy_response(exc), budget)
        except store_unavailable():
            logger.warning("store unavailable before routing", exc_info=True)
            try:
                who = _degraded_principal(event)
                if who is not None:
                    check_body(event, services.container().settings.max_body_bytes)
            except WarbleError as exc:
                return errors.proxy_response(exc)
            if who is None:
                return errors.proxy_response(Unavailable())
        token = _principal.set(who)
        try:
            key = (event.get("headers") or {}).get(IDEMPOTENCY_HEADER)
            if who is not None and key is not None and _method(event) == "POST":
                answer = _idempotent(resolve, event, context, who.user_id, key)
            else:
                answer = resolve(event, context)
            return rate_limits.with_headers(answer, budget)
        finally:
            _principal.reset(token)

    handler.resolver = app  # type: ignore[attr-defined]
    return handler
