"""End-to-end tier: the real local runtime (`python -m infra.local serve`) in a child process,
driven with real HTTP and WebSocket clients.

The stack gets its own database and Redis index, and ephemeral ports, so it never collides with
a `make run` on the same machine or with another pytest-xdist worker.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import DB_PREFIX, REDIS_PORT, ROOT, _worker_index
from tests.support.contract import ResponseContract
from tests.support.local_stack import start_serve, stop_serve

pytestmark = pytest.mark.e2e

E2E_DB = f"{DB_PREFIX}_e2e_{_worker_index()}"
E2E_REDIS_URL = f"redis://127.0.0.1:{REDIS_PORT}/{8 + _worker_index()}"
UNLIMITED = {
    name: "1000000"
    for name in (
        "RATE_LIMIT_USER_REQUESTS",
        "RATE_LIMIT_SIGNUP_IP_REQUESTS",
        "RATE_LIMIT_LOGIN_IP_REQUESTS",
    )
}


@dataclass
class Stack:
    http: str
    ws: str
    moto: str
    stack_name: str
    env_file: Path
    contract: ResponseContract | None = None
    redis_url: str = E2E_REDIS_URL
    web: str = "-"  # the web client's URL (tests/e2e/test_web_client.py)
    s3: str = "-"  # the S3 endpoint (upload forms post there)
    media: str = "-"  # the media CDN (every Media's url)

    def schedule(self, function: str) -> dict:
        """`python -m infra.local schedule <function>` against this stack, as a developer runs
        it; the function's JSON answer."""
        command = [sys.executable, "-m", "infra.local", "schedule", function,
                   "--endpoint-url", self.moto, "--stack-name", self.stack_name,
                   "--env-vars", str(self.env_file)]  # fmt: skip
        ran = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        return json.loads(ran.stdout[ran.stdout.index("{") :])

    def client(self, token: str | None = None) -> httpx.Client:
        """A client of the HTTP API whose every answer is checked against the response schema
        the OpenAPI document declares for its operation and status: a mismatch fails the test
        that got it (``tests.support.contract``)."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        hooks = {"response": [self.contract.check]} if self.contract else {}
        return httpx.Client(base_url=self.http, headers=headers, timeout=30, event_hooks=hooks)


# The shared stack's output (its handlers' logs), attached to the report of a failed e2e test.
_stack_output: list[list[str]] = []
STACK_LOG_LINES = 80


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.failed and _stack_output and "stack" in getattr(item, "fixturenames", ()):
        tail = "".join(_stack_output[0][-STACK_LOG_LINES:])
        report.sections.append((f"local stack output (last {STACK_LOG_LINES} lines)", tail))


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    # serve empties its database and Redis index as it starts (infra/local/__main__.py)
    env_vars = {
        "Parameters": {
            "DB_NAME": E2E_DB,
            "REDIS_URL": E2E_REDIS_URL,
            "REDIS_CLUSTER": "false",
            "DB_SSLMODE": "disable",
            "PASSWORD_HASH_ROUNDS": "4",
            # Low, so the celebrity path (merge on read, no fan-out) is exercised with 4 users.
            "CELEBRITY_FOLLOWERS": "3",
            # The suite signs up many users from 127.0.0.1 (test_rate_limits_http.py runs its own
            # stack with low budgets).
            **UNLIMITED,
            # The local default: the e2e tier signs up this admin.
            "ADMIN_USERNAMES": "warble_admin",
        }
    }
    env_file = tmp_path_factory.mktemp("stack") / "env.json"
    stack_name = f"warble-e2e-{uuid.uuid4().hex[:6]}"
    served = start_serve(
        env_file,
        env_vars,
        extra_args=["--stack-name", stack_name],
        drop_env_prefixes=("AWS_", "DB_", "REDIS_"),
    )
    _stack_output[:] = [served.output]  # the serve process's lines, as they come
    # The document the running API serves, as a client would read it.
    document = httpx.get(f"{served.http}/v1/openapi.json", timeout=30).raise_for_status().json()
    yield Stack(
        served.http,
        served.ws,
        served.moto,
        stack_name,
        env_file,
        ResponseContract(document),
        web=served.web,
        s3=served.s3 or "-",
        media=served.media or "-",
    )
    # Seventeen functions' warm workers stop after Ctrl-C; on a busy machine that takes a while.
    stop_serve(served, timeout=120)


_counter = iter(range(1, 1_000_000))


def unique_name(prefix: str = "u") -> str:
    """Usernames unique within the session (15 characters at most)."""
    return f"{prefix}{uuid.uuid4().hex[:6]}{next(_counter)}"[:15]


@pytest.fixture
def new_user(stack: Stack):
    """Signs up a fresh user and returns (body, token)."""

    def make(prefix: str = "u", password: str = "password1") -> tuple[dict, str]:
        name = unique_name(prefix)
        with stack.client() as client:
            answer = client.post(
                "/v1/auth/signup",
                json={"username": name, "email": f"{name}@example.com", "password": password},
            )
        assert answer.status_code == 201, answer.text
        body = answer.json()
        return body, body["token"]

    return make


@pytest.fixture
def pair(stack, new_user):
    """(me, my client, them, their client)"""
    me, my_token = new_user("me")
    them, their_token = new_user("them")
    with stack.client(my_token) as mine, stack.client(their_token) as theirs:
        yield me["user"], mine, them["user"], theirs
