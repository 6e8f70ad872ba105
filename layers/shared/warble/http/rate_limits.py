"""Request budgets at the HTTP edge: which budget a request spends (warble.domain.rate_limits),
the 429 when it is spent, and the X-RateLimit headers on every answer of a limited request,
errors included.

``X-RateLimit-Limit`` is the budget, ``X-RateLimit-Remaining`` what is left of it after this
request, ``X-RateLimit-Reset`` when the window ends (Unix seconds, as GitHub and Twitter send
it); a 429 adds ``Retry-After`` in seconds (API.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger

from warble import clock, services
from warble.dal import store_unavailable
from warble.errors import RateLimited
from warble.schemas import errors

if TYPE_CHECKING:
    from warble.domain.accounts.answers import Principal
    from warble.domain.rate_limits import Verdict

logger = Logger()

# API Gateway's routeKey: a client cannot forge it.
SIGNUP_ROUTE = "POST /v1/auth/signup"
LOGIN_ROUTE = "POST /v1/auth/login"
# A password reset's request and confirmation: public, and as near a password as a login, so
# they spend the address's login budget (the emails have their own cap, 3 an hour).
RESET_ROUTES = ("POST /v1/auth/password-reset", "POST /v1/auth/password-reset/confirm")
_ADDRESS_ROUTES = (SIGNUP_ROUTE, LOGIN_ROUTE, *RESET_ROUTES)


def source_ip(event: dict[str, Any]) -> str:
    """The client's address as API Gateway saw it (the TCP peer; not X-Forwarded-For, which the
    client writes)."""
    return str(event.get("requestContext", {}).get("http", {}).get("sourceIp", ""))


def spend(event: dict[str, Any], who: Principal | None) -> Verdict | None:
    """Spend one request of the budget this request belongs to: its user's when it has one,
    its address's for signup and login (and a password reset's two requests); None when no
    budget applies (health, the API documents, a request refused for want of a session). While
    Redis is unreachable the limiter lets requests through: refusing every request would turn a
    cache outage into a full one, and the stores behind each route answer 503 themselves if
    they need Redis."""
    route = event.get("routeKey")
    if who is None and route not in _ADDRESS_ROUTES:
        return None  # before building the limiter: MetaFunction never needs it (nor redis)
    limits = services.rate_limits()
    try:
        if who is not None:
            return limits.user(who.user_id)
        if route == SIGNUP_ROUTE:
            return limits.signup(source_ip(event))
        return limits.login(source_ip(event))
    except store_unavailable():
        logger.warning("rate limiter unavailable; request let through", exc_info=True)
    return None


def refusal(verdict: Verdict) -> dict[str, Any]:
    return with_headers(
        errors.proxy_response(
            RateLimited(verdict.retry_after, "Too many requests; try again later.")
        ),
        verdict,
    )


def with_headers(answer: dict[str, Any], verdict: Verdict | None) -> dict[str, Any]:
    if verdict is not None:
        reset_at = -(-(clock.epoch_ms() + verdict.reset_ms) // 1000)
        answer.setdefault("headers", {}).update(
            {
                "X-RateLimit-Limit": str(verdict.limit),
                "X-RateLimit-Remaining": str(verdict.remaining),
                "X-RateLimit-Reset": str(reset_at),
            }
        )
    return answer
