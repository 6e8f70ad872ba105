"""Password changes and resets against real PostgreSQL, Redis and moto's SES (API.md
"Accounts"): the wrong current password, other sessions ended, single-use tokens, expiry, a
newer token voiding the older, the cap of 3 emails an hour, and every session ended by a reset."""

from __future__ import annotations

import json
import os
import threading
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import boto3
import httpx
import pytest
from botocore.exceptions import ClientError
from warble import clock, services
from warble.domain.passwords.service import InvalidToken
from warble.errors import Forbidden, InvalidCredentials, Unauthorized

from infra.local.faults import FAULTS_PATH
from tests.integration.test_sample_events import Context, _load_function

pytestmark = [pytest.mark.integration, pytest.mark.redis]


def mails_to(moto, address: str) -> list[dict]:
    """What moto's SES would have sent to ``address`` (the local runtime's /_aws/ses)."""
    answer = httpx.get(f"{moto.url}/_aws/ses", timeout=10).raise_for_status().json()
    return [m for m in answer["messages"] if address in m["Destination"]["ToAddresses"]]


def token_of(message: dict) -> str:
    """The token of a reset email's link (its query's ``token``)."""
    text = message["Body"]["text_part"]
    link = next(word for word in text.split() if word.startswith("http"))
    return parse_qs(urlsplit(link).query)["token"][0]


@pytest.fixture
def passwords(accounts, moto):
    # This worker's moto outlives the test: its messages are forgotten first (as LocalStack's
    # DELETE /_aws/ses does), so each test reads only its own.
    httpx.delete(f"{moto.url}/_aws/ses", timeout=10).raise_for_status()
    assert httpx.get(f"{moto.url}/_aws/ses", timeout=10).json() == {"messages": []}
    return services.passwords()


def sign_up(accounts, name: str):
    return accounts.signup(name, f"{name}@example.com", "password1", None, "phone")


def test_a_change_needs_the_current_password_and_ends_every_other_session(accounts, passwords):
    first = sign_up(accounts, "carol")
    second = accounts.login("carol", "password1", "laptop")
    third = accounts.login("carol", "password1", "tablet")
    user_id = int(first.user["id"])

    with pytest.raises(Forbidden) as wrong:
        passwords.change(user_id, second.session.id, "not-the-password", "new-password1")
    assert (wrong.value.status, wrong.value.code) == (403, "invalid_credentials")
    assert accounts.require_token(first.token).user_id == user_id  # nothing changed

    ended = passwords.change(user_id, second.session.id, "password1", "new-password1")

    assert sorted(ended) == sorted([first.session.id, third.session.id])
    assert accounts.require_token(second.token).session_id == second.session.id
    for gone in (first, third):
        with pytest.raises(Unauthorized):
            accounts.require_token(gone.token)
    with pytest.raises(InvalidCredentials):
        accounts.login("carol", "password1", "")
    assert accounts.login("carol", "new-password1", "").user["id"] == user_id


def _queued_resets(moto) -> list[dict]:
    """Every message of the reset queue (received, so taken off it for the visibility time)."""
    sqs = boto3.client("sqs", endpoint_url=moto.url)
    url = os.environ["PASSWORD_RESET_QUEUE_URL"]
    messages: list[dict] = []
    while batch := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages"):
        messages += batch
    return messages


def test_a_reset_request_queues_the_address_as_it_came_for_known_and_unknown_alike(
    accounts, passwords, moto, pg
):
    """Issue 47 item 1: the lookup and the email made a known address answer 12 ms later than
    an unknown one. The request path now queues the address, known or not, and nothing else."""
    sign_up(accounts, "iris")
    _queued_resets(moto)  # this worker's queue outlives the test: emptied first
    # when a known and an unknown address ask
    passwords.request_reset("iris@example.com")
    passwords.request_reset("nobody-at-all@example.com")
    # then the request path wrote no token and sent no mail: the same work for both
    assert pg.execute("SELECT count(*) FROM password_resets").fetchone()[0] == 0
    assert mails_to(moto, "iris@example.com") == []
    messages = _queued_resets(moto)
    assert sorted(json.loads(m["Body"])["email"] for m in messages) == [
        "iris@example.com",
        "nobody-at-all@example.com",
    ]
    # when PasswordResetFunction takes the batch (with a message that is no request)
    records = [{"messageId": m["MessageId"], "body": m["Body"]} for m in messages]
    records.append({"messageId": "junk", "body": "not json"})
    function = _load_function("passwords")  # PasswordResetFunction's own entry point
    assert function.handler({"Records": records}, Context()) == {"batchItemFailures": []}
    # then the known address, only, has its email
    assert len(mails_to(moto, "iris@example.com")) == 1
    assert mails_to(moto, "nobody-at-all@example.com") == []
    assert pg.execute("SELECT count(*) FROM password_resets").fetchone()[0] == 1


