"""What password changes and resets need of their stores (``warble.dal.passwords``), of the mail
(``warble.dal.mail``) and of the accounts feature (ending sessions, the login throttle)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Protocol


class Credentials(Protocol):
    """The password hashes of users (PostgreSQL ``users``)."""

    def password_hash(self, user_id: int) -> str | None: ...
    def recipient(self, email: str) -> tuple[int, str] | None:
        """The account an email address names (compared as logins compare it) and its stored
        address; None when it names none."""
        ...

    def set_password_hash(self, user_id: int, password_hash: str, now: datetime) -> bool:
        """Write a new hash and void the user's outstanding reset tokens, in one transaction;
        False when the user is gone."""
        ...


class ResetTokens(Protocol):
    """Reset tokens, by their SHA-256 hash only (PostgreSQL ``password_resets``)."""

    def issue(
        self,
        user_id: int,
        token_hash: bytes,
        now: datetime,
        expires_at: datetime,
        cap: int,
        window_start: datetime,
    ) -> bool:
        """Store a new token and void the user's older ones, unless ``cap`` tokens were issued
        to the user since ``window_start`` (then nothing is written: False). Racing calls for
        one user are serialized, so they never pass the cap together."""
        ...

    def redeem(self, token_hash: bytes, now: datetime, password_hash: str) -> int | None:
        """Use a live token (not used, voided or expired at ``now``) and set its user's password
        hash, in one transaction; its user, or None for a token that does not work."""
        ...


class Mailer(Protocol):
    """Email to one address (Amazon SES)."""

    def send(self, to: str, subject: str, text: str, html: str) -> None: ...


class SessionEnder(Protocol):
    """The accounts feature's one way to end sessions (``AccountService.end_sessions``): revoked,
    dropped from the cache, their WebSocket connections closed."""

    def end_sessions(
        self, user_id: int, session_ids: Collection[int] | None = None, *, keep: int | None = None
    ) -> list[int]: ...
