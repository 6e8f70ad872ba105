"""WebSocket connect tickets against real Redis (one node and a cluster) and PostgreSQL: the
store keeps a ticket's claim once and for its time only, two racing connects with one ticket
get it once, and the handlers (the ticket route, the $connect authorizer) open the session's
connection with it exactly as with its token, and write neither into a log or a store."""

from __future__ import annotations

import copy
import io
import json
import threading
import time
from collections.abc import Iterator

import pytest
from warble import keys, security, services
from warble.dal.account_state import RedisSocketTickets
from warble.domain.accounts.ports import TicketClaim

from tests.integration.test_sample_events import Context, _as, _effect, _event, _load_function

pytestmark = pytest.mark.integration


def _claim(user_id: int = 42, expires_in_ms: int = 30_000) -> TicketClaim:
    token = security.new_token(user_id)
    return TicketClaim(
        user_id, 7001, security.token_hash(token), True, int(time.time() * 1000) + expires_in_ms
    )


@pytest.mark.redis
def test_a_claim_is_taken_once(redis):
    store = RedisSocketTickets(services.container().redis)
    claim, ticket_hash = _claim(), security.token_hash(security.new_ticket(42))
    store.put(ticket_hash, claim, 30_000)
    assert store.take(ticket_hash, 42) == claim
    assert store.take(ticket_hash, 42) is None
    # and under its user's tag only: another user's key for the same hash is another key
    store.put(ticket_hash, claim, 30_000)
    assert store.take(ticket_hash, 43) is None
    assert store.take(ticket_hash, 42) == claim


@pytest.mark.redis
def test_a_claim_is_gone_once_its_time_is_up(redis):
    store = RedisSocketTickets(services.container().redis)
    ticket_hash = security.token_hash(security.new_ticket(42))
    store.put(ticket_hash, _claim(), 300)
    key = keys.socket_ticket(42, ticket_hash.hex())
    assert 0 < redis.pttl(key) <= 300
    deadline = time.monotonic() + 10
    while redis.exists(key) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.take(ticket_hash, 42) is None


def _race(store: RedisSocketTickets, ticket_hash: bytes, racers: int) -> list[TicketClaim | None]:
    """What each of ``racers`` threads took, all let go at once."""
    start = threading.Barrier(racers)
    won: list[TicketClaim | None] = []

    def take() -> None:
        start.wait()
        won.append(store.take(ticket_hash, 42))

    threads = [threading.Thread(target=take) for _ in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return won


@pytest.mark.redis
def test_of_racing_takes_of_one_ticket_exactly_one_wins(redis):
    store = RedisSocketTickets(services.container().redis)
    for _ in range(20):
        ticket_hash = security.token_hash(security.new_ticket(42))
        store.put(ticket_hash, _claim(), 30_000)
        won = _race(store, ticket_hash, racers=8)
        assert len(won) == 8
        assert sum(found is not None for found in won) == 1


# ---- through the handlers ----------------------------------------------------------------------
@pytest.fixture
def session(accounts):
    return accounts.signup("alice", "alice@example.com", "correct horse", None, "phone")


def _ticket(session, idempotency_key: str | None = None) -> dict:
    event = _as(_event("accounts/socket-ticket.json"), session)
    if idempotency_key is not None:
        event["headers"]["idempotency-key"] = idempotency_key
    answer = _load_function("accounts").handler(event, Context())
    assert answer["statusCode"] == 201, answer
    assert answer["headers"]["Cache-Control"] == "no-store"
    body: dict = json.loads(answer["body"])
    return body


def _authorize(**query: str) -> dict:
    event = copy.deepcopy(_event("websocket/authorize.json"))
    event["queryStringParameters"] = query
    event["multiValueQueryStringParameters"] = {k: [v] for k, v in query.items()}
    answer: dict = _load_function("websocket").handler(event, Context())
    return answer


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    """What the functions' logger writes, at DEBUG (the suite runs it at WARNING), into a
    buffer; its level and stream restored after."""
    from warble.skeleton import logger

    level, buffer = logger.log_level, io.StringIO()
    stream = logger.registered_handler.setStream(buffer)  # type: ignore[attr-defined]
    logger.setLevel("DEBUG")
    logger.debug("log lines captured")
    yield buffer
    logger.setLevel(level)
    logger.registered_handler.setStream(stream)  # type: ignore[attr-defined]


def test_a_ticket_opens_its_sessions_connection_once(session, redis, log_lines):
    # given a ticket of the session
    issued = _ticket(session)
    assert set(issued) == {"ticket", "expires_at"}
    # when the socket connects with it, then it is allowed as the session's token would be
    allowed = _authorize(ticket=issued["ticket"])
    assert _effect(allowed) == "Allow"
    by_token = _authorize(token=session.token)
    assert allowed["principalId"] == by_token["principalId"] == str(session.user["id"])
    assert allowed["context"] == by_token["context"]
    assert allowed["context"]["session_id"] == str(session.session.id)
    # and a second connect with it is refused, as a bad token is
    assert _effect(_authorize(ticket=issued["ticket"])) == "Deny"
    # and nothing the functions logged, at any level, holds the ticket or the token
    logged = log_lines.getvalue()
    assert "log lines captured" in logged
    for secret in (issued["ticket"], session.token):
        assert secret not in logged


def test_a_forged_or_empty_ticket_is_refused_even_beside_a_good_token(session, redis):
    real = _ticket(session)["ticket"]
    forged = real[:-1] + ("A" if real[-1] != "A" else "B")
    for ticket in (forged, "", "nope", session.token):
        assert _effect(_authorize(ticket=ticket, token=session.token)) == "Deny", ticket
    assert _effect(_authorize(ticket=real)) == "Allow"  # the real one was left alone


def test_a_ticket_past_its_time_opens_nothing_even_if_the_store_kept_it(
    session, redis, monkeypatch
):
    # given a ticket, and a clock 30 s and one more past its issue (the store's key still there:
    # a lagging expiry; the key's own expiry is test_a_claim_is_gone_once_its_time_is_up)
    from warble import clock

    issued = _ticket(session)
    later = clock.epoch_ms() + 31_000
    monkeypatch.setattr(clock, "epoch_ms", lambda: later)
    assert redis.keys(keys.socket_ticket(int(session.user["id"]), "*"))
    # when the socket connects with it, then it is refused, as a bad token is
    assert _effect(_authorize(ticket=issued["ticket"])) == "Deny"
    monkeypatch.undo()


def test_a_ticket_of_a_session_that_ended_opens_nothing(accounts, session, redis):
    issued = _ticket(session)
    accounts.end_sessions(session.user["id"])
    assert _effect(_authorize(ticket=issued["ticket"])) == "Deny"


def test_the_ticket_is_never_stored_in_clear_not_even_for_an_idempotency_key(session, redis):
    # given two requests with one Idempotency-Key: each gets a ticket of its own (a repeat of
    # a ticket would be a used ticket, and keeping it would write it into the store in clear)
    first = _ticket(session, idempotency_key="k1")["ticket"]
    second = _ticket(session, idempotency_key="k1")["ticket"]
    assert first != second
    # then Redis holds each ticket's hash, never a ticket (nor the session's token)
    stored = {key: redis.dump(key) for key in redis.scan_iter("*")}
    assert keys.socket_ticket(session.user["id"], security.token_hash(first).hex()) in stored
    for secret in (first, second, session.token):
        assert not any(secret in key or secret.encode() in (v or b"") for key, v in stored.items())
