"""Accounts against real PostgreSQL and Redis: uniqueness, login, throttling, sessions."""

from __future__ import annotations

import threading

import psycopg
import pytest
from warble import keys
from warble.domain.accounts.answers import Principal
from warble.errors import (
    Conflict,
    Forbidden,
    InvalidCredentials,
    NotFound,
    RateLimited,
    Unauthorized,
)

pytestmark = [pytest.mark.integration, pytest.mark.redis]


def test_username_and_email_are_unique_regardless_of_case(accounts, pg):
    accounts.signup("alice", "alice@example.com", "password1", None, "")
    with pytest.raises(Conflict) as taken:
        accounts.signup("ALICE", "other@example.com", "password1", None, "")
    assert taken.value.code == "username_taken"
    with pytest.raises(Conflict) as email_taken:
        accounts.signup("alice2", "Alice@Example.COM", "password1", None, "")
    assert email_taken.value.code == "email_taken"
    assert pg.execute("SELECT count(*) FROM users").fetchone()[0] == 1


def test_racing_signups_for_one_username_create_one_user(accounts, pg):
    outcomes: list[str] = []

    def attempt(i: int) -> None:
        try:
            accounts.signup(
                "Racer" if i % 2 else "racer", f"r{i}@example.com", "password1", None, ""
            )
            outcomes.append("ok")
        except Conflict:
            outcomes.append("conflict")

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count("ok") == 1
    assert pg.execute("SELECT count(*) FROM users").fetchone()[0] == 1


def test_passwords_and_tokens_are_stored_only_as_hashes(accounts, pg):
    issued = accounts.signup("bob", "bob@example.com", "password1", None, "")
    row = pg.execute("SELECT password_hash FROM users").fetchone()
    assert row[0].startswith("$2b$") and "password1" not in row[0]
    stored = pg.execute("SELECT token_hash FROM sessions").fetchone()[0]
    assert issued.token.encode() not in bytes(stored) and len(bytes(stored)) == 32


def test_login_by_username_or_email_opens_separate_sessions(accounts):
    accounts.signup("erin", "erin@example.com", "password1", None, "phone")
    by_name = accounts.login("ERIN", "password1", "laptop")
    by_mail = accounts.login("erin@EXAMPLE.com", "password1", "tablet")
    assert by_name.session.id != by_mail.session.id
    me = Principal(by_name.user["id"], by_name.session.id)
    sessions = accounts.list_sessions(me)
    assert len(sessions.items) == 3
    assert [session.current for session in sessions.items].count(True) == 1


def test_unknown_login_and_wrong_password_are_indistinguishable(accounts):
    accounts.signup("frank", "frank@example.com", "password1", None, "")
    with pytest.raises(InvalidCredentials) as unknown:
        accounts.login("nobody", "password1", "")
    with pytest.raises(InvalidCredentials) as wrong:
        accounts.login("frank", "password2", "")
    assert (unknown.value.code, unknown.value.message) == (wrong.value.code, wrong.value.message)


