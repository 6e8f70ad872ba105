"""Request budgets through the local gateway: a stack of its own, started with low budgets
(the shared `stack` fixture's are out of reach, so that the other tests are never throttled)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.conftest import DB_PREFIX, REDIS_PORT, _worker_index
from tests.e2e.conftest import UNLIMITED
from tests.support.local_stack import Served, start_serve, stop_serve

# One worker runs the module, so its stack is started once.
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("rate_limits_stack")]

USER_BUDGET = 20
SIGNUP_BUDGET = 3
AUTH_FAILURE_BUDGET = 5
LIMITED_DB = f"{DB_PREFIX}_e2e_limits_{_worker_index()}"
# An index of its own: the signup and login budgets are per address, and every stack here
# sees its clients at 127.0.0.1.
LIMITED_REDIS_URL = f"redis://127.0.0.1:{REDIS_PORT}/{12 + _worker_index()}"


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    env_vars = {
        "Parameters": {
            "DB_NAME": LIMITED_DB,
            "REDIS_URL": LIMITED_REDIS_URL,
            "REDIS_CLUSTER": "false",
            "DB_SSLMODE": "disable",
            "PASSWORD_HASH_ROUNDS": "4",
            **UNLIMITED,
            # How a tester lowers a budget: the setting's environment variable in the env file.
            "RATE_LIMIT_USER_REQUESTS": str(USER_BUDGET),
            "RATE_LIMIT_SIGNUP_IP_REQUESTS": str(SIGNUP_BUDGET),
            "RATE_LIMIT_AUTH_FAILURES_IP_REQUESTS": str(AUTH_FAILURE_BUDGET),
        }
    }
    served = start_serve(
        tmp_path_factory.mktemp("limited") / "env.json",
        env_vars,
        extra_args=["--stack-name", f"warble-limits-{uuid.uuid4().hex[:6]}", "--no-schedules"],
        drop_env_prefixes=("AWS_", "DB_", "REDIS_", "RATE_LIMIT_"),
    )
    yield served
    # Its AccountsFunction ran up to 8 workers for the race: on a busy machine stopping them
    # all takes longer than a stack that served one request at a time.
    stop_serve(served, timeout=120)


def _rate_headers(answer: httpx.Response) -> tuple[int, int, int]:
    return (
        int(answer.headers["X-RateLimit-Limit"]),
        int(answer.headers["X-RateLimit-Remaining"]),
        int(answer.headers["X-RateLimit-Reset"]),
    )


def _is_rate_limited(answer: httpx.Response, window_seconds: int) -> None:
    assert answer.status_code == 429, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    error = answer.json()["error"]
    assert error["code"] == "rate_limited" and error["message"]
    assert 1 <= int(answer.headers["Retry-After"]) <= window_seconds
    assert int(answer.headers["X-RateLimit-Remaining"]) == 0


def _client_from(served: Served, address: str) -> httpx.Client:
    """A client whose requests come from ``address`` (any of 127.0.0.0/8 reaches the gateway):
    the gateway sees it as the source address, as API Gateway sees a client's."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=served.http, transport=transport, timeout=30)


def _signup(client: httpx.Client, name: str) -> httpx.Response:
    return client.post(
        "/v1/auth/signup",
        json={"username": name, "email": f"{name}@example.com", "password": "pw123456"},
    )


def test_signups_from_one_address_stop_at_the_budget(limited):
    """Given a signup budget of 3 per address, the fourth signup from one address is refused
    with 429, Retry-After and the error shape, and creates no account; another address still
    signs up."""
    names = [f"s{uuid.uuid4().hex[:8]}{i}" for i in range(SIGNUP_BUDGET + 2)]
    with _client_from(limited, "127.0.0.2") as one, _client_from(limited, "127.0.0.3") as other:
        answers = [_signup(one, name) for name in names[: SIGNUP_BUDGET + 1]]
        elsewhere = _signup(other, names[-1])
        credentials = {"login": names[-2], "password": "pw123456"}
        refused_login = one.post("/v1/auth/login", json=credentials)

    assert [a.status_code for a in answers] == [201] * SIGNUP_BUDGET + [429]
    assert [_rate_headers(a)[:2] for a in answers] == [(3, 2), (3, 1), (3, 0), (3, 0)]
    _is_rate_limited(answers[-1], 1800)
    assert elsewhere.status_code == 201 and _rate_headers(elsewhere)[:2] == (3, 2)
    # The refused signup made no account (login spends a budget of its own).
    assert refused_login.status_code == 401, refused_login.text
    assert refused_login.json()["error"]["code"] == "invalid_credentials"


