"""Each user's muted words in PostgreSQL (``muted_words``, migration 0040): one row a user, the
list in order; no row is an empty list. The only module spelling the table."""

from __future__ import annotations

from warble.dal.postgres import Database


class MutedWordRepository:
    """``warble.domain.muted_words.ports.MutedWordStore``."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def words(self, user_id: int) -> list[str]:
        row = self._db.run(
            lambda conn: conn.execute(
                "SELECT words FROM muted_words WHERE user_id = %s", (user_id,)
            ).fetchone()
        )
        return list(row["words"]) if row else []

    def lists(self, user_ids: list[int]) -> dict[int, list[str]]:
        if not user_ids:
            return {}
        rows = self._db.run(
            lambda conn: conn.execute(
                "SELECT user_id, words FROM muted_words WHERE user_id = ANY(%s)", (user_ids,)
            ).fetchall()
        )
        return {row["user_id"]: list(row["words"]) for row in rows}

    def replace(self, user_id: int, words: list[str]) -> None:
        if not words:
            self._db.run(
                lambda conn: conn.execute("DELETE FROM muted_words WHERE user_id = %s", (user_id,))
            )
            return
        self._db.run(
            lambda conn: conn.execute(
                "INSERT INTO muted_words (user_id, words) VALUES (%s, %s)"
                " ON CONFLICT (user_id) DO UPDATE SET words = EXCLUDED.words, updated_at = now()",
                (user_id, words),
            )
        )
