"""Handlers answer the events AWS sends: `sam local generate-event` output and events/ samples.

The samples are checked against Powertools' event models (which encode AWS's documented shapes)
and then fed to the real handlers, in process, against real PostgreSQL, Redis and moto.
"""

from __future__ import annotations

import base64
import copy
import importlib.util
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

import pytest
import redis as redis_lib
from aws_lambda_powertools.utilities.parser.models import (
    APIGatewayProxyEventV2Model,
    APIGatewayWebSocketConnectEventModel,
    APIGatewayWebSocketDisconnectEventModel,
    APIGatewayWebSocketMessageEventModel,
)

from tests.conftest import DB_PREFIX, REDIS_PORT, ROOT, TEST_REDIS_URL
from tests.support.lambda_context import Context

pytestmark = pytest.mark.integration
EVENTS = ROOT / "events"
SAM = ROOT / ".venv-sam/bin/sam"


def _load_function(name: str) -> ModuleType:
    path = ROOT / "functions" / name / "app.py"
    spec = importlib.util.spec_from_file_location(f"fn_{name}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _event(name: str) -> dict:
    return json.loads((EVENTS / name).read_text())


@pytest.fixture
def session(accounts):
    issued = accounts.signup("alice", "alice@example.com", "correct horse", None, "phone")
    return issued


def _as(event: dict, issued) -> dict:
    event = copy.deepcopy(event)
    event["headers"]["authorization"] = f"Bearer {issued.token}"
    return event


@pytest.mark.parametrize("name", sorted(p.name for p in (EVENTS / "accounts").glob("*.json")))
def test_http_samples_match_the_payload_2_0_model(name):
    APIGatewayProxyEventV2Model.model_validate(_event(f"accounts/{name}"))


def test_websocket_samples_match_the_models():
    authorize = _event("websocket/authorize.json")
    assert authorize["type"] == "REQUEST" and authorize["methodArn"].endswith("/$connect")
    APIGatewayWebSocketConnectEventModel.model_validate(_event("websocket/connect.json"))
    APIGatewayWebSocketDisconnectEventModel.model_validate(_event("websocket/disconnect.json"))
    APIGatewayWebSocketMessageEventModel.model_validate(_event("websocket/ping.json"))


@pytest.mark.skipif(not SAM.exists(), reason="the SAM CLI venv is created by .ci/run")
def test_raw_sam_http_event_gets_a_clear_answer_from_every_http_function(accounts):
    raw = json.loads(
        subprocess.run(
            [str(SAM), "local", "generate-event", "apigateway", "http-api-proxy"],
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, "SAM_CLI_TELEMETRY": "0"},
        ).stdout
    )
    # Its authorizer is a JWT one and its route is $default: not signed in, not a known path.
    answer = _load_function("accounts").handler(raw, Context())
    assert answer["statusCode"] == 401
    assert json.loads(answer["body"])["error"]["code"] == "unauthorized"
    answer = _load_function("meta").handler(raw, Context())
    assert answer["statusCode"] == 404
    assert json.loads(answer["body"])["error"]["code"] == "not_found"


def test_account_samples_through_the_accounts_handler(accounts, session, pg):
    handler = _load_function("accounts").handler
    signup = _event("accounts/signup.json")
    body = json.loads(base64.b64decode(signup["body"]))
    signup["body"] = base64.b64encode(
        json.dumps({**body, "username": "bob", "email": "b@example.com"}).encode()
    ).decode()
    assert handler(signup, Context())["statusCode"] == 201
    assert handler(_event("accounts/login.json"), Context())["statusCode"] == 200
    expectations = {
        "get-me.json": 200,
        "patch-me.json": 200,
        "list-sessions.json": 200,
        "get-user-by-username.json": 200,
        "revoke-session.json": 404,
        "get-user.json": 404,
        "socket-ticket.json": 201,
    }
    for name, status in expectations.items():
        answer = handler(_as(_event(f"accounts/{name}"), session), Context())
        assert answer["statusCode"] == status, (name, answer)
    # A password change (the session stays), a reset's request (202, known or not) and an
    # unknown reset token (400 invalid_token).
    answer = handler(_as(_event("accounts/change-password.json"), session), Context())
    assert answer["statusCode"] == 204, answer
    assert handler(_event("accounts/password-reset.json"), Context())["statusCode"] == 202
    answer = handler(_event("accounts/password-reset-confirm.json"), Context())
    assert json.loads(answer["body"])["error"]["code"] == "invalid_token"
    assert handler(_as(_event("accounts/logout.json"), session), Context())["statusCode"] == 204
    # After logout the same token is refused.
    answer = handler(_as(_event("accounts/get-me.json"), session), Context())
    assert answer["statusCode"] == 401