def test_five_failures_lock_the_login_even_when_attempts_race(accounts, redis):
    gina = accounts.signup("gina", "gina@example.com", "password1", None, "")
    results: list[str] = []

    def attempt() -> None:
        try:
            accounts.login("gina", "wrong-password", "")
        except InvalidCredentials:
            results.append("401")
        except RateLimited:
            results.append("429")

    threads = [threading.Thread(target=attempt) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count("401") == 5 and results.count("429") == 7
    # The right password is refused too until the window passes
    with pytest.raises(RateLimited) as limited:
        accounts.login("GINA", "password1", "")
    assert 1 <= limited.value.retry_after <= 900
    subject = f"user:{gina.user['id']}"  # the window passes
    redis.delete(keys.login_failures(subject), keys.login_source_failures(subject, ""))
    assert accounts.login("gina", "password1", "").user["username"] == "gina"


@pytest.fixture(params=["libc", "icu"])
def collated_accounts(request, accounts, database, pg):
    """The accounts service on a database of each collation provider: this tier's (libc,
    C.UTF-8, whose lower() folds 'İ' to 'i' like Aurora PostgreSQL's default en_US.UTF-8: both
    take their case mapping from glibc), and one created with ICU's en-US, which folds it to
    'i̇' as Python does."""
    if request.param == "libc":
        yield accounts
        return
    import os

    from psycopg import sql
    from warble import services

    from infra.local.database import drop_database, prepare_database

    name = f"{database}_icu"
    drop_database(name)
    with psycopg.connect("host=127.0.0.1 user=postgres dbname=postgres", autocommit=True) as conn:
        conn.execute(
            sql.SQL(
                "CREATE DATABASE {} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'"
                " LOCALE 'C.UTF-8'"
            ).format(sql.Identifier(name))
        )
    prepare_database(name)
    saved = os.environ["DB_NAME"]
    os.environ["DB_NAME"] = name
    services.reset()
    try:
        yield services.accounts()
    finally:
        os.environ["DB_NAME"] = saved
        services.reset()
        drop_database(name)


def test_failures_count_per_account_whichever_spelling_named_it(collated_accounts):
    """Issue 33 item 2: the throttle counted Python's ``login.lower()`` while the lookup used
    PostgreSQL's ``lower()``: after five failures on ``sxiuser``, ``sxİuser`` (U+0130) logged
    in with the right password, and username and email were two buckets of five."""
    accounts = collated_accounts
    user = accounts.signup("sxiuser", "sxiuser@example.com", "password1", None, "")
    for login in ("sxiuser", "SXIUSER", "sxiuser@example.com", "SxiUser@Example.COM", "sxIUSER"):
        with pytest.raises(InvalidCredentials):
            accounts.login(login, "wrong password", "")
    # every name of the account is locked, the right password too
    for login in ("sxiuser", "SXIUSER@EXAMPLE.COM"):
        with pytest.raises(RateLimited):
            accounts.login(login, "password1", "")
    # a spelling that some collation's lower() folds to it opens nothing either
    for login in ("sxİuser", "SXİUSER", "sxİuser@example.com"):
        with pytest.raises((RateLimited, InvalidCredentials)):
            accounts.login(login, "password1", "")
    # and the lookups go by the same rule
    assert accounts.profile_by_username("SxIuSeR")["id"] == user.user["id"]
    with pytest.raises(NotFound):
        accounts.profile_by_username("sxİuser")


def test_a_unicode_spelling_does_not_unlock_a_locked_account(collated_accounts):
    # given five failures by the username (one bucket even before the fix)
    accounts = collated_accounts
    accounts.signup("sxiuser", "sxiuser@example.com", "password1", None, "")
    for _ in range(5):
        with pytest.raises(InvalidCredentials):
            accounts.login("sxiuser", "wrong password", "")
    # then 'İ' (U+0130), which glibc's lower() folds to 'i', does not log in
    with pytest.raises((RateLimited, InvalidCredentials)):
        accounts.login("sxİuser", "password1", "")


def test_a_login_that_names_no_account_is_throttled_alike(accounts):
    for _ in range(5):
        with pytest.raises(InvalidCredentials):
            accounts.login("nobody_here", "password1", "")
    with pytest.raises(RateLimited):
        accounts.login("NOBODY_HERE", "password1", "")


def test_revoked_session_is_refused_on_the_next_request(accounts):
    issued = accounts.signup("hank", "hank@example.com", "password1", None, "")
    other = accounts.login("hank", "password1", "second device")
    principal, _ = accounts.authenticate(issued.token)
    assert principal.session_id == issued.session.id

    accounts.revoke(Principal(principal.user_id, other.session.id), issued.session.id)

    # The token no longer opens a session, even though its session had been cached.
    assert accounts.authenticate(issued.token) is None
    with pytest.raises(Unauthorized):
        accounts.require_token(issued.token)
    # The other session still works
    assert accounts.authenticate(other.token) is not None
    assert accounts.require_token(other.token).session_id == other.session.id


def test_ending_every_session_but_one_ends_their_tokens_and_registrations(accounts):
    """``end_sessions``, as a password change uses it (keep the current one) and a reset or an
    account's deletion (all): tokens refused from its return, the connections of the ended
    sessions forgotten (their closes go to @connections), the kept one's untouched."""
    from warble import services

    phone = accounts.signup("lena", "lena@example.com", "password1", None, "phone")
    laptop = accounts.login("lena", "password1", "laptop")
    tablet = accounts.login("lena", "password1", "tablet")
    user = phone.user["id"]
    registry = services.container().connections
    for connection, session in (("c-phone", phone), ("c-laptop", laptop), ("c-tablet", tablet)):
        registry.add(user, connection, 0, 3600, session.session.id)
    for issued in (phone, laptop, tablet):
        accounts.require_token(issued.token)  # cached
    ended = accounts.end_sessions(user, keep=phone.session.id)
    assert sorted(ended) == sorted([laptop.session.id, tablet.session.id])
    for issued in (laptop, tablet):
        with pytest.raises(Unauthorized):
            accounts.require_token(issued.token)
    assert accounts.require_token(phone.token).session_id == phone.session.id
    assert registry.for_user(user) == ["c-phone"]
    # ending them again ends nothing; ending all ends the last one
    assert accounts.end_sessions(user, [laptop.session.id]) == []
    assert accounts.end_sessions(user) == [phone.session.id]
    assert registry.for_user(user) == []


def test_a_revocation_whose_cache_drop_was_lost_is_caught_by_the_next_flush(accounts, pg, redis):
    issued = accounts.signup("kira", "kira@example.com", "password1", None, "")
    assert accounts.require_token(issued.token).session_id == issued.session.id  # cached, seen
    # Revoked in PostgreSQL, but the cache entry stays (Redis lost the invalidation).
    pg.execute("UPDATE sessions SET revoked_at = now() WHERE id = %s", (issued.session.id,))
    assert accounts.require_token(issued.token).session_id == issued.session.id  # until a flush
    # The flush finds it no longer live: the stale entry is dropped, the answer is 401.
    assert accounts.flush_last_seen() == 1
    with pytest.raises(Unauthorized):
        accounts.require_token(issued.token)
    with pytest.raises(Unauthorized):
        accounts.require_token(issued.token)


def test_last_seen_is_noted_in_redis_and_written_in_batches(accounts, pg, redis):
    """Issue 30 item 5: a request writes nothing to PostgreSQL for last_seen_at (one UPDATE per
    active minute and session passed one Aurora writer at 100M daily users); the flush writes
    every session seen since the last one, a batch to a statement."""
    issued = [accounts.signup(f"seen{i}", f"seen{i}@example.com", "password1", None, "")
              for i in range(3)]  # fmt: skip

    def last_seen() -> dict[int, object]:
        return dict(pg.execute("SELECT id, last_seen_at FROM sessions").fetchall())

    before = last_seen()
    for session in issued:
        for _ in range(3):
            accounts.require_token(session.token)
    assert last_seen() == before  # nothing written by the requests
    assert accounts.flush_last_seen(batch=2) == 3
    after = last_seen()
    assert all(after[s.session.id] > before[s.session.id] for s in issued)
    assert accounts.flush_last_seen() == 0  # taken: nothing seen since


def test_a_user_cannot_revoke_someone_elses_session(accounts):
    victim = accounts.signup("ivan", "ivan@example.com", "password1", None, "")
    attacker = accounts.signup("judy", "judy@example.com", "password1", None, "")
    with pytest.raises(NotFound):
        accounts.revoke(Principal(attacker.user["id"], attacker.session.id), victim.session.id)
    assert accounts.authenticate(victim.token) is not None


def test_malformed_and_unknown_tokens_are_refused(accounts):
    assert accounts.authenticate("") is None
    assert accounts.authenticate("not-a-token") is None
    assert accounts.authenticate("wbl_" + "x" * 43) is None


def test_a_release_after_the_window_expired_leaves_no_key_behind(redis):
    from warble.dal.account_state import LoginThrottle

    throttle = LoginThrottle(redis, max_failures=5, window_seconds=900)
    assert throttle.reserve("late") == 0
    redis.delete(keys.login_failures("late"))  # the window passed while the password was checked
    throttle.release("late")
    assert redis.exists(keys.login_failures("late")) == 0


def test_a_signup_insert_run_again_after_it_committed_is_not_a_false_conflict(accounts, pg):
    """Database.run re-runs a write on a fresh connection when the old one broke, which may be
    after the write committed: the re-run must find its own row, not answer 409."""
    from warble import services
    from warble.dal.accounts import DuplicateAccount, UserRepository

    users = UserRepository(services.container().database)
    first = users.insert(4242, "retried", "retried@example.com", "hash", "Retried")
    again = users.insert(4242, "retried", "retried@example.com", "hash", "Retried")
    assert again == first
    with pytest.raises(DuplicateAccount):  # someone else's id: a real conflict
        users.insert(4343, "RETRIED", "other@example.com", "hash", "Other")


def test_reads_fall_back_to_postgres_while_redis_is_unreachable(accounts, pg, redis):
    """The authorizer's session lookup and profile reads go through the lease-guarded cache;
    with the cache down they answer from PostgreSQL instead of failing."""
    import redis as redis_lib
    from redis.backoff import NoBackoff
    from redis.retry import Retry
    from warble import services
    from warble.dal.accounts import SessionRepository, UserRepository
    from warble.dal.cache import LeasedCache
    from warble.domain.accounts.service import AccountService

    issued = accounts.signup("outage", "outage@example.com", "password1", None, "phone")
    # A cache that refuses at once, tried once: redis-py 8's default of ten retries with
    # backoff spent 17 s of the suite here on waits that test nothing of ours.
    down = redis_lib.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2,
                           retry=Retry(NoBackoff(), 0), decode_responses=True)  # fmt: skip
    live = services.accounts()
    degraded = AccountService(
        users=UserRepository(services.container().database),
        sessions=SessionRepository(services.container().database),
        profiles=LeasedCache(down, 60, keys.profile),
        session_cache=LeasedCache(down, 60, lambda s: keys.session(s[0].hex(), s[1])),
        throttle=live._throttle,
        lookups=live._lookups,
        ids=services.ids(),
        policy=live._policy,
        connections=live._connections,
        failures=live._failures,
    )
    verdict = degraded.authenticate(issued.token)
    assert verdict is not None and verdict[0].user_id == issued.user["id"]
    assert degraded.profile(issued.user["id"])["username"] == "outage"
    assert degraded.profiles([issued.user["id"]])[issued.user["id"]]["username"] == "outage"


