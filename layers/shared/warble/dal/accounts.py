"""PostgreSQL repositories for users and sessions.

A suspended account (``users.suspended_at``, written by ``warble.dal.suspensions``) is read
with ``suspended`` set, which the accounts service caches as a profile-less stand-in (every
read of it a 404, its tweets not rendered: docs/moderation.md "Suspensions"), and no session
opens for it."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from warble.dal.postgres import Database
from warble.domain.accounts.ports import DuplicateAccount, UnknownUser
from warble.domain.logins import login_key

if TYPE_CHECKING:
    import psycopg

_USER_COLUMNS = (
    "id, username, email, display_name, bio, created_at, suspended_at IS NOT NULL AS suspended"
)
# A session opens only for an account that is not suspended (migration 0041).
_SHOWN = "suspended_at IS NULL"

# Which unique index a violation names, and what that means to a client.
_UNIQUE_INDEXES = {
    "users_username_ci_key": "username",
    "users_email_ci_key": "email",
    "users_username_key_c": "username",
    "users_email_key_c": "email",
}
# A username or email as the login rule folds it (warble.domain.logins), in SQL; the
# indexes of migration 0010 serve exactly these expressions.
_USERNAME_KEY = 'lower(username COLLATE "C")'
_EMAIL_KEY = 'lower(email COLLATE "C")'


@dataclass(frozen=True)
class SessionRow:
    id: int
    user_id: int
    token_hash: bytes
    device: str
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime
    revoked_at: datetime | None


class UserRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def insert(
        self, user_id: int, username: str, email: str, password_hash: str, display_name: str
    ) -> dict[str, Any]:
        def work(conn: psycopg.Connection[dict[str, Any]]) -> dict[str, Any]:
            from psycopg import errors as pg_errors  # loaded with the connection (dal.postgres)

            try:
                # ON CONFLICT (id): Database.run re-runs the work on a fresh connection when the
                # old one broke, possibly after this INSERT committed; the id is ours (minted
                # before), so finding it means the first attempt landed: answer with that row
                # instead of a false "username taken".
                row = conn.execute(
                    f"INSERT INTO users (id, username, email, password_hash, display_name)"
                    f" VALUES (%s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING"
                    f" RETURNING {_USER_COLUMNS}",
                    (user_id, username, email, password_hash, display_name),
                ).fetchone()
            except pg_errors.UniqueViolation as exc:
                field = _UNIQUE_INDEXES.get(exc.diag.constraint_name or "", "username")
                raise DuplicateAccount(field) from exc
            if row is None:
                row = conn.execute(
                    f"SELECT {_USER_COLUMNS} FROM users WHERE id = %s AND username = %s",
                    (user_id, username),
                ).fetchone()
            assert row is not None
            return row

        return self._db.run(work)

    def get(self, user_id: int) -> dict[str, Any] | None:
        return self._db.run(
            lambda conn: conn.execute(
                f"SELECT {_USER_COLUMNS} FROM users WHERE id = %s", (user_id,)
            ).fetchone()
        )

    def get_many(self, user_ids: list[int]) -> list[dict[str, Any]]:
        if not user_ids:
            return []
        return self._db.run(
            lambda conn: conn.execute(
                f"SELECT {_USER_COLUMNS} FROM users WHERE id = ANY(%s)", (user_ids,)
            ).fetchall()
        )

    def id_by_username(self, username: str) -> int | None:
        row = self._db.run(
            lambda conn: conn.execute(
                f"SELECT id FROM users WHERE {_USERNAME_KEY} = %s", (login_key(username),)
            ).fetchone()
        )
        return None if row is None else int(row["id"])

    def ids_by_usernames(self, usernames: list[str]) -> dict[str, int]:
        """Lower-cased username -> id, for those that exist (mentions); one query."""
        lowered = [login_key(name) for name in usernames]
        rows = self._db.run(
            lambda conn: conn.execute(
                f"SELECT id, {_USERNAME_KEY} AS name FROM users WHERE {_USERNAME_KEY} = ANY(%s)",
                (lowered,),
            ).fetchall()
        )
        return {str(row["name"]): int(row["id"]) for row in rows}

    def credentials_by_login(self, login: str) -> dict[str, Any] | None:
        key = _EMAIL_KEY if "@" in login else _USERNAME_KEY
        return self._db.run(
            lambda conn: conn.execute(
                f"SELECT id, password_hash, suspended_at IS NOT NULL AS suspended"
                f" FROM users WHERE {key} = %s",
                (login_key(login),),
            ).fetchone()
        )

    def update_profile(self, user_id: int, changes: dict[str, str]) -> dict[str, Any] | None:
        allowed = {k: v for k, v in changes.items() if k in ("display_name", "bio")}
        if not allowed:
            return self.get(user_id)
        assignments = ", ".join(f"{column} = %({column})s" for column in allowed)
        return self._db.run(
            lambda conn: conn.execute(
                f"UPDATE users SET {assignments}, updated_at = now() WHERE id = %(id)s"
                f" RETURNING {_USER_COLUMNS}",
                {**allowed, "id": user_id},
            ).fetchone()
        )

    def password_hash(self, user_id: int) -> str | None:
        row = self._db.run(
            lambda conn: conn.execute(
                "SELECT password_hash FROM users WHERE id = %s", (user_id,)
            ).fetchone()
        )
        return None if row is None else str(row["password_hash"])

    def delete(self, user_id: int) -> list[SessionRow] | None:
        def work(conn: psycopg.Connection[dict[str, Any]]) -> list[SessionRow] | None:
            with conn.transaction():
                # The row locked first: a racing profile edit or a second deletion waits, then
                # finds nothing. The sessions go explicitly (not by the cascade) for their token
                # hashes, whose cached entries the caller drops.
                found = conn.execute(
                    "SELECT id FROM users WHERE id = %s FOR UPDATE", (user_id,)
                ).fetchone()
                if found is None:
                    return None
                conn.execute(
                    "INSERT INTO deleted_accounts (id) VALUES (%s) ON CONFLICT (id) DO NOTHING",
                    (user_id,),
                )
                sessions = conn.execute(
                    "DELETE FROM sessions WHERE user_id = %s RETURNING *", (user_id,)
                ).fetchall()
                conn.execute("DELETE FROM search_prefixes WHERE user_id = %s", (user_id,))
                conn.execute("DELETE FROM users WHERE id = %s", (user_id,))
            return [SessionRow(**row) for row in sessions]

        return self._db.run(work)


class SessionRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def insert(
        self, session_id: int, user_id: int, token_hash: bytes, device: str, expires_at: datetime
    ) -> SessionRow:
        def work(conn: psycopg.Connection[dict[str, Any]]) -> dict[str, Any] | None:
            from psycopg import errors as pg_errors

            try:
                return opened(conn)
            except pg_errors.ForeignKeyViolation as exc:  # the account was deleted meanwhile
                raise UnknownUser(user_id) from exc

        def opened(conn: psycopg.Connection[dict[str, Any]]) -> dict[str, Any] | None:
            # Re-runnable after a broken connection, as the users INSERT above. Only for an
            # account that is not suspended, its row share-locked: a suspension racing this
            # login either commits first (no session) or waits for this one, which the
            # suspension's end of every session then ends.
            return (
                conn.execute(
                    "INSERT INTO sessions (id, user_id, token_hash, device, expires_at)"
                    " SELECT %s, %s, %s, %s, %s WHERE EXISTS (SELECT 1 FROM users"
                    f" WHERE id = %s AND {_SHOWN} FOR SHARE)"
                    " ON CONFLICT (id) DO NOTHING RETURNING *",
                    (session_id, user_id, token_hash, device, expires_at, user_id),
                ).fetchone()
                or conn.execute(
                    "SELECT * FROM sessions WHERE id = %s AND token_hash = %s",
                    (session_id, token_hash),
                ).fetchone()
            )

        row = self._db.run(work)
        if row is None:  # deleted or suspended meanwhile
            raise UnknownUser(user_id)
        return SessionRow(**row)

    def by_token_hash(self, token_hash: bytes) -> SessionRow | None:
        row = self._db.run(
            lambda conn: conn.execute(
                "SELECT * FROM sessions WHERE token_hash = %s", (token_hash,)
            ).fetchone()
        )
        return None if row is None else SessionRow(**row)

    def by_id(self, session_id: int) -> SessionRow | None:
        row = self._db.run(
            lambda conn: conn.execute(
                "SELECT * FROM sessions WHERE id = %s", (session_id,)
            ).fetchone()
        )
        return None if row is None else SessionRow(**row)

    def live_for_user(self, user_id: int) -> list[SessionRow]:
        rows = self._db.run(
            lambda conn: conn.execute(
                "SELECT * FROM sessions WHERE user_id = %s AND revoked_at IS NULL"
                " AND expires_at > now() ORDER BY id DESC",
                (user_id,),
            ).fetchall()
        )
        return [SessionRow(**row) for row in rows]

    def end(
        self, user_id: int, session_ids: Collection[int] | None, keep: int | None
    ) -> list[SessionRow]:
        """Revoke live sessions of this user, in one statement: those named (None: every one)
        but ``keep``; the rows it revoked."""
        rows = self._db.run(
            lambda conn: conn.execute(
                "UPDATE sessions SET revoked_at = now() WHERE user_id = %(user)s"
                " AND revoked_at IS NULL AND expires_at > now()"
                " AND (%(ids)s::bigint[] IS NULL OR id = ANY(%(ids)s::bigint[]))"
                " AND (%(keep)s::bigint IS NULL OR id <> %(keep)s::bigint) RETURNING *",
                {
                    "user": user_id,
                    "ids": None if session_ids is None else list(session_ids),
                    "keep": keep,
                },
            ).fetchall()
        )
        return [SessionRow(**row) for row in rows]

    def touch_many(self, seen: Sequence[tuple[int, float]]) -> list[tuple[bytes, int]]:
        """``last_seen_at`` of the live sessions among ``(id, epoch seconds)`` (never moved
        back), one UPDATE; the token hash and user of those no longer live."""
        if not seen:
            return []
        ids = [session_id for session_id, _ in seen]
        at = [when for _, when in seen]

        def write(conn: psycopg.Connection[dict[str, Any]]) -> list[tuple[bytes, int]]:
            live = conn.execute(
                "UPDATE sessions AS s"
                " SET last_seen_at = GREATEST(s.last_seen_at, to_timestamp(v.at))"
                " FROM unnest(%s::bigint[], %s::double precision[]) AS v(id, at)"
                " WHERE s.id = v.id AND s.revoked_at IS NULL AND s.expires_at > now()"
                " RETURNING s.id",
                (ids, at),
            ).fetchall()
            dead = sorted(set(ids) - {row["id"] for row in live})
            if not dead:
                return []
            rows = conn.execute(
                "SELECT token_hash, user_id FROM sessions WHERE id = ANY(%s)", (dead,)
            ).fetchall()
            return [(bytes(row["token_hash"]), int(row["user_id"])) for row in rows]

        return self._db.run(write)


class DeletedAccountsRepository:
    """``warble.domain.deletion.ports.DeletedAccounts``: the outbox of deletions (0035)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def finished(self, user_id: int) -> None:
        self._db.run(
            lambda conn: conn.execute(
                "UPDATE deleted_accounts SET finished_at = now()"
                " WHERE id = %s AND finished_at IS NULL",
                (user_id,),
            )
        )

    def unfinished(self, older_than_seconds: int, limit: int) -> list[int]:
        rows = self._db.run(
            lambda conn: conn.execute(
                "SELECT id FROM deleted_accounts WHERE finished_at IS NULL"
                " AND deleted_at < now() - make_interval(secs => %s)"
                " ORDER BY deleted_at LIMIT %s",
                (older_than_seconds, limit),
            ).fetchall()
        )
        return [int(row["id"]) for row in rows]