def test_the_export_sample_through_the_export_handler(accounts, session, moto):
    APIGatewayProxyEventV2Model.model_validate(_event("export/export.json"))
    answer = _load_function("export").handler(_as(_event("export/export.json"), session), Context())
    assert answer["statusCode"] == 200, answer
    assert answer["headers"]["Cache-Control"] == "no-store"
    assert json.loads(answer["body"])["user"]["email"] == "alice@example.com"


def test_the_handler_is_the_gate_for_the_samples_placeholder_token(accounts, session):
    """No authorizer: the sample's token is not a session, and no header at all is API.md's
    401 too (API Gateway passes such a request on, having no identity source to require)."""
    handler = _load_function("accounts").handler
    event = _event("accounts/get-me.json")
    for headers in (
        event["headers"],
        {k: v for k, v in event["headers"].items() if k != "authorization"},
    ):
        answer = handler({**event, "headers": headers}, Context())
        assert answer["statusCode"] == 401
        assert json.loads(answer["body"])["error"]["code"] == "unauthorized"
    assert handler(_as(event, session), Context())["statusCode"] == 200


def test_meta_samples(accounts):
    handler = _load_function("meta").handler
    assert json.loads(handler(_event("meta/health.json"), Context())["body"]) == {"status": "ok"}
    document = json.loads(handler(_event("meta/openapi.json"), Context())["body"])
    assert "/v1/auth/signup" in document["paths"] and "/v1/users/{user_id}" in document["paths"]
    assert handler(_event("meta/unknown-path.json"), Context())["statusCode"] == 404
    assert handler(_event("meta/wrong-method.json"), Context())["statusCode"] == 405


def _effect(answer: dict) -> str:
    (statement,) = answer["policyDocument"]["Statement"]
    assert statement["Action"] == "execute-api:Invoke"
    return str(statement["Effect"])


def _authorized(issued) -> dict:
    """requestContext.authorizer of the events of a connection opened with this session's
    token: what the $connect authorizer allowed it with, as API Gateway hands it on."""
    handler = _load_function("websocket").handler
    authorize = _event("websocket/authorize.json")
    authorize["queryStringParameters"]["token"] = issued.token
    answer = handler(authorize, Context())
    assert _effect(answer) == "Allow"
    assert answer["policyDocument"]["Statement"][0]["Resource"] == authorize["methodArn"]
    context = {
        key: ("true" if value else "false") if isinstance(value, bool) else str(value)
        for key, value in answer["context"].items()
    }
    return {"principalId": answer["principalId"], **context, "integrationLatency": 3}


def _on(event: dict, authorizer: dict) -> dict:
    event = copy.deepcopy(event)
    event["requestContext"]["authorizer"] = authorizer
    return event


def test_websocket_samples(accounts, session, moto):
    handler = _load_function("websocket").handler
    authorize = _event("websocket/authorize.json")
    assert _effect(handler(authorize, Context())) == "Deny"  # the sample's token is not real
    # the samples' session is not real either: registered, looked at again, refused
    assert handler(_event("websocket/connect.json"), Context())["statusCode"] == 401
    from warble.dal.connections import ConnectionRegistry

    assert ConnectionRegistry().for_user(382808519700000001) == []
    authorizer = _authorized(session)
    assert authorizer["user_id"] == authorizer["principalId"] == str(session.user["id"])
    assert (
        handler(_on(_event("websocket/connect.json"), authorizer), Context())["statusCode"] == 200
    )
    assert ConnectionRegistry().for_user(session.user["id"]) == ["L0SM9cOFvHcCIhw="]
    for name in ("ping.json", "default.json", "disconnect.json"):
        event = _on(_event(f"websocket/{name}"), authorizer)
        assert handler(event, Context())["statusCode"] == 200
    assert ConnectionRegistry().for_user(session.user["id"]) == []


def test_an_expired_session_is_refused_everywhere(accounts, session, pg, moto):
    """Sessions last 30 days: past its expiry a token opens nothing (the HTTP gate, the check of
    a resolved session, WebSocket $connect), though its row is still there."""
    from warble.errors import Unauthorized

    pg.execute(
        "UPDATE sessions SET expires_at = now() - interval '1 second' WHERE id = %s",
        (session.session.id,),
    )
    redis_lib.Redis.from_url(TEST_REDIS_URL).flushdb()  # the cached session row too
    answer = _load_function("accounts").handler(
        _as(_event("accounts/get-me.json"), session), Context()
    )
    assert answer["statusCode"] == 401
    with pytest.raises(Unauthorized):
        accounts.require_token(session.token)
    authorize = _event("websocket/authorize.json")
    authorize["queryStringParameters"]["token"] = session.token
    assert _effect(_load_function("websocket").handler(authorize, Context())) == "Deny"
    fresh = accounts.login("alice", "correct horse", "laptop")
    lifetime = fresh.session.expires_at - fresh.session.created_at
    assert round(lifetime.total_seconds() / 86400) == 30