def test_an_admin_username_is_never_signed_up_only_created_by_the_operator(
    monkeypatch, pg, redis, moto
):
    """Issue 33 item 4: AdminUsernames was checked by username only, so whoever signed up a
    listed name that did not exist yet became an admin."""
    from warble import services

    monkeypatch.setenv("ADMIN_USERNAMES", "someone, Warble_Admin")
    services.reset()
    accounts = services.accounts()
    # issue 47 item 8: and every name that reads as one (its TR39-style skeleton)
    lookalikes = ("warbleadmin", "warble_admin_", "Warb1e_Adm1n", "WARBLE_ADMlN", "s0me_one2")
    for spelling in ("warble_admin", "WARBLE_ADMIN", "Warble_Admin", "someone", *lookalikes):
        with pytest.raises(Conflict) as taken:
            accounts.signup(spelling, f"{spelling}@example.com", "password1", None, "")
        assert taken.value.code == "username_taken"
    # while other names that share words with it are free
    assert accounts.signup("warble_fan", "fan@example.com", "password1", None, "").user["id"]
    admin_id, created = accounts.create_admin("warble_admin", "ops@example.com", "password1")
    assert created and accounts.login("WARBLE_ADMIN", "password1", "").user["id"] == admin_id
    assert accounts.create_admin("Warble_Admin", "other@example.com", "x" * 8) == (admin_id, False)
    with pytest.raises(ValueError):
        accounts.create_admin("mallory", "mallory@example.com", "password1")
    # and OperatorFunction, which runs it for the operator, answers what it did
    from tests.integration.test_sample_events import Context, _load_function

    operator = _load_function("operator").handler
    task = {"task": "create_admin", "email": "ops2@example.com", "password": "password1"}
    assert operator({**task, "username": "someone"}, Context())["created"] is True
    assert operator({**task, "username": "warble_admin"}, Context())["created"] is False
    services.reset()


