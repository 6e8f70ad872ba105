"""The whole HTTP API under property-based fuzzing (schemathesis), driven by its own OpenAPI
document (`/v1/openapi.json`) against the local runtime, with a real token.

Every operation in the document gets a bounded number of generated requests: WARBLE_FUZZ_EXAMPLES
(default 6) valid ones and as many invalid ones, derandomized, so a run is reproducible and
bounded in time. Each answer must be: never a 5xx; a status code the operation documents; a body
that matches the documented schema for that code and a documented content type; on every 4xx,
API.md's error shape as JSON; and no success without the token (schemathesis' probes). The
figures (operations, examples, failing runs) are printed in the terminal summary
(tests/conftest.py).

Logout and session revocation would end the shared token, so those two get a fresh session
(a real login) for every generated request instead of being left out.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import Case, CheckContext, GenerationMode, Response
from schemathesis.checks import content_type_conformance

REJECTIONS = [400, 401, 403, 404, 405, 406, 409, 413, 414, 415, 422, 428, 429, 431]
FUZZ_EXAMPLES = int(os.environ.get("WARBLE_FUZZ_EXAMPLES", "6"))
PASSWORD = "fuzz password"
REQUEST_TIMEOUT = 60
# Operations that end the session they are called with.
SESSION_ENDING = {("POST", "/v1/auth/logout"), ("DELETE", "/v1/auth/sessions/{session_id}")}
# Operations whose wrong guesses spend the account's login attempts (a password change, an
# account's deletion: issue 47 item 2): an account of their own, so the fuzzing user's logins
# above are never locked.
OWN_ACCOUNT = {("PUT", "/v1/users/me/password"), ("DELETE", "/v1/users/me")}
SNAKE_CASE = re.compile(r"^[a-z][a-z0-9_]*$")

pytestmark = pytest.mark.e2e


class FuzzAccount:
    """The fuzzing user: its main token, and fresh sessions for session-ending operations."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.username = f"fz{uuid.uuid4().hex[:12]}"
        with httpx.Client(base_url=base_url, timeout=30) as client:
            answer = client.post(
                "/v1/auth/signup",
                json={
                    "username": self.username,
                    "email": f"{self.username}@example.com",
                    "password": PASSWORD,
                },
            )
        assert answer.status_code == 201, answer.text
        self.token: str = answer.json()["token"]

    def fresh_token(self) -> str:
        with httpx.Client(base_url=self.base_url, timeout=30) as client:
            answer = client.post(
                "/v1/auth/login", json={"login": self.username, "password": PASSWORD}
            )
        assert answer.status_code == 200, answer.text
        return str(answer.json()["token"])


@pytest.fixture(scope="session")
def fuzz_account(stack) -> FuzzAccount:
    return FuzzAccount(stack.http)


@pytest.fixture(scope="session")
def api_schema(stack, fuzz_account: FuzzAccount) -> Any:
    config = schemathesis.Config.from_dict(
        {
            "generation": {
                # The real token goes in every request (below, as an explicit header, so
                # schemathesis knows it for valid and probes the API without it).
                "with-security-parameters": False,
            },
            "request-timeout": REQUEST_TIMEOUT,
            "checks": {
                # API.md answers some schema-valid requests with documented 4xx (an unknown
                # id is 404, a taken username 409, a wrong password 401, a tweet of only
                # white space 400): the status and schema checks below judge those answers.
                "positive_data_acceptance": {"enabled": False},
                # schemathesis' own list, plus a refusal for size: a body over 64 KB is a 413, a
                # query or head over API Gateway's quota a 414 or 431 (a 5xx is never one:
                # not_a_server_error judges those).
                "negative_data_rejection": {"expected-statuses": REJECTIONS},
            },
        }
    )
    # Generous timeouts: a cold function on a busy machine is slow, and speed is not the point.
    schema = schemathesis.openapi.from_url(
        f"{stack.http}/v1/openapi.json", config=config, timeout=REQUEST_TIMEOUT
    )
    served = sorted(
        (method.upper(), path) for path, ops in schema.raw_schema["paths"].items() for method in ops
    )
    assert served == OPERATIONS, "the stack serves another document than the code builds"
    return schema


def _documented_operations() -> list[tuple[str, str]]:
    """(METHOD, path) of every operation, read from the same code that serves the document;
    the `api_schema` fixture checks that the stack serves exactly these."""
    from warble.http.meta import openapi_document

    paths = json.loads(openapi_document())["paths"]
    return sorted((method.upper(), path) for path, ops in paths.items() for method in ops)


OPERATIONS = _documented_operations()


def content_type_documented(ctx: CheckContext, response: Response, case: Case) -> bool | None:
    """schemathesis' content-type check, except for an answer without a body (a 204 declares
    no content, and the gateway then names a default type)."""
    if not response.content:
        return None
    return content_type_conformance(ctx, response, case)


def error_shape(ctx: CheckContext, response: Response, case: Case) -> bool | None:
    """API.md: every 4xx and 5xx is JSON `{"error": {"code": snake_case, "message", ...}}`."""
    if response.status_code < 400:
        return None
    content_type = (response.headers.get("content-type") or [""])[0]
    assert content_type.startswith("application/json"), (
        f"{response.status_code} answered as {content_type!r}: {response.text[:200]!r}"
    )
    body = response.json()
    assert isinstance(body, dict) and isinstance(body.get("error"), dict), body
    error = body["error"]
    assert SNAKE_CASE.match(str(error.get("code", ""))), body
    assert isinstance(error.get("message"), str) and error["message"], body
    details = error.get("details")
    assert details is None or (
        isinstance(details, list)
        and all(isinstance(d, dict) and {"field", "message"} <= d.keys() for d in details)
    ), body
    return True


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=str)
@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_every_operation_keeps_the_contract(
    api_schema: Any,
    fuzz_account: FuzzAccount,
    method: str,
    path: str,
    mode: GenerationMode,
    record_property: Any,
) -> None:
    # given one documented operation and requests generated from its schema (valid or not)
    operation = api_schema[path][method]
    figures = {"operation": f"{method} {path}", "mode": mode.value, "examples": 0}
    record_property("contract_fuzz", figures)
    session_ending = (method, path) in SESSION_ENDING
    account = FuzzAccount(fuzz_account.base_url) if (method, path) in OWN_ACCOUNT else fuzz_account

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=FUZZ_EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def fuzz(case: Case) -> None:
        figures["examples"] += 1
        # Logout and revocation end the session they are called with: a fresh one each time.
        token = account.fresh_token() if session_ending else account.token
        # when it is sent, then the answer keeps the contract
        case.call_and_validate(
            headers={"Authorization": f"Bearer {token}"},
            excluded_checks=[content_type_conformance],
            additional_checks=[content_type_documented, error_shape],
        )

    try:
        fuzz()
    except Unsatisfiable:
        # Only security to make invalid (no parameters or body): covered by the 401 tests.
        pytest.skip("the schema leaves nothing invalid to generate for this operation")