def test_fifty_racing_requests_of_one_user_get_exactly_the_budget(limited):
    """Given a user budget of 20, 50 requests of one user released at once (to one function's
    warm workers, as Lambda would run them) get exactly 20 answers and 30 refusals, and each
    answered request was told a different remaining count."""
    with httpx.Client(base_url=limited.http, timeout=30) as anon:
        name = f"r{uuid.uuid4().hex[:8]}"
        signup = anon.post(
            "/v1/auth/signup",
            json={"username": name, "email": f"{name}@example.com", "password": "pw123456"},
        )
    assert signup.status_code == 201, signup.text
    token = signup.json()["token"]
    paths = ["/v1/users/me", "/v1/auth/sessions"]
    start = threading.Barrier(50)
    before = time.time()

    def request(i: int) -> httpx.Response:
        with httpx.Client(
            base_url=limited.http, headers={"Authorization": f"Bearer {token}"}, timeout=60
        ) as client:
            start.wait()
            return client.get(paths[i % len(paths)])

    with ThreadPoolExecutor(50) as pool:
        answers = list(pool.map(request, range(50)))
    after = time.time()
    with httpx.Client(base_url=limited.http, timeout=60) as client:
        after_the_race = client.get("/v1/users/me", headers={"Authorization": f"Bearer {token}"})
    _is_rate_limited(after_the_race, 300)  # 50 requests spent the whole budget of 20

    ok = [a for a in answers if a.status_code == 200]
    # The local gateway's own 500 when a worker ran past the function's timeout (seen with the
    # machine at load 50): such a request may or may not have spent its budget before it died.
    timed_out = [a for a in answers if a.status_code == 500 and "error" not in a.json()]
    refused = [a for a in answers if a not in ok and a not in timed_out]
    assert len(ok) <= USER_BUDGET  # never an overshoot
    if not timed_out:
        assert len(ok) == USER_BUDGET
    assert sorted(_rate_headers(a)[1] for a in ok) == list(range(USER_BUDGET))
    for answer in refused:
        _is_rate_limited(answer, 300)
    for answer in ok + refused:
        limit, _, reset = _rate_headers(answer)
        assert limit == USER_BUDGET
        assert before < reset <= after + 301


def test_socket_frames_and_connects_spend_the_users_budget(limited):
    """Issue 33 item 6: the WebSocket spent no budget. Now its $connect (the authorizer) and
    every frame spend one request of the user's budget: past it a frame is answered with
    `rate_limited` (and not run) and a new connection is refused."""
    import json

    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    with httpx.Client(base_url=limited.http, timeout=30) as anon:
        name = f"w{uuid.uuid4().hex[:8]}"
        signup = anon.post(
            "/v1/auth/signup",
            json={"username": name, "email": f"{name}@example.com", "password": "pw123456"},
        )
    assert signup.status_code == 201, signup.text
    token = signup.json()["token"]
    with connect(f"{limited.ws}/?token={token}", open_timeout=30) as ws:  # spends one
        for _ in range(USER_BUDGET + 3):
            ws.send(json.dumps({"action": "ping"}))
        answers = [json.loads(ws.recv(timeout=30)) for _ in range(USER_BUDGET + 3)]
    pongs = [a for a in answers if a["type"] == "pong"]
    refused = [a["data"] for a in answers if a["type"] == "error"]
    assert len(pongs) == USER_BUDGET - 1 and len(refused) == 4
    assert {r["code"] for r in refused} == {"rate_limited"}
    assert all(1 <= r["retry_after"] <= 300 for r in refused)
    with pytest.raises(InvalidStatus):
        connect(f"{limited.ws}/?token={token}", open_timeout=30)


def test_unknown_tokens_from_one_address_are_refused_before_a_lookup(limited):
    """Issue 33 item 6: past the address's budget of tokens of no session (5 here), such a
    token is answered 429 with Retry-After, before any lookup."""
    forged = "wbl_1234567890_" + "x" * 43  # names a user, and is nobody's
    with _client_from(limited, "127.0.0.9") as client:
        client.headers["Authorization"] = f"Bearer {forged}"
        answers = [client.get("/v1/users/me") for _ in range(AUTH_FAILURE_BUDGET + 1)]
    assert [a.status_code for a in answers] == [401] * AUTH_FAILURE_BUDGET + [429]
    refused = answers[-1]
    assert refused.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(refused.headers["Retry-After"]) <= 300