def _invoke(function: str, event_file: str, tmp_path: Path) -> tuple[dict, str]:
    # infra/local/env.json but this checkout's database prefix and Redis: the scratch stores
    # (`<DB_NAME>_invoke`, Redis index 15) are then this suite's, not every checkout's at once.
    env_vars = json.loads((ROOT / "infra/local/env.json").read_text())
    env_vars["Parameters"].update(DB_NAME=DB_PREFIX, REDIS_URL=f"redis://127.0.0.1:{REDIS_PORT}/0")
    tmp_path.mkdir(exist_ok=True)
    env_file = tmp_path / "env.json"
    env_file.write_text(json.dumps(env_vars))
    ran = subprocess.run(
        [sys.executable, "-m", "infra.local", "invoke", function, "--event", event_file,
         "--env-vars", str(env_file)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return json.loads(ran.stdout[ran.stdout.index("{") :]), ran.stderr


@pytest.mark.xdist_group("invoke_scratch")  # one scratch database and Redis index
def test_invoke_runs_one_function_with_an_event_file_like_sam_local_invoke(tmp_path):
    """`python -m infra.local invoke`, on a throwaway moto, as a developer runs it."""
    answer, _ = _invoke("MetaFunction", "events/meta/health.json", tmp_path)
    assert answer["statusCode"] == 200 and json.loads(answer["body"]) == {"status": "ok"}


@pytest.mark.xdist_group("invoke_scratch")  # one scratch database and Redis index
def test_invoke_answers_the_same_every_run_on_scratch_stores(tmp_path):
    # given docs/local-runtime.md's sample, a signup of alice: without a running stack, invoke
    # runs on a scratch database and Redis index beside its throwaway moto, emptied each run
    # when it runs twice at once (two terminals; issue 34: the second CREATE DATABASE failed)
    with ThreadPoolExecutor(2) as pool:
        runs = list(
            pool.map(
                lambda i: _invoke("AccountsFunction", "events/accounts/signup.json", tmp_path / i),
                ("first", "second"),
            )
        )
    # then each signs alice up (on stores emptied for it, so neither sees the other's alice:
    # a shared store would answer 409 username_taken), quietly
    for answer, stderr in runs:
        assert answer["statusCode"] == 201, answer
        assert "Warning" not in stderr, stderr


def _with_body(event: dict, body: dict) -> dict:
    event = copy.deepcopy(event)
    event["body"] = base64.b64encode(json.dumps(body).encode()).decode()
    event["isBase64Encoded"] = True
    return event


def test_conversation_samples_through_the_handlers(accounts, session, moto):
    from warble import services

    handler = _load_function("conversations").handler
    # The samples name a user and a conversation that do not exist here.
    expectations = {
        "open.json": 404,
        "list.json": 200,
        "messages.json": 404,
        "send.json": 404,
        "read.json": 404,
    }
    for name, status in expectations.items():
        event = _event(f"conversations/{name}")
        APIGatewayProxyEventV2Model.model_validate(event)
        answer = handler(_as(event, session), Context())
        assert answer["statusCode"] == status, (name, answer)
    alice = session.user["id"]
    bob = accounts.signup("bob", "bob@example.com", "correct horse", None, "")
    services.graph().follow(alice, bob.user["id"])
    services.graph().follow(bob.user["id"], alice)
    opened = _with_body(_event("conversations/open.json"), {"participant_id": str(bob.user["id"])})
    answer = handler(_as(opened, session), Context())
    assert answer["statusCode"] == 201, answer
    conversation = json.loads(answer["body"])["id"]

    # sendMessage, as API Gateway delivers it, on a connection of alice's
    ws = _load_function("websocket").handler
    authorizer = _authorized(session)
    assert ws(_on(_event("websocket/connect.json"), authorizer), Context())["statusCode"] == 200
    send = _on(_event("websocket/send-message.json"), authorizer)
    APIGatewayWebSocketMessageEventModel.model_validate(send)
    body = json.loads(send["body"])
    assert body["action"] == "sendMessage" and body["client_id"]
    send["body"] = json.dumps({**body, "conversation_id": conversation})
    for _ in range(2):  # the resend (same client_id) stores nothing new
        assert ws(send, Context())["statusCode"] == 200
    history = services.conversations().history(bob.user["id"], int(conversation), 20, None)
    assert [m.text for m in history.items] == [body["text"]]


def test_report_samples_through_the_reports_handler(accounts, session, moto, pg):
    """The samples name a tweet and a case that do not exist here, and alice moderates
    nothing; the schedule's sample runs the cases' purge."""
    handler = _load_function("reports").handler
    expectations = {"report.json": 404, "list.json": 200, "cases.json": 403, "resolve.json": 403}
    for name, status in expectations.items():
        event = _event(f"reports/{name}")
        APIGatewayProxyEventV2Model.model_validate(event)
        answer = handler(_as(event, session), Context())
        assert answer["statusCode"] == status, (name, answer)
    purge = _load_function("casespurge").handler(_event("schedule/scheduled.json"), Context())
    assert purge == {"purged": 0}
