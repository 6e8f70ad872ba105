"""The one handler skeleton every HTTP function uses.

``http_handler(routers, public=...)`` builds a Powertools resolver with validation and the error
mapping of API.md, and an ``HttpFunction`` that takes each request through it, in the
entry-point skeleton (``warble.skeleton``: Logger, Tracer, Metrics, correlation id). Before
routing it enforces, on every route not listed as public, the caller's session (401) from the
bearer token: the HTTP API has no authorizer (see docs/architecture.md), so this check is the
gate; then the request budget (429, with the X-RateLimit headers on every answer,
warble.http.rate_limits) and the body limit (413). Public routes are named by API Gateway's
routeKey, which a client cannot forge.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from warble import security, services
from warble.dal import prepare, store_unavailable
from warble.deadline import DeadlineExceeded, answering_within
from warble.domain import rate_limits as rate_limit_rules
from warble.domain.shared import Later, ReadBatch, RequestKey, at_once
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
from warble.http import rate_limits
from warble.http.dispatch import Answer, Dispatcher, Target
from warble.http.render import render
from warble.jsonbody import nesting_error, number_error, too_deep, too_long_number
from warble.schemas import errors
from warble.schemas.base import storable
from warble.skeleton import entry_point, logger

if TYPE_CHECKING:
    from warble.domain.accounts.answers import Principal
    from warble.domain.rate_limits import Verdict

Handler = Callable[[dict[str, Any], LambdaContext], Answer]
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
    app = APIGatewayHttpResolver(enable_validation=True, serializer=render)
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
    in UTF-8), before the resolver would fail to decode it, that nests too deeply, or that holds
    an integer too long for Python to convert."""
    raw = body_bytes(event)
    if not raw:  # most requests: nothing to check
        return
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
    if too_long_number(raw):  # its json.loads would raise a ValueError it does not expect
        raise number_error()


def check_params(event: dict[str, Any]) -> None:
    """400 for a query or path parameter no store can hold (NUL, a lone surrogate), as for
    every text of a body (``warble.schemas.base.storable``), before a store fails on it."""
    for source in ("queryStringParameters", "pathParameters"):
        for name, value in (event.get(source) or {}).items():
            try:
                storable(str(value))
            except ValueError as exc:
                raise ValidationFailed([FieldError(str(name), str(exc))]) from None


def _method(event: dict[str, Any]) -> str:
    return str(event.get("requestContext", {}).get("http", {}).get("method", "")).upper()


