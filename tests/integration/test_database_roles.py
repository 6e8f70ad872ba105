"""The database roles of migration 0011 (issue 33 item 5): each function signs in as the role
template.yaml names (DB_USER) and can do what its queries need and nothing more. Here each role
signs in to this tier's database (the local PostgreSQL trusts 127.0.0.1: no password), and the
services run as the roles their functions do."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from psycopg import errors
from warble import services
from warble.errors import AccountSuspended

from infra.local.template import load_template
from tests.conftest import ROOT

# The roles (warble_reader, ...) and their passwords are the PostgreSQL cluster's, not a
# database's: every test that sets or reads them runs on one xdist worker, one at a time.
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("postgres_roles")]


@contextmanager
def signed_in(database: str, role: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(f"host=127.0.0.1 user={role} dbname={database}", autocommit=True) as c:
        yield c


def allowed(conn: psycopg.Connection[Any], statement: str) -> bool:
    try:
        with conn.transaction():
            conn.execute(statement)
            raise _Undo()
    except _Undo:
        return True
    except errors.InsufficientPrivilege:
        return False


class _Undo(Exception):
    """Rolls a statement that was allowed back (nothing a check runs stays)."""


USER = "INSERT INTO users (id, username, email, password_hash) VALUES (1, 'r', 'r@x.io', 'h')"
SESSION = (
    "INSERT INTO sessions (id, user_id, token_hash, expires_at)"
    " VALUES (1, {user}, '\\x00', now() + interval '1 day')"
)
CHECKS = {
    "read a profile": "SELECT id, username, email, display_name, bio, created_at FROM users",
    "read a password hash": "SELECT password_hash FROM users",
    "sign up": USER,
    "edit a profile": "UPDATE users SET bio = 'b', display_name = 'd', updated_at = now()",
    "change a password hash": "UPDATE users SET password_hash = 'x'",
    "delete a user": "DELETE FROM users",
    "read sessions": "SELECT * FROM sessions",
    "open a session": SESSION,
    "touch a session": "UPDATE sessions SET last_seen_at = now()",
    "revoke a session": "UPDATE sessions SET revoked_at = now()",
    "delete a session": "DELETE FROM sessions",
    "change the schema": "CREATE TABLE intruder (id int)",
    # people search (0020, granted by 0012)
    "search people": "SELECT user_id FROM warble_search('o', ARRAY[]::bigint[], 10)",
    "copy a followers count": "UPDATE users SET followers_count = 3",
    "write the search index": "DELETE FROM search_prefixes",
    # password resets (0030)
    "read reset tokens": "SELECT * FROM password_resets",
    "issue a reset token": (
        "INSERT INTO password_resets (token_hash, user_id, created_at, expires_at)"
        " VALUES (sha256('t'), {user}, now(), now() + interval '30 minutes')"
    ),
    "use or void a reset token": "UPDATE password_resets SET used_at = now(), voided_at = now()",
    "delete a reset token": "DELETE FROM password_resets",
    "lock a user": "SELECT id FROM users FOR NO KEY UPDATE",
    # account deletion (0035)
    "record a deleted account": "INSERT INTO deleted_accounts (id) VALUES (7)",
    "read deleted accounts": "SELECT id, deleted_at, finished_at FROM deleted_accounts",
    "finish a deletion": "UPDATE deleted_accounts SET finished_at = now()",
    # reports and cases (0042)
    "open a case": (
        "INSERT INTO report_cases (id, target_type, target_id, subject_id, subject, snapshot)"
        " VALUES (5, 'user', {user}, {user}, '{{}}', '{{}}')"
    ),
    "read and resolve cases": "UPDATE report_cases SET status = status",
    "purge cases": "DELETE FROM report_cases",
    "read and resolve reports": "UPDATE reports SET status = status",
    "delete a report": "DELETE FROM reports",
}
MAY = {
    "warble_reader": {
        "read a profile", "read sessions", "touch a session", "search people",
        "copy a followers count", "lock a user",  # the UPDATE of followers_count allows it
        "read deleted accounts", "finish a deletion", "purge cases",
    },
    "warble_accounts": {
        "read a profile", "read a password hash", "sign up", "edit a profile", "read sessions",
        "open a session", "touch a session", "revoke a session", "write the search index",
        "change a password hash", "read reset tokens", "issue a reset token",
        "use or void a reset token", "delete a reset token", "lock a user",
        "delete a user", "delete a session", "record a deleted account",
        "read deleted accounts",
        "open a case", "read and resolve cases", "read and resolve reports",
    },
    "warble_operator": {"read a profile", "sign up", "write the search index"},
}  # fmt: skip


@pytest.mark.parametrize("role", sorted(MAY))
def test_each_role_may_do_what_its_functions_need_and_nothing_more(role, pg, database):
    owner = pg.execute(
        "INSERT INTO users (id, username, email, password_hash) VALUES (2, 'o', 'o@x.io', 'h')"
        " RETURNING id"
    ).fetchone()
    assert owner is not None
    with signed_in(database, role) as conn:
        found = {
            check
            for check, statement in CHECKS.items()
            if allowed(conn, statement.format(user=owner[0]))
        }
    assert found == MAY[role]


def test_every_function_of_the_database_names_a_role_of_the_migrations():
    """template.yaml gives each function its role (Globals' warble_reader unless it says
    another), and the functions allowed in as a role are those the roles were made for."""
    template = load_template(ROOT / "template.yaml")
    default = template.globals["Function"]["Environment"]["Variables"]["DB_USER"]
    roles = {
        name: (spec.environment.get("DB_USER") or default)
        for name, spec in template.functions.items()
    }
    assert default == "warble_reader"
    assert roles["AccountsFunction"] == "warble_accounts"
    assert roles["OperatorFunction"] == "warble_operator"
    assert set(roles.values()) <= {*MAY, "warble_admin"}


def test_the_services_work_as_their_functions_roles(pg, redis, moto, monkeypatch):
    """Sign-up, login, a session check, a profile edit, a revocation, a password change, a
    reset's email and an account's deletion as warble_accounts; the session check, profile
    reads, people search, the last-seen flush, the followers count's copy and the deletion
    outbox as warble_reader; a report and a moderator's suspend as warble_accounts
    (ReportsFunction); an admin's account as warble_operator."""
    monkeypatch.setenv("ADMIN_USERNAMES", "warble_admin,warble_mod")

    def as_role(role: str) -> None:
        monkeypatch.setenv("DB_USER", role)
        services.reset()

    as_role("warble_accounts")
    accounts = services.accounts()
    issued = accounts.signup("rolf", "rolf@example.com", "password1", None, "phone")
    accounts.signup("roland", "roland@example.com", "password1", None, "phone")
    second = accounts.login("ROLF", "password1", "laptop")
    me = accounts.require_token(second.token)
    accounts.update_profile(me, {"bio": "as warble_accounts"})
    accounts.revoke(me, issued.session.id)
    passwords = services.passwords()
    passwords.change(me.user_id, me.session_id, "password1", "password2")
    assert passwords.mail_reset("rolf@example.com")
    token = pg.execute("SELECT count(*) FROM password_resets").fetchone()
    assert token is not None and token[0] == 1
    leaving = accounts.signup("leaver", "leaver@example.com", "password1", None, "phone")
    accounts.delete_account(accounts.require_token(leaving.token), "password1")

    as_role("warble_reader")
    reader = services.accounts()
    redis.flushdb()  # nothing cached: every read goes to PostgreSQL
    assert reader.require_token(second.token).user_id == me.user_id
    assert reader.profile(me.user_id)["bio"] == "as warble_accounts"
    search = services.search()
    assert [found.username for found in search.people(me.user_id, "rola", 10, None).items] == [
        "roland"
    ]
    assert search.followers_changed({me.user_id: 0}) == 0  # the copy is already right
    assert reader.flush_last_seen() == 1
    deletions = services.container().stores.deleted_accounts()
    assert deletions.unfinished(0, 10) == [leaving.session.user_id]
    deletions.finished(leaving.session.user_id)
    assert deletions.unfinished(0, 10) == []
    with pytest.raises(errors.InsufficientPrivilege):
        reader.signup("eve", "eve@example.com", "password1", None, "")
    roland = int(reader.profile_by_username("roland")["id"])

    # ReportsFunction: a report, and a moderator's suspend (the column and the sessions).
    as_role("warble_accounts")
    admin, _ = services.accounts().create_admin("warble_mod", "mod@example.com", "password1")
    report, made = services.reports().report(me.user_id, "user", roland, "spam", None)
    assert made and services.reports().mine(me.user_id, 10, None).items == [report]
    case = services.reports().cases(admin, "open", 10, None).items[0]
    assert services.reports().resolve(admin, int(case.id), "suspend", None).status == "closed"
    with pytest.raises(AccountSuspended):
        services.accounts().login("roland", "password1", "phone")

    as_role("warble_operator")
    assert services.accounts().create_admin("warble_admin", "ops@example.com", "password1")[1]
    services.reset()
