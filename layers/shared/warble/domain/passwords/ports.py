"""What password changes and resets need of their stores (``warble.dal.passwords``), of the mail
(``warble.dal.mail``) and of the accounts feature (ending sessions, the login throttle)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any, Protocol


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

    def withdraw(self, token_hash: bytes) -> None:
        """Remove a token that was never mailed: it no longer counts towards the cap (the tokens
        it voided stay voided)."""
        ...

    def redeem(self, token_hash: bytes, now: datetime, password_hash: str) -> int | None:
        """Use a live token (not used, voided or expired at ``now``) and set its user's password
        hash, in one transaction; its user, or None for a token that does not work."""
        ...


class ResetRequests(Protocol):
    """The queue between a reset's request and its lookup and email (Amazon SQS): the request
    path does the same work for every address."""

    def send(self, email: str) -> None: ...


def reset_body(email: str) -> dict[str, Any]:
    """A reset request as its queue's message holds it (JSON)."""
    return {"email": email}


def reset_email_of(body: str) -> str:
    """The address of a reset request's message; ValueError for anything else."""
    import json

    data = json.loads(body)
    email = data.get("email") if isinstance(data, dict) else None
    if not isinstance(email, str) or not email:
        raise ValueError("not a password reset request")
    return email


class Mailer(Protocol):
    """Email to one address (Amazon SES)."""

    def send(self, to: str, subject: str, text: str, html: str) -> None: ...


class SessionEnder(Protocol):
    """The accounts feature's one way to end sessions (``AccountService.end_sessions``): revoked,
    dropped from the cache, their WebSocket connections closed."""

    def end_sessions(
        self, user_id: int, session_ids: Collection[int] | None = None, *, keep: int | None = None
    ) -> list[int]: ...
