"""The HTTP API's Lambda REQUEST authorizer (payload 2.0, simple responses).

It never denies: API Gateway would answer a denial with its own 403 body, while API.md wants
``401 {"error": ...}``. It resolves the bearer token to a session and passes the result in the
context; the handler skeleton (``warble.http.app``) answers 401 when the context is empty. API
Gateway caches this answer per Authorization header for ``auth_cache_ttl_seconds``.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from warble import services
from warble.entrypoints.skeleton import entry_point

ANONYMOUS = {"user_id": "", "session_id": "", "expires_at_ms": ""}


def bearer_token(headers: dict[str, str]) -> str:
    header = (headers.get("authorization") or headers.get("Authorization") or "").strip()
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


@entry_point(correlation_paths.API_GATEWAY_HTTP)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    token = bearer_token(event.get("headers") or {})
    verdict = services.accounts().authenticate(token) if token else None
    if verdict is None:
        return {"isAuthorized": True, "context": ANONYMOUS}
    who, expires_at_ms = verdict
    return {
        "isAuthorized": True,
        "context": {
            "user_id": str(who.user_id),
            "session_id": str(who.session_id),
            "expires_at_ms": str(expires_at_ms),
        },
    }
