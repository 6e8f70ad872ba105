"""Health, the OpenAPI document, Swagger UI, and the catch-all route's 404/405 answers."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from warble.errors import MethodNotAllowed, NotFound, WarbleError
from warble.http.docs import responses
from warble.schemas.accounts import HealthOut

router = Router()

PUBLIC_ROUTES = (
    "GET /v1/health",
    "GET /v1/openapi.json",
    "GET /v1/docs",
    "GET /v1/docs/{asset}",
    "$default",
)
# Routes that touch no store, so never answer 503.
HEALTH_ROUTES = ("GET /v1/health",)

# Swagger UI's script and styles come from the stack itself (a machine offline renders the
# page all the same): the copies Powertools ships in the dependencies layer, served under
# /v1/docs/ with the Powertools version in their address, so a browser may keep them for good.
_SWAGGER_ASSETS = {
    "swagger-ui-bundle.min.js": "text/javascript; charset=utf-8",
    "swagger-ui.min.css": "text/css; charset=utf-8",
    "swagger-init.js": "text/javascript; charset=utf-8",
}
# The page starts Swagger UI from a file of its own, not an inline script: its Content-Security-
# Policy runs no inline script at all (API.md "Headers").
_SWAGGER_INIT = "swagger-init.js"
_SWAGGER_INIT_JS = 'SwaggerUIBundle({url: "/v1/openapi.json", dom_id: "#swagger-ui"});\n'
_SWAGGER_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Warble API</title>
<link rel="stylesheet" href="/v1/docs/swagger-ui.min.css?v={version}"></head>
<body><div id="swagger-ui"></div>
<script src="/v1/docs/swagger-ui-bundle.min.js?v={version}"></script>
<script src="/v1/docs/swagger-init.js?v={version}"></script>
</body></html>"""
DOCS_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


@lru_cache(maxsize=1)
def openapi_document() -> str:
    """The whole API's OpenAPI document, generated from every router's models, then made to
    say what the API does (API.md): the public routes need no token, a bad request is a 400
    in the API's error shape (never Powertools' 422), a 204 has no body, bodies over 64 KB are
    a 413, a request head over API Gateway's quota a 414 or 431, every operation with a
    request budget may answer 429, and a POST takes an Idempotency-Key (a reused or in-flight
    one is a 409)."""
    import json

    # Powertools' OpenAPI models are pydantic models built at import, a cost only this document
    # needs (the health check, the function's common request, does not).
    from aws_lambda_powertools.event_handler.openapi.models import HTTPBearer

    from warble.http import accounts
    from warble.http.app import MAX_IDEMPOTENCY_KEY, build_resolver
    from warble.http.catalog import all_routers

    generated = build_resolver([*all_routers(), router]).get_openapi_json_schema(
        title="Warble API",
        version="1.0.0",
        description="Twitter-style social backend. See API.md for the conventions.",
        security_schemes={"bearer": HTTPBearer(description="Token from signup or login")},
        security=[{"bearer": []}],
    )
    document: dict[str, Any] = json.loads(generated)
    public = set(PUBLIC_ROUTES) | set(accounts.PUBLIC_ROUTES)
    error = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}}
    seconds = {"type": "integer", "minimum": 0}
    rate_limited = {
        "description": "rate_limited: the request budget is spent (warble.http.rate_limits)",
        "headers": {
            "Retry-After": {"required": True, "description": "Seconds to wait", "schema": seconds},
            "X-RateLimit-Limit": {"description": "Requests per window", "schema": seconds},
            "X-RateLimit-Remaining": {"description": "Left in this window", "schema": seconds},
            "X-RateLimit-Reset": {"description": "Window end, Unix seconds", "schema": seconds},
        },
        **error,
    }
    unavailable = {
        "description": "unavailable: a store is failing (API.md: retry, with the same"
        " Idempotency-Key, after Retry-After)",
        "headers": {
            "Retry-After": {"required": True, "description": "Seconds to wait", "schema": seconds}
        },
        **error,
    }
    for path, operations in document.get("paths", {}).items():
        for method, operation in operations.items():
            route = f"{method.upper()} {path}"
            answers = operation.setdefault("responses", {})
            answers.pop("422", None)
            # A 204, and a 202 (a password reset's request, an account's deletion), have no
            # body; Powertools documents the handler's return type as JSON for them.
            for empty in ("202", "204"):
                answers.get(empty, {}).pop("content", None)
            if route in public:
                operation["security"] = []
            if method in ("post", "put", "patch"):
                # The skeleton's checks before routing (warble.http.app.check_body).
                answers["413"] = {"description": "payload_too_large", **error}
                answers["415"] = {"description": "unsupported_media_type", **error}
            # API Gateway's quota on the request line and header values (infra/local/quotas.py).
            answers["414"] = {"description": "uri_too_long", **error}
            answers["431"] = {"description": "headers_too_large", **error}
            if route not in PUBLIC_ROUTES:  # health and docs: no budget
                answers["429"] = rate_limited
            if route not in HEALTH_ROUTES:
                # Every other route reads a store (the session check at least).
                answers["503"] = unavailable
            if method == "post" and route not in public | set(accounts.UNREPLAYED_ROUTES):
                # Idempotency-Key (warble.http.app): a reused key or a repeat still running.
                codes = "idempotency_key_reused / request_in_progress"
                if "409" in answers:
                    codes = f"{answers['409']['description']} / {codes}"
                answers["409"] = {"description": codes, **error}
                operation.setdefault("parameters", []).append(
                    {
                        "name": "Idempotency-Key",
                        "in": "header",
                        "required": False,
                        "description": "A repeat within 24 h returns the first answer",
                        "schema": {"type": "string", "minLength": 1,
                                   "maxLength": MAX_IDEMPOTENCY_KEY},
                    }
                )  # fmt: skip
    return json.dumps(document)