def test_a_reset_mails_a_single_use_link_that_sets_the_password_and_ends_every_session(
    accounts, passwords, moto, pg
):
    first = sign_up(accounts, "dora")
    second = accounts.login("dora", "password1", "laptop")
    assert passwords.mail_reset("DORA@example.com") is True

    [mail] = mails_to(moto, "dora@example.com")
    assert mail["Source"] == "no-reply@warble.example"
    assert mail["Subject"] and mail["Body"]["html_part"] and mail["Timestamp"].endswith("Z")
    token = token_of(mail)
    assert token in mail["Body"]["html_part"]
    # stored only hashed
    stored = pg.execute("SELECT token_hash FROM password_resets").fetchall()
    assert len(stored) == 1 and token.encode() not in bytes(stored[0][0])

    passwords.confirm_reset(token, "brand-new-pass")

    for gone in (first, second):
        with pytest.raises(Unauthorized):
            accounts.require_token(gone.token)
    with pytest.raises(InvalidCredentials):
        accounts.login("dora", "password1", "")
    accounts.login("dora", "brand-new-pass", "")
    with pytest.raises(InvalidToken):  # used once
        passwords.confirm_reset(token, "another-pass1")
    accounts.login("dora", "brand-new-pass", "")


def test_an_unknown_address_gets_nothing_and_an_unknown_token_is_refused(accounts, passwords, moto):
    assert passwords.mail_reset("nobody-here@example.com") is False
    assert mails_to(moto, "nobody-here@example.com") == []
    for token in ("x" * 43, "short", "y" * 200):
        with pytest.raises(InvalidToken) as refused:
            passwords.confirm_reset(token, "brand-new-pass")
        assert (refused.value.status, refused.value.code) == (400, "invalid_token")


def test_a_token_expires_after_30_minutes(accounts, passwords, moto, monkeypatch):
    sign_up(accounts, "ezra")
    issued_at = clock.now()
    passwords.mail_reset("ezra@example.com")
    [mail] = mails_to(moto, "ezra@example.com")

    monkeypatch.setattr(clock, "now", lambda: issued_at + timedelta(minutes=30, seconds=1))
    with pytest.raises(InvalidToken):
        passwords.confirm_reset(token_of(mail), "brand-new-pass")
    monkeypatch.undo()
    accounts.login("ezra", "password1", "")


def test_a_token_works_until_its_30_minutes_end(accounts, passwords, moto, monkeypatch):
    sign_up(accounts, "esme")
    issued_at = clock.now()
    passwords.mail_reset("esme@example.com")
    [mail] = mails_to(moto, "esme@example.com")
    monkeypatch.setattr(clock, "now", lambda: issued_at + timedelta(minutes=29))
    passwords.confirm_reset(token_of(mail), "brand-new-pass")
    monkeypatch.undo()
    accounts.login("esme", "brand-new-pass", "")


def test_a_newer_token_voids_the_older_ones(accounts, passwords, moto):
    sign_up(accounts, "fern")
    passwords.mail_reset("fern@example.com")
    passwords.mail_reset("fern@example.com")
    older, newer = mails_to(moto, "fern@example.com")
    with pytest.raises(InvalidToken):
        passwords.confirm_reset(token_of(older), "brand-new-pass")
    passwords.confirm_reset(token_of(newer), "brand-new-pass")
    accounts.login("fern", "brand-new-pass", "")


def test_a_change_voids_a_mailed_token(accounts, passwords, moto):
    issued = sign_up(accounts, "gale")
    passwords.mail_reset("gale@example.com")
    [mail] = mails_to(moto, "gale@example.com")
    passwords.change(int(issued.user["id"]), issued.session.id, "password1", "changed-pass1")
    with pytest.raises(InvalidToken):
        passwords.confirm_reset(token_of(mail), "brand-new-pass")
    accounts.login("gale", "changed-pass1", "")


def test_at_most_3_emails_per_address_an_hour_even_when_requests_race(
    accounts, passwords, moto, monkeypatch
):
    sign_up(accounts, "hana")
    results: list[bool] = []
    barrier = threading.Barrier(8)

    def ask() -> None:
        barrier.wait()
        results.append(services.passwords().mail_reset("hana@example.com"))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(results) == [False] * 5 + [True] * 3
    mails = mails_to(moto, "hana@example.com")
    assert len(mails) == 3
    # the one live token is the newest mailed: a refused request voided nothing
    live = [m for m in mails if _works(passwords, m)]
    assert len(live) == 1

    # an hour later the address may ask again
    later = clock.now() + timedelta(hours=1, seconds=1)
    monkeypatch.setattr(clock, "now", lambda: later)
    assert passwords.mail_reset("hana@example.com") is True
    assert len(mails_to(moto, "hana@example.com")) == 4


def _works(passwords, mail: dict) -> bool:
    try:
        passwords.confirm_reset(token_of(mail), "brand-new-pass")
    except InvalidToken:
        return False
    return True


def test_a_reset_ses_refused_spends_nothing_of_the_cap_and_is_sent_when_asked_again(
    accounts, passwords, moto
):
    """Fault 8: the queue delivers a request again after SES failed it; the failed try's token
    is withdrawn, so the cap of 3 still lets the redelivery send (it left nothing before)."""
    sign_up(accounts, "ines")
    url = f"{moto.url}{FAULTS_PATH}"
    httpx.put(url, json={"ses": 1.0}, timeout=10).raise_for_status()
    try:
        for _ in range(3):  # three deliveries while SES is down
            with pytest.raises(ClientError):
                passwords.mail_reset("ines@example.com")
    finally:
        httpx.delete(url, timeout=10).raise_for_status()
    assert mails_to(moto, "ines@example.com") == []

    assert passwords.mail_reset("ines@example.com") is True  # SES back: the fourth delivery
    [mail] = mails_to(moto, "ines@example.com")
    assert _works(passwords, mail)
