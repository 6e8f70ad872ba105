"""Suspensions in PostgreSQL: ``users.suspended_at`` (migration 0041), the one column of the
users table this module owns (``warble.dal.accounts`` reads it to leave suspended accounts
out of every profile read)."""

from __future__ import annotations

from warble.dal.postgres import Database
from warble.domain.suspensions.ports import Account


class SuspensionRepository:
    """``warble.domain.suspensions.ports.SuspensionStore``."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def account(self, user_id: int) -> Account | None:
        row = self._db.run(
            lambda conn: conn.execute(
                "SELECT id, username, suspended_at IS NOT NULL AS suspended"
                " FROM users WHERE id = %s",
                (user_id,),
            ).fetchone()
        )
        if row is None:
            return None
        return Account(int(row["id"]), str(row["username"]), bool(row["suspended"]))

    def set_suspended(self, user_id: int, suspended: bool) -> bool:
        # Only a change writes: a repeated call keeps the first suspension's time.
        statement = (
            "UPDATE users SET suspended_at = now() WHERE id = %s AND suspended_at IS NULL"
            if suspended
            else "UPDATE users SET suspended_at = NULL WHERE id = %s AND suspended_at IS NOT NULL"
        )
        return bool(self._db.run(lambda conn: conn.execute(statement, (user_id,)).rowcount))
