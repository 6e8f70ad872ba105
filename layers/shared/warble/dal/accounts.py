"""PostgreSQL repositories for users and sessions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from warble.dal.postgres import Database
from warble.domain.accounts.ports import DuplicateAccount

if TYPE_CHECKING:
    import psycopg

_USER_COLUMNS = "id, username, email, display_name, bio, created_at"

# Which unique index a violation names, and what that means to a client.
_UNIQUE_INDEXES = {"users_username_ci_key": "username", "users_email_ci_key": "email"}


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
                "SELECT id FROM users WHERE lower(username) = lower(%s)", (username,)
            ).fetchone()
        )
        return None if row is None else int(row["id"])

    def ids_by_usernames(self, usernames: list[str]) -> dict[str, int]:
        """Lower-cased username -> id, for those that exist (mentions); one query."""
        lowered = [name.lower() for name in usernames]
        rows = self._db.run(
            lambda conn: conn.execute(
                "SELECT id, lower(username) AS name FROM users WHERE lower(username) = ANY(%s)",
                (lowered,),
            ).fetchall()
        )
        return {str(row["name"]): int(row["id"]) for row in rows}

    def credentials_by_login(self, login: str) -> dict[str, Any] | None:
        column = "email" if "@" in login else "username"
        return self._db.run(
            lambda conn: conn.execute(
                f"SELECT id, password_hash FROM users WHERE lower({column}) = lower(%s)",
                (login,),
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


class SessionRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def insert(
        self, session_id: int, user_id: int, token_hash: bytes, device: str, expires_at: datetime
    ) -> SessionRow:
        def work(conn: psycopg.Connection[dict[str, Any]]) -> dict[str, Any] | None:
            # Re-runnable after a broken connection, as the users INSERT above.
            return (
                conn.execute(
                    "INSERT INTO sessions (id, user_id, token_hash, device, expires_at)"
                    " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING RETURNING *",
                    (session_id, user_id, token_hash, device, expires_at),
                ).fetchone()
                or conn.execute(
                    "SELECT * FROM sessions WHERE id = %s AND token_hash = %s",
                    (session_id, token_hash),
                ).fetchone()
            )

        row = self._db.run(work)
        assert row is not None
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

    def revoke(self, session_id: int, user_id: int) -> SessionRow | None:
        """Revoke one live session of this user; None when there is no such live session."""
        row = self._db.run(
            lambda conn: conn.execute(
                "UPDATE sessions SET revoked_at = now() WHERE id = %s AND user_id = %s"
                " AND revoked_at IS NULL AND expires_at > now() RETURNING *",
                (session_id, user_id),
            ).fetchone()
        )
        return None if row is None else SessionRow(**row)

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
