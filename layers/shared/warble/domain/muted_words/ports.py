"""What muted words need of their store (``warble.dal.muted_words``)."""

from __future__ import annotations

from typing import Protocol


class MutedWordStore(Protocol):
    """Each user's list, the source of truth (one PostgreSQL row a user)."""

    def words(self, user_id: int) -> list[str]: ...
    def lists(self, user_ids: list[int]) -> dict[int, list[str]]:
        """Those of these users who mute something, with their lists."""
        ...

    def replace(self, user_id: int, words: list[str]) -> None: ...
