"""The HTTP API's auth wiring in template.yaml, which must not regress (issue 12, section 1).

API.md wants every 401 as `{"error": {"code": "unauthorized", ...}}`. Any API Gateway
authorizer can answer a request itself with another body: a Lambda authorizer with a required
identity source refuses a request without it as `401 {"message": "Unauthorized"}`, a denial is
`403 {"message": "Forbidden"}`, a JWT authorizer has its own 401. So the HTTP API has no
authorizer at all, and the handler skeleton checks the bearer token on every route but the
public ones API.md names. (The local runtime has no authorizer either: its start-up check refuses
one by name, tests/unit/test_local_support.py.)
"""

from __future__ import annotations

from typing import Any

import pytest
from warble.http import accounts, meta

from infra.local.template import load_template
from tests.conftest import ROOT

pytestmark = pytest.mark.unit

# API.md: "Only signup, login, health and the API documents work without a token"; and the
# catch-all route answers 404/405 in the API's error shape.
API_MD_PUBLIC = {
    "POST /v1/auth/signup",
    "POST /v1/auth/login",
    # API.md's Accounts table: asked for by someone who cannot log in (a forgotten password).
    "POST /v1/auth/password-reset",
    "POST /v1/auth/password-reset/confirm",
    "GET /v1/health",
    "GET /v1/openapi.json",
    "GET /v1/docs",
    "GET /v1/docs/{asset}",  # Swagger UI's script and styles, served offline
    "$default",
}


@pytest.fixture(scope="module")
def resources() -> dict[str, Any]:
    raw: dict[str, Any] = load_template(ROOT / "template.yaml").raw["Resources"]
    return raw


def _http_events(resources: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (name, event.get("Properties", {}))
        for name, resource in resources.items()
        for event in (resource.get("Properties", {}).get("Events") or {}).values()
        if event.get("Type") == "HttpApi"
    ]


def test_the_http_api_has_no_authorizer(resources):
    apis = {k: v for k, v in resources.items() if v["Type"] == "AWS::Serverless::HttpApi"}
    assert apis, "the template defines its HTTP API"
    for name, api in apis.items():
        auth = api["Properties"].get("Auth") or {}
        assert not auth.get("Authorizers"), f"{name}: an authorizer answers 401/403 itself"
        assert not auth.get("DefaultAuthorizer"), name
    # Nor one added as a raw resource (the WebSocket API's is its own), nor on a route.
    raw = [k for k, v in resources.items() if v["Type"] == "AWS::ApiGatewayV2::Authorizer"]
    assert [resources[k]["Properties"]["ApiId"] for k in raw] == [{"Ref": "WebSocketApi"}] * len(
        raw
    )
    for function, event in _http_events(resources):
        assert "Auth" not in event, f"{function} {event.get('Path')}: routes carry no auth"


def test_only_the_routes_api_md_names_skip_the_session_check(resources):
    public = set(meta.PUBLIC_ROUTES) | set(accounts.PUBLIC_ROUTES)
    assert public == API_MD_PUBLIC
    routes = {
        "$default" if event["Path"] == "$default" else f"{event['Method'].upper()} {event['Path']}"
        for _, event in _http_events(resources)
    }
    # Every public route exists; the skeleton (warble.http.app) checks every route not listed.
    assert public <= routes


def test_the_websocket_connect_route_alone_has_the_session_authorizer(resources):
    """Its context (the session of the ticket or token) reaches every later event of the
    connection, which is how each frame is checked against its session
    (warble.entrypoints.websocket). No identity source: API Gateway would refuse, without asking
    the authorizer, a connect missing any one of them, and a connect names a ticket or a token."""
    routes = {
        v["Properties"]["RouteKey"]: v["Properties"]
        for v in resources.values()
        if v["Type"] == "AWS::ApiGatewayV2::Route"
    }
    authorized = {key for key, route in routes.items() if route["AuthorizationType"] != "NONE"}
    assert authorized == {"$connect"}
    authorizer = resources[routes["$connect"]["AuthorizerId"]["Ref"]]["Properties"]
    assert "IdentitySource" not in authorizer
    assert "AuthorizerResultTtlInSeconds" not in authorizer  # a used ticket's Allow never reused
    assert "WebSocketFunction.Arn" in authorizer["AuthorizerUri"]["Fn::Sub"]


def test_no_api_gateway_log_holds_a_query_string(resources):
    """A socket's URL carries a connect ticket or a token (API.md: no token is ever written to a
    log, a query string included): the access logs of both APIs name no query string, and
    neither stage logs whole requests (execution logging's data trace)."""
    stages = {
        name: resource["Properties"]
        for name, resource in resources.items()
        if resource["Type"] in ("AWS::Serverless::HttpApi", "AWS::ApiGatewayV2::Stage")
    }
    assert len(stages) == 2
    for name, stage in stages.items():
        log_format = stage["AccessLogSettings"]["Format"]
        assert "querystring" not in log_format.lower(), name
        for settings in (
            stage.get("DefaultRouteSettings") or {},
            *(stage.get("RouteSettings") or {}).values(),
        ):
            assert not settings.get("DataTraceEnabled"), name
