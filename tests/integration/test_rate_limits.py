"""Request budgets against real Redis: the window counter under racing requests, and the
AccountsFunction handler answering with X-RateLimit headers and 429s (events from events/)."""

from __future__ import annotations

import base64
import copy
import json
import threading
import time
from collections.abc import Iterator

import pytest
from warble import keys, services
from warble.dal.rate_limit import RedisWindowCounter

from tests.integration.test_sample_events import Context, _as, _event, _load_function

pytestmark = pytest.mark.integration


@pytest.fixture
def counter(redis) -> RedisWindowCounter:
    services.reset()
    return RedisWindowCounter(services.container().redis)


def test_fifty_racing_requests_never_overshoot_the_limit(counter, redis):
    """Given a budget of 10 and 50 requests released at once from 50 threads, exactly 10 are
    counted, each told a different remaining count, and the 40 others are refused."""
    start = threading.Barrier(50)
    results = []
    lock = threading.Lock()

    def request() -> None:
        start.wait()
        taken = counter.take("{rl:user:race}", 10, 60_000)
        with lock:
            results.append(taken)

    threads = [threading.Thread(target=request) for _ in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    allowed = [t for t in results if t.allowed]
    assert len(allowed) == 10
    assert sorted(t.used for t in allowed) == list(range(1, 11))
    assert all(t.used == 10 for t in results if not t.allowed)
    assert redis.get("{rl:user:race}") == "10"
    assert 0 < redis.pttl("{rl:user:race}") <= 60_000


def test_a_refused_request_is_not_counted_and_the_window_ends_on_time(counter, redis):
    for used in (1, 2):
        taken = counter.take("{rl:user:w}", 2, 400)
        assert taken.allowed and taken.used == used and 0 < taken.reset_ms <= 400
    refused = counter.take("{rl:user:w}", 2, 400)
    assert not refused.allowed and refused.used == 2
    assert redis.get("{rl:user:w}") == "2"  # the refusal left the count as it was
    # The window started at the first request, and refusals did not move its end.
    deadline = time.monotonic() + 10
    while not counter.take("{rl:user:w}", 2, 400).allowed:
        assert time.monotonic() < deadline, "the window never ended"
        time.sleep(0.05)
    assert redis.get("{rl:user:w}") == "1"  # a fresh window


def test_giving_back_after_the_window_ended_creates_nothing(counter, redis):
    counter.take("{login:late}:failures", 5, 60_000)
    redis.delete("{login:late}:failures")  # the window expired
    counter.give_back("{login:late}:failures")
    assert redis.exists("{login:late}:failures") == 0


# ---- through the handler skeleton --------------------------------------------------------


@pytest.fixture
def low_budgets(monkeypatch, accounts) -> Iterator[None]:
    """Budgets small enough to spend in a test; the settings and services read them afresh."""
    monkeypatch.setenv("RATE_LIMIT_USER_REQUESTS", "3")
    monkeypatch.setenv("RATE_LIMIT_SIGNUP_IP_REQUESTS", "2")
    monkeypatch.setenv("RATE_LIMIT_SIGNUP_IP_WINDOW_SECONDS", "1800")
    monkeypatch.setenv("RATE_LIMIT_LOGIN_IP_REQUESTS", "4")
    monkeypatch.setenv("RATE_LIMIT_AUTH_FAILURES_IP_REQUESTS", "3")
    services.reset()
    yield
    monkeypatch.undo()
    services.reset()


def _headers(answer: dict) -> dict[str, str]:
    return {k.lower(): v for k, v in (answer.get("headers") or {}).items()}


def _error_code(answer: dict) -> str:
    return str(json.loads(answer["body"])["error"]["code"])


def _signup_event(name: str, source_ip: str) -> dict:
    event = copy.deepcopy(_event("accounts/signup.json"))
    body = json.loads(base64.b64decode(event["body"]))
    body.update(username=name, email=f"{name}@example.com")
    event["body"] = base64.b64encode(json.dumps(body).encode()).decode()
    event["requestContext"]["http"]["sourceIp"] = source_ip
    return event


def test_every_answer_of_a_user_carries_the_headers_and_the_fourth_is_a_429(accounts, low_budgets):
    issued = accounts.signup("rita", "rita@example.com", "correct horse", None, "phone")
    handler = _load_function("accounts").handler
    before = time.time()

    ok = handler(_as(_event("accounts/get-me.json"), issued), Context())
    missing = handler(_as(_event("accounts/get-user.json"), issued), Context())  # unknown id
    bad_json = {"body": "{", "isBase64Encoded": False}
    invalid = handler(_as(_event("accounts/patch-me.json"), issued) | bad_json, Context())
    refused = handler(_as(_event("accounts/get-me.json"), issued), Context())
    after = time.time()

    assert [a["statusCode"] for a in (ok, missing, invalid, refused)] == [200, 404, 400, 429]
    remaining = [_headers(a)["x-ratelimit-remaining"] for a in (ok, missing, invalid, refused)]
    assert remaining == ["2", "1", "0", "0"]
    for answer in (ok, missing, invalid, refused):
        headers = _headers(answer)
        assert headers["x-ratelimit-limit"] == "3"
        assert before < int(headers["x-ratelimit-reset"]) <= after + 301
    assert _error_code(refused) == "rate_limited"
    assert json.loads(refused["body"])["error"]["message"]
    assert 1 <= int(_headers(refused)["retry-after"]) <= 300
    assert "retry-after" not in _headers(ok)


def test_signups_are_counted_per_client_address(accounts, low_budgets, pg):
    handler = _load_function("accounts").handler
    first = handler(_signup_event("ipa1", "198.51.100.7"), Context())
    second = handler(_signup_event("ipa2", "198.51.100.7"), Context())
    third = handler(_signup_event("ipa3", "198.51.100.7"), Context())
    elsewhere = handler(_signup_event("ipb1", "203.0.113.9"), Context())

    assert [a["statusCode"] for a in (first, second, third, elsewhere)] == [201, 201, 429, 201]
    assert _error_code(third) == "rate_limited"
    assert 1700 < int(_headers(third)["retry-after"]) <= 1800
    assert _headers(elsewhere)["x-ratelimit-remaining"] == "1"
    created = pg.execute("SELECT username FROM users ORDER BY username").fetchall()
    assert [row[0] for row in created] == ["ipa1", "ipa2", "ipb1"]  # the refused one wrote nothing


def test_logins_from_one_address_share_a_budget_beyond_the_per_login_throttle(
    accounts, low_budgets, redis
):
    """Successful logins spend it too; the fifth from one address is refused although the
    per-login throttle (five failures) has nothing against it."""
    accounts.signup("lena", "lena@example.com", "correct horse", None, "phone")
    handler = _load_function("accounts").handler
    login = _event("accounts/login.json")
    login["body"] = json.dumps({"login": "lena", "password": "correct horse"})
    login["isBase64Encoded"] = False
    login["requestContext"]["http"]["sourceIp"] = "2001:db8:1:2::5"
    answers = [handler(copy.deepcopy(login), Context()) for _ in range(5)]
    assert [a["statusCode"] for a in answers] == [200, 200, 200, 200, 429]
    assert _error_code(answers[4]) == "rate_limited"
    # The same /64, another address: the same budget.
    login["requestContext"]["http"]["sourceIp"] = "2001:db8:1:2:ffff::1"
    assert handler(login, Context())["statusCode"] == 429
    assert redis.get(keys.rate_limit("login", "2001:db8:1:2::/64")) == "4"


def test_unknown_tokens_from_one_address_stop_costing_lookups(accounts, low_budgets, redis):
    """Issue 33 item 6: a forged token (it names a real user, the rest is made up) cost a
    PostgreSQL query and a lease key each, without end. Past the address's budget of unknown
    tokens (3 here) it is refused with 429 before any lookup; another address, and any cached
    session from the same address, are not affected."""
    from warble import security

    rita = accounts.signup("rita", "rita@example.com", "correct horse", None, "phone")
    handler = _load_function("accounts").handler

    def get_me(token: str, source_ip: str) -> dict:
        event = _event("accounts/get-me.json")
        event["headers"]["authorization"] = f"Bearer {token}"
        event["requestContext"]["http"]["sourceIp"] = source_ip
        return handler(event, Context())

    assert get_me(rita.token, "192.0.2.1")["statusCode"] == 200  # her session is now cached
    forged = [security.new_token(rita.user["id"]) for _ in range(5)]
    leases = [keys.session(security.token_hash(t).hex(), rita.user["id"]).lease for t in forged]
    answers = [get_me(token, "198.51.100.7") for token in forged[:4]]
    assert [a["statusCode"] for a in answers] == [401, 401, 401, 429]
    assert _error_code(answers[3]) == "rate_limited"
    assert 1 <= int(_headers(answers[3])["retry-after"]) <= 300
    assert [redis.exists(lease) for lease in leases[:4]] == [1, 1, 1, 0]  # no lookup, no lease
    assert get_me(forged[4], "203.0.113.9")["statusCode"] == 401  # another address
    assert get_me(rita.token, "198.51.100.7")["statusCode"] == 200  # cached: never counted