def _idempotent(
    run: Callable[[], dict[str, Any]],
    event: dict[str, Any],
    admitted: Admitted,
    user: int,
    key: str,
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
    # The route's store may claim the key durably too (``request_key``): Redis is a cache.
    admitted.repeat = RequestKey(hashlib.sha256(key.encode()).hexdigest(), fingerprint)
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
        answer = run()
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


# ---- the route's first reads, in the gate's round trip ------------------------------------
# A route may name the reads it starts with: ``queue(batch, viewer, **its arguments)`` queues
# them in a ReadBatch and gives their reader. The skeleton queues them in the gate's batch, so a
# warm read is one round trip: the session, the budget and the reads together. The viewer is the
# user the token names; the reads are used only once the gate has found that user's live
# session (a refused request never reads their answers, nor loads their misses), and the route
# asks for them with the verified caller (``first_reads``), which must be the same user.
FirstReads = Callable[..., Later[Any]]
_FIRST_READS = "__warble_first_reads__"

Route = TypeVar("Route", bound=Callable[..., Any])


def reads_first(queue: FirstReads) -> Callable[[Route], Route]:
    """Marks a route whose first reads ``queue`` can travel with the gate."""

    def mark(route: Route) -> Route:
        setattr(route, _FIRST_READS, queue)
        return route

    return mark


def _queue_first(
    target: Target | Answer | None, batch: ReadBatch, viewer: int | None
) -> tuple[FirstReads, int, Later[Any]] | None:
    if not isinstance(target, Target) or viewer is None:
        return None
    queue: FirstReads | None = getattr(target.func, _FIRST_READS, None)
    if queue is None:
        return None
    try:
        return queue, viewer, queue(batch, viewer, **target.args)
    except WarbleError:  # e.g. a 404 by the id alone: the route answers it after the gate
        return None


# ---- a request let through, as its route sees it ------------------------------------------
@dataclass(slots=True)
class Admitted:
    """A request let through to its route: its caller (None on a public route), the budget it
    spent (its X-RateLimit headers), its route (the warm path's ``Target``; the 400 its
    validation answered; None: the resolver's to answer), and the route's first reads sent
    with the gate, which ``first_reads`` takes once."""

    who: Principal | None
    budget: Verdict | None
    target: Target | Answer | None
    first: tuple[FirstReads, int, Later[Any]] | None = None
    headers: dict[str, str] | None = None  # the request's (lower-cased names), set when routed
    source: str = ""  # the client's address as API Gateway saw it, set when routed
    repeat: RequestKey | None = None  # a POST's Idempotency-Key, set when routed


# The request being handled. A ContextVar rather than the router's context: Powertools rebinds
# a Router to the last resolver that includes it, and the API catalog (OpenAPI, 404/405)
# includes every router.
_request: ContextVar[Admitted | None] = ContextVar("request", default=None)


def principal() -> Principal:
    """The authenticated caller; set on every non-public route before routing."""
    request = _request.get()
    if request is None or request.who is None:
        raise Unauthorized()
    return request.who


def request_key() -> RequestKey | None:
    """The Idempotency-Key of the POST being routed, for a route whose store claims it durably
    in the write that creates (Redis holds the replay, but may lose it)."""
    request = _request.get()
    return None if request is None else request.repeat


def request_header(name: str) -> str | None:
    """A header of the request being routed (``name`` lower-case, as HTTP API passes them)."""
    request = _request.get()
    return None if request is None or request.headers is None else request.headers.get(name)


def session_token() -> str:
    """The bearer token the request being routed was admitted with ("" on a public route)."""
    request = _request.get()
    if request is None or request.who is None or request.headers is None:
        return ""
    return bearer_token(request.headers)


def client_network() -> str:
    """The client's address of the request being routed (API Gateway's ``sourceIp``, an IPv6
    one by its /64, as the request budgets count it); "" when unknown."""
    request = _request.get()
    if request is None or not request.source:
        return ""
    return rate_limit_rules.client_network(request.source)


def first_reads(queue: FirstReads, viewer: int, **args: Any) -> Any:
    """The answer of the route's first reads: those sent with the gate when the skeleton queued
    them for this viewer, else sent now on their own."""
    request = _request.get()
    sent = None if request is None else request.first
    if request is not None and sent is not None and sent[0] is queue and sent[1] == viewer:
        request.first = None
        return sent[2]()
    return at_once(services.accounts().batch(), lambda batch: queue(batch, viewer, **args))


# Reads answer from the stores while Redis is unreachable (docs/tweets.md, "While Redis is down").
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
        return accounts.require_from_store(*verdict)
    except store_unavailable():
        return None


class HttpFunction:
    """An HTTP function's requests, step by step: admitted (the gate on a private route, the
    address's budget on a public one, a read on its session's row while Redis is down) or
    answered at once (401, 429, 413, 415, 400, 503); then routed (the warm path, or the
    resolver for what it does not know), a POST with an Idempotency-Key at most once."""

    def __init__(
        self,
        routers: Iterable[Router],
        public: Iterable[str],
        not_found: NotFoundHook | None,
        cacheable: Iterable[str] = (),
        unreplayed: Iterable[str] = (),
    ) -> None:
        self._resolver = build_resolver(routers, not_found)
        self._dispatcher = Dispatcher(self._resolver, error_response)
        self._public = frozenset(public)
        self._cacheable = frozenset(cacheable)
        self._unreplayed = frozenset(unreplayed)

    def handle(self, event: dict[str, Any], context: LambdaContext) -> Answer:
        try:
            with answering_within(context):
                admitted = self.admit(event)
                if isinstance(admitted, Admitted):
                    answer = self.answer(event, context, admitted)
                else:
                    answer = admitted
        except DeadlineExceeded:
            # A store hung rather than failed: 503 before the timeout's bare 500. The database
            # connection may be mid-query: the next request opens a new one.
            logger.warning("deadline: answered 503 before the function's timeout")
            services.container().database.close()
            answer = errors.proxy_response(Unavailable())
        return with_security_headers(answer, event.get("routeKey") in self._cacheable)

    # ---- admission ------------------------------------------------------------------------
    def admit(self, event: dict[str, Any]) -> Admitted | Answer:
        """The request as its route will see it, or the answer that ends it here."""
        try:
            if event.get("routeKey") in self._public:
                return self._admit_public(event)
            return self._through_gate(event)
        except store_unavailable():
            logger.warning("store unavailable before routing", exc_info=True)
            return self._admit_degraded(event)

    def _admit_public(self, event: dict[str, Any]) -> Admitted | Answer:
        """No session: signup and login spend their address's budget, nothing else does."""
        budget = rate_limits.spend(event, None)
        if budget is not None and not budget.allowed:
            return rate_limits.refusal(budget)
        try:
            return Admitted(None, budget, self._validated(event))
        except WarbleError as exc:
            return rate_limits.with_headers(errors.proxy_response(exc), budget)

    def _through_gate(self, event: dict[str, Any]) -> Admitted | Answer:
        """The session check, the user's budget and the route's first reads, in one round trip
        when warm. What the request did wrong is answered after the gate: 401 and 429 first."""
        accounts = services.accounts()
        limits = services.rate_limits()
        token = bearer_token(event.get("headers") or {})
        batch = accounts.batch()
        try:
            # 401: a malformed token; 429: the address's budget of unknown tokens, on a miss
            gate = accounts.gate_later(batch, token, limits.per_user, rate_limits.source_ip(event))
            target: Target | Answer | None = None
            invalid: WarbleError | None = None
            try:
                target = self._validated(event)
            except WarbleError as exc:
                invalid = exc
            first = _queue_first(target, batch, security.token_user(token))
            batch.run()
            who, spent = gate()  # 401: no live session
        except WarbleError as exc:
            return errors.proxy_response(exc)
        if spent is None:
            budget = rate_limits.spend(event, who)
        else:
            budget = rate_limit_rules.verdict(limits.per_user, *spent)
        if budget is not None and not budget.allowed:
            return rate_limits.refusal(budget)
        if invalid is not None:
            return rate_limits.with_headers(errors.proxy_response(invalid), budget)
        return Admitted(who, budget, target, first)

    def _admit_degraded(self, event: dict[str, Any]) -> Admitted | Answer:
        """Redis is unreachable: a read goes on with its caller checked against PostgreSQL (and
        no budget: the limiter lets requests through meanwhile); anything else is a 503."""
        try:
            who = _degraded_principal(event)
            if who is None:
                return errors.proxy_response(Unavailable())
            return Admitted(who, None, self._validated(event))
        except WarbleError as exc:
            return errors.proxy_response(exc)

    def _validated(self, event: dict[str, Any]) -> Target | Answer | None:
        """Check the body (413, 415, 400) and the parameters' texts (400: not again for the
        parameters of a request validated before), then validate the request against its
        route."""
        check_body(event, services.container().settings.max_body_bytes)
        return self._dispatcher.target(event, check_params)

    # ---- routing --------------------------------------------------------------------------
    def answer(self, event: dict[str, Any], context: LambdaContext, admitted: Admitted) -> Answer:
        """The route's answer, with the budget's headers; a POST with an Idempotency-Key is
        answered at most once (``_idempotent``)."""
        admitted.headers = event.get("headers") or {}
        admitted.source = rate_limits.source_ip(event)  # its network: when a route asks
        request = _request.set(admitted)
        try:
            key = admitted.headers.get(IDEMPOTENCY_HEADER)
            who = admitted.who
            if (
                who is not None
                and key is not None
                and _method(event) == "POST"
                and event.get("routeKey") not in self._unreplayed
            ):
                answer = _idempotent(
                    lambda: self._route(event, context, admitted.target),
                    event,
                    admitted,
                    who.user_id,
                    key,
                )
            else:
                answer = self._route(event, context, admitted.target)
            return rate_limits.with_headers(answer, admitted.budget)
        finally:
            _request.reset(request)

    def _route(
        self, event: dict[str, Any], context: LambdaContext, target: Target | Answer | None
    ) -> Answer:
        if target is None:
            return self._resolver.resolve(event, context)
        if isinstance(target, dict):
            return target  # the 400 of the route's validation
        return self._dispatcher.call(target)


# API.md "Headers": every answer tells browsers not to guess its type; every answer but the
# public documents' (health, the OpenAPI document, Swagger UI) is kept out of every cache: they
# are one user's, and some hold a token or an email (signup, login, GET /v1/users/me).
NOSNIFF = ("X-Content-Type-Options", "nosniff")
NO_STORE = ("Cache-Control", "no-store")


def with_security_headers(answer: dict[str, Any], cacheable: bool) -> dict[str, Any]:
    headers = answer.setdefault("headers", {})
    headers[NOSNIFF[0]] = NOSNIFF[1]
    if not cacheable and not any(name.lower() == "cache-control" for name in headers):
        headers[NO_STORE[0]] = NO_STORE[1]
    return answer


def http_handler(
    routers: Iterable[Router],
    public: Iterable[str] = (),
    not_found: NotFoundHook | None = None,
    cacheable: Iterable[str] = (),
    unreplayed: Iterable[str] = (),
    stores: Iterable[str] = ("redis",),
) -> Handler:
    """An HTTP function's handler: its routers' requests (``public``: the routeKeys served
    without a session; ``cacheable``: those whose answers a cache may keep, every other answer
    saying ``Cache-Control: no-store``; ``unreplayed``: POSTs whose answer is a fresh secret,
    never kept for an Idempotency-Key's repeat) through ``HttpFunction``, in the entry-point
    skeleton. The clients of ``stores`` are loaded now, in the function's init
    (``warble.dal.prepare``): the gate's Redis by default."""
    function = HttpFunction(routers, public, not_found, cacheable, unreplayed)
    prepare(*stores)
    return entry_point(correlation_paths.API_GATEWAY_HTTP)(function.handle)