@lru_cache(maxsize=1)
def _route_patterns() -> list[tuple[re.Pattern[str], frozenset[str]]]:
    import json

    patterns = []
    for path, operations in json.loads(openapi_document())["paths"].items():
        regex = "^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "/?$"
        methods = frozenset(method.upper() for method in operations)
        patterns.append((re.compile(regex), methods))
    # The two documents are left out of the document itself, but are routes all the same.
    for path in ("/v1/openapi.json", "/v1/docs"):
        patterns.append((re.compile("^" + re.escape(path) + "/?$"), frozenset({"GET"})))
    patterns.append((re.compile("^/v1/docs/[^/]+/?$"), frozenset({"GET"})))
    return patterns


def unmatched(method: str, path: str) -> WarbleError:
    """404 for an unknown path; 405 for a known path asked with another method."""
    matched = [methods for pattern, methods in _route_patterns() if pattern.match(path)]
    # A method any matching route serves is routed (API Gateway picks the most specific one).
    allowed = sorted(frozenset[str]().union(*matched))
    if allowed and method.upper() not in allowed:
        return MethodNotAllowed(allowed)
    return NotFound("No such path.")


@router.get("/v1/health", summary="Liveness", responses=responses(200, HealthOut, "Alive"))
def health() -> dict[str, Any]:
    return {"status": "ok"}


@router.get("/v1/openapi.json", summary="This document", include_in_schema=False)
def openapi() -> Response[Any]:
    return Response(status_code=200, content_type="application/json", body=openapi_document())


@router.get("/v1/docs", summary="Swagger UI", include_in_schema=False)
def docs() -> Response[Any]:
    from aws_lambda_powertools.shared.version import VERSION

    body = _SWAGGER_HTML.format(version=VERSION)
    return Response(
        status_code=200,
        content_type="text/html; charset=utf-8",
        body=body,
        headers={"Content-Security-Policy": DOCS_CSP},
    )


@router.get("/v1/docs/<asset>", summary="Swagger UI's assets", include_in_schema=False,
            compress=True)  # fmt: skip
def docs_asset(asset: str) -> Response[Any]:
    content_type = _SWAGGER_ASSETS.get(asset)
    if content_type is None:
        raise NotFound("No such path.")
    body = _SWAGGER_INIT_JS if asset == _SWAGGER_INIT else _swagger_asset(asset)
    return Response(
        status_code=200,
        content_type=content_type,
        body=body,
        headers={"Cache-Control": "public, max-age=31536000, immutable"},
    )


@lru_cache(maxsize=len(_SWAGGER_ASSETS))
def _swagger_asset(name: str) -> str:
    from importlib.resources import files

    package = "aws_lambda_powertools.event_handler.openapi.swagger_ui"
    return files(package).joinpath(name).read_text(encoding="utf-8")
