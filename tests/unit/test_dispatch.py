"""The warm path (warble.http.dispatch) answers every request as Powertools' resolver would:
the same validation errors, the same answers, for path, query and body parameters. Routes of a
test router with the real parameter types and models; no store is touched."""

from __future__ import annotations

import copy
import json
from typing import Annotated, Any

import pytest
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Query
from warble.errors import NotFound
from warble.http.app import build_resolver, error_response
from warble.http.dispatch import Dispatcher, Target, route_key
from warble.http.params import Cursor, Id, Limit, UserRef
from warble.schemas.tweets import CreateTweet

pytestmark = pytest.mark.unit

router = Router()


@router.get("/v1/things/<thing_id>")
def get_thing(thing_id: Id, limit: Limit = 20, cursor: Cursor = None) -> dict[str, Any]:
    if thing_id == "404":
        raise NotFound("No such thing.")
    return {"id": thing_id, "limit": limit, "cursor": cursor, "items": [{"n": 1.5}]}


@router.get("/v1/users/<user_id>/things")
def user_things(
    user_id: UserRef,
    ids: Annotated[str, Query(pattern=r"^[0-9]+(,[0-9]+)*$", max_length=40)] = "1",
) -> dict[str, Any]:
    return {"user": user_id, "ids": ids.split(",")}


@router.post("/v1/things")
def post_thing(body: Annotated[CreateTweet, Body()]) -> Response[Any]:
    return Response(status_code=201, content_type="application/json", body=body.model_dump())


def _event(method: str, route: str, path: str, query: str = "", body: str | None = None) -> dict:
    params = {}
    for pair in query.split("&") if query else []:
        name, _, value = pair.partition("=")
        params[name] = f"{params[name]},{value}" if name in params else value
    return {
        "version": "2.0",
        "routeKey": f"{method} {route}",
        "rawPath": path,
        "rawQueryString": query,
        "headers": {"content-type": "application/json"},
        "queryStringParameters": params or None,
        "requestContext": {
            "http": {"method": method, "path": path},
            "requestId": "r",
            "stage": "$default",
        },
        "body": body,
        "isBase64Encoded": False,
    }


CASES = [
    ("GET", "/v1/things/{thing_id}", "/v1/things/12", ""),
    ("GET", "/v1/things/{thing_id}", "/v1/things/12", "limit=5&cursor=abc"),
    ("GET", "/v1/things/{thing_id}", "/v1/things/12", "limit=0"),
    ("GET", "/v1/things/{thing_id}", "/v1/things/12", "limit=x"),
    ("GET", "/v1/things/{thing_id}", "/v1/things/12", "limit=5&limit=6"),
    ("GET", "/v1/things/{thing_id}", "/v1/things/12", "cursor=a,b&other=1"),
    ("GET", "/v1/things/{thing_id}", "/v1/things/abc", ""),
    ("GET", "/v1/things/{thing_id}", "/v1/things/404", ""),
    ("GET", "/v1/users/{user_id}/things", "/v1/users/me/things", "ids=1,2,3"),
    ("GET", "/v1/users/{user_id}/things", "/v1/users/me/things", "ids=1&ids=2"),
    ("GET", "/v1/users/{user_id}/things", "/v1/users/you/things", "ids=x"),
]
BODIES = [
    '{"text": "hello"}',
    '{"text": 5}',
    '{"text": "hi", "extra": 1}',
    "[1, 2]",
    "{",
    "",
]


@pytest.fixture(scope="module")
def paths() -> tuple[Any, Dispatcher]:
    app = build_resolver([router])
    return app, Dispatcher(app, error_response)


def _both(paths: tuple[Any, Dispatcher], event: dict) -> tuple[dict, dict]:
    app, dispatcher = paths
    expected = app.resolve(copy.deepcopy(event), None)
    target = dispatcher.target(copy.deepcopy(event))
    assert target is not None, "the warm path must know this route"
    answer = dispatcher.call(target) if isinstance(target, Target) else target
    return answer, expected


@pytest.mark.parametrize(("method", "route", "path", "query"), CASES)
def test_the_warm_path_answers_a_query_as_the_resolver_does(paths, method, route, path, query):
    answer, expected = _both(paths, _event(method, route, path, query))
    assert answer == expected


@pytest.mark.parametrize("body", BODIES)
def test_the_warm_path_answers_a_body_as_the_resolver_does(paths, body):
    answer, expected = _both(paths, _event("POST", "/v1/things", "/v1/things", body=body))
    assert answer == expected
    assert json.loads(answer["body"])  # an answer either way, never an empty 500


def test_a_route_key_names_its_route_as_api_gateway_does(paths):
    app, dispatcher = paths
    keys = sorted(route_key(route) for route in app._static_routes + app._dynamic_routes)
    assert keys == [
        "GET /v1/things/{thing_id}",
        "GET /v1/users/{user_id}/things",
        "POST /v1/things",
    ]
    assert dispatcher.target(_event("GET", "$default", "/v1/nothing")) is None


def test_repeated_parameters_are_validated_once_and_answered_alike():
    # given a warm dispatcher that has seen every case once
    app = build_resolver([router])
    dispatcher = Dispatcher(app, error_response)
    first = {case: dispatcher.target(_event(*case)) for case in CASES}
    # when each case comes again, in another order
    for case in reversed(CASES):
        again = dispatcher.target(_event(*case))
        # then a valid request of unchanging values reuses its validated arguments, an invalid
        # one is validated anew, and each still answers as the resolver does
        if isinstance(first[case], Target):
            assert again is first[case]
            answer = dispatcher.call(again)
        else:
            assert again is not first[case]
            answer = again
        assert answer == app.resolve(_event(*case), None)


def test_validated_arguments_are_kept_per_query_and_path():
    app = build_resolver([router])
    dispatcher = Dispatcher(app, error_response)
    route = "/v1/things/{thing_id}"
    five = dispatcher.target(_event("GET", route, "/v1/things/12", "limit=5"))
    six = dispatcher.target(_event("GET", route, "/v1/things/12", "limit=6"))
    other = dispatcher.target(_event("GET", route, "/v1/things/13", "limit=5"))
    assert isinstance(five, Target) and isinstance(six, Target) and isinstance(other, Target)
    assert (five.args["limit"], six.args["limit"]) == (5, 6)
    assert (five.args["thing_id"], other.args["thing_id"]) == ("12", "13")
    bad = dispatcher.target(_event("GET", route, "/v1/things/12", "limit=0"))
    assert isinstance(bad, dict) and bad["statusCode"] == 400


def test_a_kept_request_has_its_parameters_checked_once():
    # Given the check of the parameters' texts (NUL, lone surrogates) counted
    dispatcher = Dispatcher(build_resolver([router]), error_response)
    checked: list[str] = []

    def check(event: dict) -> None:
        checked.append(event["rawQueryString"])

    route = "/v1/things/{thing_id}"
    # when a request comes twice, then another, and one no route of this path serves
    for query in ("limit=5", "limit=5", "limit=6"):
        dispatcher.target(_event("GET", route, "/v1/things/12", query), check)
    dispatcher.target(_event("GET", "$default", "/v1/nothing", "x=1"), check)
    # then the repeat's parameters, kept with its validated arguments, are not checked again
    assert checked == ["limit=5", "limit=6", "x=1"]
