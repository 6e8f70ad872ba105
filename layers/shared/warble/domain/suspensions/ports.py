"""What suspensions need of their store (``warble.dal.suspensions``) and of the accounts."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Account:
    """An account as a moderator acts on it, suspended or not."""

    user_id: int
    username: str
    suspended: bool


class SuspensionStore(Protocol):
    """The source of truth: the account's ``suspended_at`` in PostgreSQL (migration 0041)."""

    def account(self, user_id: int) -> Account | None:
        """The account, suspended or not; None when there is none."""
        ...

    def set_suspended(self, user_id: int, suspended: bool) -> bool:
        """Suspend or lift; whether it changed (False: it was so already, or no account)."""
        ...


class SessionEnder(Protocol):
    """The accounts feature's one way to end sessions (``AccountService.end_sessions``): revoked,
    dropped from the cache, their WebSocket connections closed."""

    def end_sessions(
        self, user_id: int, session_ids: Collection[int] | None = None, *, keep: int | None = None
    ) -> list[int]: ...


class ProfileCache(Protocol):
    """The accounts' cached profiles (``{u:<id>}:profile``): dropped, its fill lease voided, so
    the next read sees the account as PostgreSQL has it (a suspended one has no profile)."""

    def invalidate(self, subject: int) -> None: ...
