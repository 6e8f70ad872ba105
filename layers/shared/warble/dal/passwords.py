"""PostgreSQL stores of password changes and resets: the users' password hashes and the reset
tokens (``password_resets``, migration 0030), behind ``warble.domain.passwords.ports``."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from warble.dal.accounts import UserRepository
from warble.dal.postgres import Database
from warble.domain.logins import login_key

if TYPE_CHECKING:
    import psycopg

# An email as the login rule folds it (warble.dal.accounts); migration 0010's index serves it.
_EMAIL_KEY = 'lower(email COLLATE "C")'


class PasswordRepository:
    """``Credentials`` and ``ResetTokens`` on one database (AccountsFunction's role)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._users = UserRepository(db)

    def password_hash(self, user_id: int) -> str | None:
        return self._users.password_hash(user_id)

    def recipient(self, email: str) -> tuple[int, str] | None:
        row = self._db.run(
            lambda conn: conn.execute(
                f"SELECT id, email FROM users WHERE {_EMAIL_KEY} = %s", (login_key(email),)
            ).fetchone()
        )
        return None if row is None else (int(row["id"]), str(row["email"]))

    def set_password_hash(self, user_id: int, password_hash: str, now: datetime) -> bool:
        def work(conn: psycopg.Connection[dict[str, Any]]) -> bool:
            with conn.transaction():
                changed = conn.execute(
                    "UPDATE users SET password_hash = %s, updated_at = now() WHERE id = %s"
                    " RETURNING id",
                    (password_hash, user_id),
                ).fetchone()
                # A link mailed before the change must not undo it.
                conn.execute(
                    "UPDATE password_resets SET voided_at = %s WHERE user_id = %s"
                    " AND used_at IS NULL AND voided_at IS NULL",
                    (now, user_id),
                )
            return changed is not None

        return self._db.run(work)

    def issue(
        self,
        user_id: int,
        token_hash: bytes,
        now: datetime,
        expires_at: datetime,
        cap: int,
        window_start: datetime,
    ) -> bool:
        def work(conn: psycopg.Connection[dict[str, Any]]) -> bool:
            with conn.transaction():
                # The user's row lock serializes racing requests for one address: the count
                # below and the insert are then one step, and the cap cannot be passed.
                if (
                    conn.execute(
                        "SELECT id FROM users WHERE id = %s FOR NO KEY UPDATE", (user_id,)
                    ).fetchone()
                    is None
                ):
                    return False
                found = conn.execute(
                    "SELECT count(*) AS issued FROM password_resets"
                    " WHERE user_id = %s AND created_at > %s",
                    (user_id, window_start),
                ).fetchone()
                if found is not None and int(found["issued"]) >= cap:
                    return False
                conn.execute(
                    "UPDATE password_resets SET voided_at = %s WHERE user_id = %s"
                    " AND used_at IS NULL AND voided_at IS NULL",
                    (now, user_id),
                )
                conn.execute(
                    "INSERT INTO password_resets (token_hash, user_id, created_at, expires_at)"
                    " VALUES (%s, %s, %s, %s)",
                    (token_hash, user_id, now, expires_at),
                )
            return True

        return self._db.run(work)

    def withdraw(self, token_hash: bytes) -> None:
        def work(conn: psycopg.Connection[dict[str, Any]]) -> None:
            conn.execute(
                "DELETE FROM password_resets WHERE token_hash = %s AND used_at IS NULL",
                (token_hash,),
            )

        self._db.run(work)

    def redeem(self, token_hash: bytes, now: datetime, password_hash: str) -> int | None:
        def work(conn: psycopg.Connection[dict[str, Any]]) -> int | None:
            with conn.transaction():
                used = conn.execute(
                    "UPDATE password_resets SET used_at = %s WHERE token_hash = %s"
                    " AND used_at IS NULL AND voided_at IS NULL AND expires_at > %s"
                    " RETURNING user_id",
                    (now, token_hash, now),
                ).fetchone()
                if used is None:
                    # Database.run re-runs the work after a broken connection, possibly after
                    # this transaction committed: the token then shows as used by this very
                    # hash (bcrypt's salt makes it ours alone), and that is our success.
                    again = conn.execute(
                        "SELECT r.user_id FROM password_resets r JOIN users u ON u.id = r.user_id"
                        " WHERE r.token_hash = %s AND r.used_at IS NOT NULL"
                        " AND u.password_hash = %s",
                        (token_hash, password_hash),
                    ).fetchone()
                    return None if again is None else int(again["user_id"])
                user_id = int(used["user_id"])
                conn.execute(
                    "UPDATE users SET password_hash = %s, updated_at = now() WHERE id = %s",
                    (password_hash, user_id),
                )
            return user_id

        return self._db.run(work)