def test_deleting_the_account_spends_its_failed_logins(accounts):
    """Issue 47 item 2: with a stolen token, wrong passwords on DELETE /v1/users/me answered
    403 without end. They spend the account's failed logins, as a password change's do."""
    # given a session (a stolen token, say)
    owner = accounts.signup("ivy", "ivy@example.com", "password1", None, "")
    me = accounts.require_token(owner.token)
    # when five wrong passwords are tried
    for _ in range(5):
        with pytest.raises(Forbidden):
            accounts.delete_account(me, "not-the-password")
    # then the sixth, the right one included, is a 429 and the account stays
    with pytest.raises(RateLimited) as limited:
        accounts.delete_account(me, "password1")
    assert 1 <= limited.value.retry_after <= 900
    assert accounts.require_token(owner.token).user_id == me.user_id
    # and they were the account's failed logins: the login is locked as well
    with pytest.raises(RateLimited):
        accounts.login("ivy", "password1", "")


def test_an_address_that_fails_locks_out_itself_not_the_owner(accounts):
    """Issue 47 item 3: five wrong passwords every 15 minutes, from anywhere, locked the owner
    out of their own account. Failures now count per account and client address (OWASP's "lock
    out by account and source"), with a larger budget for the addresses the account never
    logged in from, all told, which bounds guessing from many addresses."""
    owner = accounts.signup("jude", "jude@example.com", "password1", None, "")
    home, attacker, travel = "198.51.100.7", "203.0.113.9", "192.0.2.33"
    accounts.login("jude", "password1", "", home)  # the owner's address is a known one
    # when an attacker fails five times from one address
    for _ in range(5):
        with pytest.raises(InvalidCredentials):
            accounts.login("jude", "wrong password", "", attacker)
    # then that address is locked out, the right password included
    with pytest.raises(RateLimited) as limited:
        accounts.login("jude", "password1", "", attacker)
    assert 1 <= limited.value.retry_after <= 900
    # and the owner is not: from home, and from an address never seen before
    assert accounts.login("jude", "password1", "", home).user["id"] == owner.user["id"]
    assert accounts.login("JUDE", "password1", "", travel).user["id"] == owner.user["id"]
    # when attackers spend the account's budget from nine more addresses (50 failures in all)
    for n in range(9):
        for _ in range(5):
            with pytest.raises(InvalidCredentials):
                accounts.login("jude", "wrong password", "", f"203.0.113.{100 + n}")
    # then a new address is refused, the account's known ones still log in
    with pytest.raises(RateLimited):
        accounts.login("jude", "password1", "", "192.0.2.99")
    for known in (home, travel):
        assert accounts.login("jude", "password1", "", known).user["id"] == owner.user["id"]
