"""The e2e tier's response check (``tests.support.contract``) itself: it passes what the OpenAPI
document describes and fails what it does not. Answers come from an in-memory transport."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from warble.http.meta import openapi_document

from tests.support.contract import ContractViolation, ResponseContract

pytestmark = pytest.mark.unit

TWEET = {
    "id": "1",
    "author": {"id": "2", "username": "alice", "display_name": "Alice"},
    "text": "hi",
    "created_at": "2026-11-23T10:00:00.000Z",
    "reply_to": None,
    "retweet_of": None,
    "media_ids": [],
    "hashtags": [],
    "media": [],
    "like_count": 0,
    "retweet_count": 0,
    "reply_count": 0,
    "liked_by_me": False,
    "retweeted_by_me": False,
}
ERROR = {"error": {"code": "not_found", "message": "No such tweet."}}


@pytest.fixture(scope="module")
def contract() -> ResponseContract:
    return ResponseContract(json.loads(openapi_document()))


def answering(
    contract: ResponseContract, status: int, body: Any = None, token: str | None = "t"
) -> Callable[[str, str], httpx.Response]:
    def call(method: str, path: str) -> httpx.Response:
        def reply(request: httpx.Request) -> httpx.Response:
            if body is None:
                return httpx.Response(status)
            return httpx.Response(status, json=body)

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        with httpx.Client(
            transport=httpx.MockTransport(reply),
            base_url="http://api.test",
            headers=headers,
            event_hooks={"response": [contract.check]},
        ) as client:
            return client.request(method, path)

    return call


def test_documented_answers_pass(contract):
    before = contract.checked
    answering(contract, 200, TWEET)("GET", "/v1/tweets/1")
    answering(contract, 200, {"items": [TWEET], "next_cursor": None})("GET", "/v1/timeline/home")
    answering(contract, 404, ERROR)("GET", "/v1/tweets/1")
    answering(contract, 204)("DELETE", "/v1/tweets/1")
    answering(contract, 200, {"status": "ok"}, token=None)("GET", "/v1/health")
    assert contract.checked == before + 4  # the 204 has no body to check


@pytest.mark.parametrize(
    "status, body, problem",
    [
        (200, {k: v for k, v in TWEET.items() if k != "like_count"}, "'like_count' is a required"),
        (200, {**TWEET, "like_count": "3"}, "is not of type 'integer'"),
        (200, {**TWEET, "views": 3}, "Additional properties"),
        (200, {**TWEET, "retweet_of": {"id": "9"}}, "retweet_of"),
        (404, {"message": "Not Found"}, "'error' is a required"),
        (418, ERROR, "status 418 is not documented"),
    ],
)
def test_answers_off_the_contract_fail(contract, status, body, problem):
    with pytest.raises(ContractViolation, match=problem):
        answering(contract, status, body)("GET", "/v1/tweets/1")


def test_the_most_specific_path_template_is_the_operation(contract):
    me = {
        "id": "2",
        "username": "alice",
        "display_name": "Alice",
        "bio": "",
        "created_at": "2026-11-23T10:00:00.000Z",
        "followers_count": 0,
        "following_count": 0,
        "tweet_count": 0,
        "email": "alice@example.com",
        "admin": False,
    }
    answering(contract, 200, me)("GET", "/v1/users/me")
    with pytest.raises(ContractViolation):
        answering(contract, 200, {"items": [], "next_cursor": None})("GET", "/v1/users/me")


def test_unknown_paths_answer_in_the_error_shape(contract):
    answering(contract, 404, ERROR)("GET", "/v1/nowhere")
    with pytest.raises(ContractViolation):
        answering(contract, 404, {"message": "Not Found"})("GET", "/v1/nowhere")
    with pytest.raises(ContractViolation, match="no documented operation"):
        answering(contract, 200, {})("GET", "/v1/nowhere")


def test_only_a_request_without_a_token_may_get_the_gateways_own_401(contract):
    gateway = {"message": "Unauthorized"}
    answering(contract, 401, gateway, token=None)("PUT", "/v1/users/me/following/5")
    with pytest.raises(ContractViolation):
        answering(contract, 401, gateway, token="t")("PUT", "/v1/users/me/following/5")
