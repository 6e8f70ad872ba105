"""The generated OpenAPI document: valid, in step with template.yaml's routes, and saying what
the API does (API.md): public routes need no token, errors are 400 (never 422), POST takes an
Idempotency-Key."""

from __future__ import annotations

import json

import pytest
from openapi_spec_validator import validate
from warble.http.meta import PUBLIC_ROUTES, openapi_document

from infra.local.template import load_template
from tests.conftest import ROOT

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def document() -> dict:
    return json.loads(openapi_document())


def _template_routes() -> set[tuple[str, str]]:
    template = load_template(ROOT / "template.yaml")
    routes = set()
    for resource in template.raw["Resources"].values():
        for event in (resource.get("Properties", {}).get("Events") or {}).values():
            if event.get("Type") == "HttpApi" and "Path" in event.get("Properties", {}):
                routes.add((event["Properties"]["Method"].lower(), event["Properties"]["Path"]))
    return routes


def test_the_document_is_valid_openapi(document):
    validate(document)


def test_every_template_route_is_documented_and_nothing_else(document):
    documented = {(m, p) for p, ops in document["paths"].items() for m in ops}
    # Served, not self-described: the two documents and the catch-all 404/405 route.
    hidden = {
        ("get", "/v1/openapi.json"),
        ("get", "/v1/docs"),
        ("get", "/v1/docs/{asset}"),
        ("any", "$default"),
    }
    assert documented | hidden == _template_routes()


def test_public_routes_need_no_token_and_errors_are_never_422(document):
    from warble.http.accounts import PUBLIC_ROUTES as ACCOUNT_ROUTES

    public = set(PUBLIC_ROUTES) | set(ACCOUNT_ROUTES)
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            assert "422" not in operation["responses"], (method, path)
            needs_token = operation.get("security", document["security"]) != []
            assert needs_token is (f"{method.upper()} {path}" not in public), (method, path)
    posts = [ops["post"] for ops in document["paths"].values() if "post" in ops]
    with_key = [op for op in posts if any(p["name"] == "Idempotency-Key" for p in
                                           op.get("parameters", []))]  # fmt: skip
    # all but the public ones (signup, login, a password reset and its confirmation): a key is
    # one user's, and they have none; and but the socket ticket's, whose answer is a fresh
    # secret never kept for a repeat
    from warble.http.accounts import UNREPLAYED_ROUTES

    public_posts = [route for route in public if route.startswith("POST ")]
    assert len(public_posts) == 4
    assert UNREPLAYED_ROUTES == ("POST /v1/auth/socket-ticket",)
    assert len(with_key) == len(posts) - len(public_posts) - len(UNREPLAYED_ROUTES)
    ticket = document["paths"]["/v1/auth/socket-ticket"]["post"]
    assert "409" not in ticket["responses"] and "parameters" not in ticket
    assert ticket["responses"]["201"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "SocketTicket"
    )


def test_a_204_declares_no_body(document):
    # Found by the e2e tier's response check: Powertools documented each 204 as a JSON body.
    no_content = [
        (method, path)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        if "204" in operation["responses"]
    ]
    assert no_content  # logout, deleting a tweet, a retweet, a session
    for method, path in no_content:
        assert "content" not in document["paths"][path][method]["responses"]["204"]


def test_a_post_taking_an_idempotency_key_documents_its_409(document):
    # Found by the e2e tier's response check: a reused or in-flight key answered an undocumented
    # 409; and a retweet that existed already answered an undocumented 200.
    for path, operations in document["paths"].items():
        post = operations.get("post")
        if post and any(p["name"] == "Idempotency-Key" for p in post.get("parameters", [])):
            assert "409" in post["responses"], path
    assert {"200", "201"} <= set(
        document["paths"]["/v1/tweets/{tweet_id}/retweet"]["post"]["responses"]
    )


def test_every_operation_with_a_request_budget_documents_its_429(document):
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            limited = f"{method.upper()} {path}" not in PUBLIC_ROUTES
            answer = operation["responses"].get("429")
            assert (answer is not None) is limited, (method, path)
            if answer is not None:
                assert answer["headers"]["Retry-After"]["required"] is True
                assert answer["content"]["application/json"]["schema"]["$ref"].endswith("ErrorOut")


def test_every_status_an_operation_can_answer_is_documented(document):
    """Issue 14 #4: what the skeleton answers before routing is in each operation's responses:
    413 and 415 for a body, 409 for an Idempotency-Key on an authenticated POST, 503 when a
    store is down (every route but health reads one); and login's 429."""
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            codes = set(operation["responses"])
            route = f"{method.upper()} {path}"
            assert {"400", "401"} <= codes, route
            if method in ("post", "put", "patch"):
                assert {"413", "415"} <= codes, route
            if route != "GET /v1/health":
                assert "503" in codes, route
            if any(p["name"] == "Idempotency-Key" for p in operation.get("parameters", [])):
                assert "409" in codes, route
            for code in codes - {"200", "201", "202", "204"}:
                schema = operation["responses"][code]["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorOut"}, (route, code)
    assert "429" in document["paths"]["/v1/auth/login"]["post"]["responses"]
    signup = document["paths"]["/v1/auth/signup"]["post"]["responses"]["409"]["description"]
    assert "username_taken" in signup and "idempotency" not in signup  # public: no key


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("PATCH", "/v1/timeline/home", "GET"),
        ("PUT", "/v1/health", "GET"),
        # /v1/users/me is matched by its own routes and by /v1/users/{user_id}: the union.
        ("POST", "/v1/users/me", "DELETE, GET, PATCH"),
        ("GET", "/v1/tweets", "POST"),
    ],
)
def test_a_wrong_method_is_a_405_that_lists_the_methods_the_path_serves(method, path, allow):
    from warble.errors import MethodNotAllowed
    from warble.http.meta import unmatched
    from warble.schemas.errors import describe

    answer = unmatched(method, path)
    assert isinstance(answer, MethodNotAllowed)
    status, headers, _ = describe(answer)
    assert status == 405 and headers["Allow"] == allow
